"""A person's operator access to one organization, read in one prepared query.

Every call to the operator endpoint needs three facts: the person still exists
and is active, they are still admin or member of the token's organization
(roles are re-read on every call, never cached), and that organization's id,
slug and name. One query answers all three, and its SQL is built once per
process from the models' tables: compiling an ORM query per call cost more than
running it (docs/development/performance.md). It runs through
`operator_core.sql.fetch`, so on PostgreSQL it is a prepared statement; on a
tool call, as the guard of the call's first read (a CTE of it on PostgreSQL:
mcp_operator/auth.py, `OperatorPrincipal.access_guard`).
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from django.contrib.auth import get_user_model
from django.db import DEFAULT_DB_ALIAS, connection
from django.db.models import Field
from django.db.models.options import Options

from operator_core.sql import fetch, uuid_param
from organizations.models import OPERATOR_ROLES, Membership, Organization


@dataclass(frozen=True)
class OperatorAccess:
    """`organization` is None when the person is not (or no longer) admin or member there."""

    is_active: bool
    organization: Organization | None


def operator_access_or_none(*, user_id: int, organization_id: str | uuid.UUID) -> OperatorAccess | None:
    """The person's access to the organization; None when no such person exists."""
    sql, params = operator_access_statement(user_id=user_id, organization_id=organization_id)
    rows = fetch(sql, params)
    return operator_access_from_row(rows[0] if rows else None)


def operator_access_statement(*, user_id: int, organization_id: str | uuid.UUID) -> tuple[str, list[object]]:
    """The access query and its parameters: at most one row, `ACCESS_COLUMNS`, read by `operator_access_from_row`.

    Sent alone by `operator_access_or_none`, or as the guard of a tool call's first read
    (operator_core/sql.py, `Guard`).
    """
    try:
        parsed = organization_id if isinstance(organization_id, uuid.UUID) else uuid.UUID(str(organization_id))
    except ValueError:
        parsed = None
    return _access_sql(), [uuid_param(parsed) if parsed else None, *OPERATOR_ROLES, user_id]


# The access query's columns, by the names a guard gives them, and when they grant the call.
ACCESS_COLUMNS = ("is_active", "organization_id", "organization_slug", "organization_name")
ACCESS_GRANTED = "guard.is_active AND guard.organization_id IS NOT NULL"


def operator_access_from_row(row: Sequence[object] | None) -> OperatorAccess | None:
    """The access the query's row describes; None when it returned none (no such person)."""
    if row is None:
        return None
    is_active, found_id, slug, name = row
    if found_id is None:
        return OperatorAccess(is_active=bool(is_active), organization=None)
    organization = Organization(id=Organization._meta.pk.to_python(found_id), slug=str(slug), name=str(name))
    organization._state.adding, organization._state.db = False, DEFAULT_DB_ALIAS  # where `fetch` read it
    return OperatorAccess(is_active=bool(is_active), organization=organization)


@functools.cache
def _access_sql() -> str:
    quote = connection.ops.quote_name
    users, memberships, organizations = get_user_model()._meta, Membership._meta, Organization._meta

    def column(meta: Options, field: str) -> str:
        # A concrete field of the model: never a reverse relation, and its column is set.
        return quote(cast(str, cast(Field, meta.get_field(field)).column))

    roles = ", ".join(["%s"] * len(OPERATOR_ROLES))
    user_pk = column(users, users.pk.name)
    return (
        f"SELECT u.{column(users, 'is_active')}, o.{column(organizations, 'id')}, "  # noqa: S608 (quoted identifiers from the models; values are bound)
        f"o.{column(organizations, 'slug')}, o.{column(organizations, 'name')} "
        f"FROM {quote(users.db_table)} u "
        f"LEFT JOIN {quote(memberships.db_table)} m ON m.{column(memberships, 'user')} = u.{user_pk} "
        f"AND m.{column(memberships, 'organization')} = %s AND m.{column(memberships, 'role')} IN ({roles}) "
        f"LEFT JOIN {quote(organizations.db_table)} o ON o.{column(organizations, 'id')} = "
        f"m.{column(memberships, 'organization')} "
        f"WHERE u.{user_pk} = %s"
    )
