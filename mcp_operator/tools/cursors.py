"""Opaque, tamper-evident page cursors for the listing tools (product decisions §3).

A cursor is signed with the project's secret key (Django signing, own salt) and
carries the tool, the organization id, the filters of the call that issued it and
the keyset position of the last row returned. Reading it back with another tool,
organization or filters, or after any change to its bytes, is `invalid_arguments`
with field `cursor`. The page size is not bound: a client may change `limit`
between pages. Cursors do not expire; keyset positions stay meaningful while
rows change (docs/tools.md "Pagination").
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.core import signing
from django.db.models import QuerySet

from operator_site.errors import InvalidArguments

if TYPE_CHECKING:
    from organizations.models import Organization
    from organizations.selectors import KeysetPosition

_SALT = "mcp_operator.tools.cursors"
CURSOR_FIELD = "cursor"


def issue_cursor(*, tool_name: str, organization: Organization, filters: dict[str, Any], position: list[str]) -> str:
    """Sign the position after which the next page starts."""
    payload = {"t": tool_name, "o": str(organization.id), "f": filters, "p": position}
    return signing.dumps(payload, salt=_SALT, compress=True)


def read_cursor(cursor: str, *, tool_name: str, organization: Organization, filters: dict[str, Any]) -> KeysetPosition:
    """The position signed into `cursor`; raises `InvalidArguments(field="cursor")` unless it is
    intact and was issued by `tool_name` for `organization` and exactly these `filters`."""
    try:
        payload = signing.loads(cursor, salt=_SALT)
    except signing.BadSignature:
        raise InvalidArguments("cursor is not a cursor this server issued", field=CURSOR_FIELD) from None
    if (
        not isinstance(payload, dict)
        or payload.get("t") != tool_name
        or payload.get("o") != str(organization.id)
        or payload.get("f") != filters
        or not isinstance(payload.get("p"), list)
    ):
        raise InvalidArguments("cursor was issued for other arguments; start again without it", field=CURSOR_FIELD)
    moment, row_id = payload["p"]
    return datetime.fromisoformat(moment), uuid.UUID(row_id)


def keyset_position(moment: datetime, row_id: object) -> list[str]:
    """The position of a row in a (-moment, -id) ordering, as stored in a cursor."""
    return [moment.isoformat(), str(row_id)]


def cut_page(
    rows: QuerySet[Any],
    *,
    limit: int,
    moment_field: str,
    tool_name: str,
    organization: Organization,
    filters: dict[str, Any],
) -> tuple[list[Any], str | None]:
    """The first `limit` rows, and the cursor of the page after them (None at the end).

    Reads one row more than it returns, to know whether another page exists
    without a COUNT.
    """
    page = list(rows[: limit + 1])
    if len(page) <= limit:
        return page, None
    page = page[:limit]
    last = page[-1]
    position = keyset_position(getattr(last, moment_field), last.id)
    return page, issue_cursor(tool_name=tool_name, organization=organization, filters=filters, position=position)
