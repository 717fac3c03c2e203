"""`list_sources`: the organization's processed sources, newest `processedAt` first, a page at a time."""

from __future__ import annotations

from typing import Any

from knowledge.models import SourceKind
from knowledge.selectors import processed_sources_for_organization
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

NAME = "list_sources"

INPUT = input_schema(
    {
        "query": {
            "type": "string",
            "maxLength": LISTING_QUERY_MAX_CHARACTERS,
            "description": "Only sources whose title or origin contains this text (case-insensitive).",
        },
        "kind": {"type": "string", "enum": SourceKind.values, "description": "Only sources of this kind."},
        **listing_page_properties("sources"),
    }
)

SOURCE_SUMMARY = {
    "type": "object",
    "properties": {
        "id": UUID_STRING,
        "title": {"type": "string"},
        "kind": {"type": "string", "enum": SourceKind.values},
        "origin": {"type": "string", "description": "File name or URL; empty for pasted text."},
        "processedAt": TIMESTAMP,
        "chunkCount": {"type": "integer", "minimum": 0},
        "characters": {"type": "integer", "minimum": 0, "description": "Length of the extracted text."},
    },
    "required": ["id", "title", "kind", "origin", "processedAt", "chunkCount", "characters"],
    "additionalProperties": False,
}

OUTPUT = output_schema({"sources": {"type": "array", "items": SOURCE_SUMMARY}, "nextCursor": NEXT_CURSOR})


def list_sources(call: ToolCall) -> dict[str, Any]:
    arguments = call.arguments
    filters = {"query": arguments.get("query") or None, "kind": arguments.get("kind")}
    return paged_listing(
        call,
        tool_name=NAME,
        filters=filters,
        rows_after=lambda after, count: processed_sources_for_organization(
            call.organization, limit=count, query=filters["query"], kind=filters["kind"], after=after
        ),
        moment_field="processed_at",
        items_key="sources",
        summarize=_summaries,
    )


def _summaries(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "id": str(row["id"]),
            "title": row["title"],
            "kind": row["kind"],
            "origin": row["origin"],
            "processedAt": timestamp(row["processed_at"]),
            "chunkCount": row["chunk_count"],
            "characters": row["characters"],
        }
        for row in rows
    ]


TOOL = Tool(
    name=NAME,
    title="List sources",
    description=(
        "List the processed knowledge sources of your organization (files, URLs, pasted text), newest first, "
        "up to `limit` per page. Filter by text in the title or origin (`query`) and by `kind`; pass "
        "`nextCursor` back as `cursor` (with the same filters) for the next page. Read a source's text with "
        "fetch_knowledge, or search across sources with search_knowledge."
    ),
    input_schema=INPUT,
    output_schema=OUTPUT,
    handler=list_sources,
)
