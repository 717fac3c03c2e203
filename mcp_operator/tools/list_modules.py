"""`list_modules`: the organization's modules, newest `updatedAt` first, a page at a time."""

from __future__ import annotations

from typing import Any

from knowledge.models import ModuleStatus
from knowledge.selectors import modules_for_organization
from mcp_operator.tools.cursors import paged_listing
from mcp_operator.tools.payloads import (
    LISTING_QUERY_MAX_CHARACTERS,
    NEXT_CURSOR,
    TIMESTAMP,
    UUID_STRING,
    input_schema,
    listing_page_properties,
    output_schema,
    timestamp,
)
from operator_core.mcp.tools import Tool, ToolCall

NAME = "list_modules"

INPUT = input_schema(
    {
        "query": {
            "type": "string",
            "maxLength": LISTING_QUERY_MAX_CHARACTERS,
            "description": "Only modules whose title or summary contains this text (case-insensitive).",
        },
        "status": {"type": "string", "enum": ModuleStatus.values, "description": "Only modules in this status."},
        **listing_page_properties("modules"),
    }
)

MODULE_SUMMARY = {
    "type": "object",
    "properties": {
        "id": UUID_STRING,
        "title": {"type": "string"},
        "summary": {"type": "string"},
        "status": {"type": "string", "enum": ModuleStatus.values},
        "sectionCount": {"type": "integer", "minimum": 0},
        "sourceIds": {
            "type": "array",
            "items": UUID_STRING,
            "description": "Processed sources it was built from, by title.",
        },
        "updatedAt": TIMESTAMP,
    },
    "required": ["id", "title", "summary", "status", "sectionCount", "sourceIds", "updatedAt"],
    "additionalProperties": False,
}

OUTPUT = output_schema({"modules": {"type": "array", "items": MODULE_SUMMARY}, "nextCursor": NEXT_CURSOR})


def list_modules(call: ToolCall) -> dict[str, Any]:
    arguments = call.arguments
    filters = {"query": arguments.get("query") or None, "status": arguments.get("status")}
    return paged_listing(
        call,
        tool_name=NAME,
        filters=filters,
        rows_after=lambda after, count: modules_for_organization(
            call.organization, limit=count, query=filters["query"], status=filters["status"], after=after
        ),
        moment_field="updated_at",
        items_key="modules",
        summarize=_summaries,
    )


def _summaries(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "id": str(row["id"]),
            "title": row["title"],
            "summary": row["summary"],
            "status": row["status"],
            "sectionCount": row["section_count"],
            "sourceIds": [str(source_id) for source_id in row["source_ids"]],
            "updatedAt": timestamp(row["updated_at"]),
        }
        for row in rows
    ]


TOOL = Tool(
    name=NAME,
    title="List modules",
    description=(
        "List the learning modules of your organization, newest update first, up to `limit` per page. "
        "Filter by text in the title or summary (`query`) and by `status`; pass `nextCursor` back as "
        "`cursor` (with the same filters) for the next page. Use get_module for a module's sections."
    ),
    input_schema=INPUT,
    output_schema=OUTPUT,
    handler=list_modules,
)
