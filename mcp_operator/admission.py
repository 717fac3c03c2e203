"""Admission of one operator tool call: role re-check, organization selectors, limits.

`ToolRegistry` enters `admit_operator_call` before it validates the arguments
and runs the handler. The answers come in this order, each its own tool error
(docs/tools.md#order-of-checks): the membership, re-read for this request
(`forbidden`, which beats every other answer), the organization selectors,
then the rate limit and a concurrency slot held until the answer is sent
(`mcp_operator.limits`). On the usual call (no selector) the membership is
read with the call's first read, after the limits, and a call it refuses
gives its count back; the happy path then costs no query of its own
(mcp_operator/auth.py, docs/development/decisions.md#the-role-read-with-the-calls-first-read).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from mcp_operator.auth import FORBIDDEN_MESSAGE
from mcp_operator.limits import tool_call_limits
from operator_core.errors import (
    Forbidden,
    InvalidArguments,
    InvalidOrganizationSelector,
    OrganizationScopeMismatch,
)
from operator_core.mcp.tools import Tool, ToolCall
from operator_core.mcp.transport import Refusal
from operator_core.sql import guarded_by
from organizations.selectors import organization_by_id_or_none

if TYPE_CHECKING:
    from organizations.models import Organization

SLUG_SELECTOR = "organizationSlug"
ID_SELECTOR = "organizationId"
SELECTORS = (SLUG_SELECTOR, ID_SELECTOR)


@contextlib.contextmanager
def admit_operator_call(principal: Any, tool: Tool, arguments: dict[str, Any]) -> Iterator[ToolCall]:
    """Admit one call of `tool` by `principal` (an `OperatorPrincipal`) or raise an `OperatorError`.

    Yields the `ToolCall` with the token's organization and the arguments
    without the two selectors; the concurrency slot is held until the block ends.
    """
    token_organization = principal.token_organization()
    if principal.access_known or token_organization is None or any(name in arguments for name in SELECTORS):
        # The selectors are judged against the organization as read: the access first, alone.
        organization = _granted_organization(principal)
        require_selected_organization(
            organization, slug=_selector(arguments, SLUG_SELECTOR), organization_id=_selector(arguments, ID_SELECTOR)
        )
        remaining = {name: value for name, value in arguments.items() if name not in SELECTORS}
        with tool_call_limits(user_id=principal.user_id, organization_id=organization.pk, tool_name=tool.name):
            yield ToolCall(principal=principal, organization=organization, arguments=remaining)
        return
    # No selector: the role is checked by the call's first read, its guard (one statement on
    # PostgreSQL), or after the block when it read nothing or failed first. Its answer still
    # beats every other, and a call it refuses counts nothing.
    with tool_call_limits(
        user_id=principal.user_id,
        organization_id=token_organization.pk,
        tool_name=tool.name,
        before_refusal=lambda: _granted_organization(principal),
    ) as counted:
        try:
            with guarded_by(principal.access_guard()):
                yield ToolCall(principal=principal, organization=token_organization, arguments=arguments)
            _granted_organization(principal)
        except Exception:
            try:
                _granted_organization(principal)
            except (Forbidden, Refusal):
                counted.uncount()
                raise
            raise


def _granted_organization(principal: Any) -> Organization:
    """The token's organization, the access read (401 `Refusal`: the person is gone); `forbidden` without the role."""
    organization = principal.confirm()
    if organization is None:
        raise Forbidden(FORBIDDEN_MESSAGE)
    return organization


def require_selected_organization(organization: Organization, *, slug: str | None, organization_id: str | None) -> None:
    """Check the selectors of a call against the token's `organization`.

    Rules (docs/tools.md#selecting-the-organization):

    - neither given: the token's organization;
    - every given selector names the token's organization: admitted;
    - id and slug both given and not naming one same organization ->
      `invalid_organization_selector`; a selector that names no organization
      counts as naming a different one, so the answer never depends on whether
      an unknown slug or id exists;
    - otherwise (one selector, or both naming the same other organization) ->
      `organization_scope_mismatch`, whether that organization exists or not.

    Only the both-given, neither-is-the-token's case reads the database (one query).
    """
    slug_is_token = slug is None or slug == organization.slug
    id_is_token = organization_id is None or _parse_uuid(organization_id) == organization.pk
    if slug_is_token and id_is_token:
        return
    if slug is not None and organization_id is not None:
        if not slug_is_token and not id_is_token:
            named = _organization_by_id(organization_id)
            if named is not None and named.slug == slug:
                raise OrganizationScopeMismatch(
                    "This token is bound to another organization; authorize again to work in this one."
                )
        raise InvalidOrganizationSelector("organizationId and organizationSlug name different organizations.")
    raise OrganizationScopeMismatch("This token is bound to another organization; authorize again to work in this one.")


def _selector(arguments: dict[str, Any], name: str) -> str | None:
    if name not in arguments:
        return None
    value = arguments[name]
    if not isinstance(value, str):
        raise InvalidArguments(f"{name} must be of type string", field=name)
    return value


def _parse_uuid(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


def _organization_by_id(value: str) -> Organization | None:
    parsed = _parse_uuid(value)
    return organization_by_id_or_none(parsed) if parsed is not None else None
