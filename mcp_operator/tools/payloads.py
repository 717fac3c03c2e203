"""Shapes shared by the five operator tools: selectors, organization, timestamps, errors.

camelCase lives here and in the tool modules only (docs/development/architecture.md).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from operator_core.errors import ErrorCode
from operator_core.mcp.tools import SCHEMA_DIALECT, object_schema
from organizations.payloads import organization_summary

if TYPE_CHECKING:
    from organizations.models import Organization

UUID_PATTERN = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"

# Every tool accepts both: docs/tools.md "Selecting the organization".
SELECTOR_PROPERTIES: dict[str, Any] = {
    "organizationSlug": {
        "type": "string",
        "description": "Optional. Slug of the organization; must be the token's organization.",
    },
    "organizationId": {
        "type": "string",
        "description": "Optional. Id of the organization; must be the token's organization.",
    },
}

UUID_STRING: dict[str, Any] = {"type": "string", "format": "uuid", "pattern": UUID_PATTERN}
TIMESTAMP: dict[str, Any] = {"type": "string", "format": "date-time", "description": "ISO 8601, UTC, ending in Z."}


def nullable(schema: dict[str, Any], *, description: str) -> dict[str, Any]:
    """`schema` or null, written as `anyOf` with a `{"type": "null"}` branch (docs/tools.md "Null values").

    Never a `type` array such as `["string", "null"]`: some hosts convert tool
    schemas to a subset without type arrays, and MCP Inspector flags them as not
    portable. `anyOf` with a null branch is valid JSON Schema 2020-12 and the form
    pydantic, and so the MCP Python SDK, generates for optional values.
    """
    return {"anyOf": [schema, {"type": "null"}], "description": description}


NEXT_CURSOR = nullable(
    {"type": "string"},
    description="Pass as `cursor` with the same filters for the next page; null on the last page.",
)

ORGANIZATION: dict[str, Any] = {
    "type": "object",
    "description": "The organization the call ran in (the token's).",
    "properties": {"id": UUID_STRING, "slug": {"type": "string"}, "name": {"type": "string"}},
    "required": ["id", "slug", "name"],
    "additionalProperties": False,
}

ERROR: dict[str, Any] = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "enum": [str(code) for code in ErrorCode]},
        "message": {"type": "string"},
        "field": {"type": "string", "description": "With invalid_arguments: the argument at fault."},
        "retryAfterSeconds": {
            "type": "integer",
            "minimum": 1,
            "description": "With rate_limited and concurrency_limited: when to try again.",
        },
    },
    "required": ["code", "message"],
}


# The paging contract shared by the listing tools (docs/tools.md "Pagination").
LISTING_DEFAULT_LIMIT = 25
LISTING_MAX_LIMIT = 100
LISTING_QUERY_MAX_CHARACTERS = 200


def listing_page_properties(noun: str) -> dict[str, Any]:
    """The `limit` and `cursor` arguments of a listing tool returning `noun` ("modules", ...)."""
    return {
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": LISTING_MAX_LIMIT,
            "default": LISTING_DEFAULT_LIMIT,
            "description": f"Most {noun} to return.",
        },
        "cursor": {"type": "string", "description": "`nextCursor` of the previous page, with the same filters."},
    }


def input_schema(properties: dict[str, Any], *, required: list[str] | None = None) -> dict[str, Any]:
    """A tool's inputSchema: its own properties plus the two selectors, nothing else accepted."""
    return object_schema({**properties, **SELECTOR_PROPERTIES}, required=required)


def output_schema(properties: dict[str, Any]) -> dict[str, Any]:
    """outputSchema of a non-knowledge tool: `organization` plus `properties`, all required."""
    return object_schema({"organization": ORGANIZATION, **properties}, required=["organization", *properties])


def knowledge_output_schema(properties: dict[str, Any]) -> dict[str, Any]:
    """outputSchema of a knowledge tool: the success shape or `{success: false, error}`.

    MCP wants an object at the top level, so the alternatives sit under `anyOf`.
    """
    success = {
        "type": "object",
        "properties": {"success": {"const": True}, "organization": ORGANIZATION, **properties},
        "required": ["success", "organization", *properties],
        "additionalProperties": False,
    }
    failure = {
        "type": "object",
        "properties": {"success": {"const": False}, "error": ERROR},
        "required": ["success", "error"],
        "additionalProperties": False,
    }
    return {"$schema": SCHEMA_DIALECT, "type": "object", "anyOf": [success, failure]}


def organization_ref(organization: Organization) -> dict[str, str]:
    return organization_summary(organization)


def timestamp(moment: datetime | None) -> str | None:
    """ISO 8601 in UTC with a `Z`, to the millisecond: `2026-07-28T09:30:00.000Z`."""
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
