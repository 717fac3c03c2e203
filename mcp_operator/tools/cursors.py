"""Pages of the listing tools and their opaque, tamper-evident cursors (docs/development/decisions.md#cursors).

`paged_listing` is the one paging routine of `list_modules` and `list_sources`.

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
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.core import signing

from mcp_operator.tools.payloads import organization_ref
from operator_core.errors import InvalidArguments

if TYPE_CHECKING:
    from knowledge.selectors import KeysetPosition
    from operator_core.mcp.tools import ToolCall
    from organizations.models import Organization

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


def paged_listing(
    call: ToolCall,
    *,
    tool_name: str,
    filters: dict[str, Any],
    rows_after: Callable[[KeysetPosition | None, int], list[dict[str, Any]]],
    moment_field: str,
    items_key: str,
    summarize: Callable[[list[dict[str, Any]]], list[dict[str, Any]]],
) -> dict[str, Any]:
    """One page of a listing tool: resume after `cursor`, cut `limit` rows, issue the next cursor.

    `rows_after(position, count)` returns the selector's first `count` rows (dicts)
    after that keyset position (from the start for None), ordered by
    (-moment_field, -id). One row more than the page is read, to know whether
    another page exists without a COUNT.
    `summarize` turns the page's rows into the tool's items, all at once.
    """
    organization, arguments = call.organization, call.arguments
    after = None
    if "cursor" in arguments:
        after = read_cursor(arguments["cursor"], tool_name=tool_name, organization=organization, filters=filters)
    limit = arguments["limit"]
    page = rows_after(after, limit + 1)
    next_cursor = None
    if len(page) > limit:
        page = page[:limit]
        last = page[-1]
        position = keyset_position(last[moment_field], last["id"])
        next_cursor = issue_cursor(tool_name=tool_name, organization=organization, filters=filters, position=position)
    return {
        "organization": organization_ref(organization),
        items_key: summarize(page),
        "nextCursor": next_cursor,
    }
