"""`fetch_knowledge`: the text of one processed source, a run of chunks at a time."""

from __future__ import annotations

from typing import Any

from knowledge.models import SourceKind
from knowledge.selectors import processed_source_in_organization
from mcp_operator.tools.payloads import (
    TIMESTAMP,
    UUID_STRING,
    input_schema,
    knowledge_output_schema,
    nullable,
    organization_ref,
    timestamp,
)
from operator_core.errors import InvalidArguments
from operator_core.mcp.tools import Tool, ToolCall

NAME = "fetch_knowledge"
DEFAULT_MAX_CHUNKS = 10
MAX_CHUNKS = 50

INPUT = input_schema(
    {
        "sourceId": {**UUID_STRING, "description": "Id of the source (from list_sources or search_knowledge)."},
        "startChunk": {
            "type": "integer",
            "minimum": 0,
            "default": 0,
            "description": "Index of the first chunk to return (a search hit's chunkIndex, or a previous nextChunk).",
        },
        "maxChunks": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_CHUNKS,
            "default": DEFAULT_MAX_CHUNKS,
            "description": "Most chunks to return.",
        },
    },
    required=["sourceId"],
)

OUTPUT = knowledge_output_schema(
    {
        "source": {
            "type": "object",
            "properties": {
                "id": UUID_STRING,
                "title": {"type": "string"},
                "kind": {"type": "string", "enum": SourceKind.values},
                "origin": {"type": "string"},
                "processedAt": TIMESTAMP,
                "chunkCount": {"type": "integer", "minimum": 0},
            },
            "required": ["id", "title", "kind", "origin", "processedAt", "chunkCount"],
            "additionalProperties": False,
        },
        "chunks": {
            "type": "array",
            "description": "Consecutive chunks in order; about 1,000 characters each.",
            "items": {
                "type": "object",
                "properties": {"index": {"type": "integer", "minimum": 0}, "text": {"type": "string"}},
                "required": ["index", "text"],
                "additionalProperties": False,
            },
        },
        "nextChunk": nullable(
            {"type": "integer"},
            description="Pass as startChunk for the following chunks; null after the last chunk.",
        ),
    }
)


def fetch_knowledge(call: ToolCall) -> dict[str, Any]:
    arguments = call.arguments
    start = arguments["startChunk"]
    source = processed_source_in_organization(
        call.organization, source_id=arguments["sourceId"], start=start, limit=arguments["maxChunks"]
    )
    chunk_count = source["chunk_count"]
    if start > 0 and start >= chunk_count:
        raise InvalidArguments(
            f"startChunk is past the last chunk: this source has {chunk_count} chunks", field="startChunk"
        )
    end = start + len(source["chunks"])
    return {
        "success": True,
        "organization": organization_ref(call.organization),
        "source": {
            "id": str(source["id"]),
            "title": source["title"],
            "kind": source["kind"],
            "origin": source["origin"],
            "processedAt": timestamp(source["processed_at"]),
            "chunkCount": chunk_count,
        },
        "chunks": source["chunks"],
        "nextChunk": end if end < chunk_count else None,
    }


TOOL = Tool(
    name=NAME,
    title="Fetch knowledge",
    description=(
        "Read the extracted text of one processed source of your organization, in order, `maxChunks` chunks "
        "(about 1,000 characters each) from `startChunk`; continue with `nextChunk` until it is null. "
        "Failures come back as success: false with an error."
    ),
    input_schema=INPUT,
    output_schema=OUTPUT,
    handler=fetch_knowledge,
    knowledge=True,
)
