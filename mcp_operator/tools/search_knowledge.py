"""`search_knowledge`: full-text search over the chunks of the organization's processed sources."""

from __future__ import annotations

from typing import Any

from knowledge.selectors import search_chunks
from mcp_operator.tools.payloads import UUID_STRING, input_schema, knowledge_output_schema, organization_ref
from operator_core.errors import InvalidArguments
from operator_core.mcp.tools import Tool, ToolCall

NAME = "search_knowledge"
DEFAULT_LIMIT = 10
MAX_LIMIT = 50
MAX_QUERY_CHARACTERS = 500
MAX_SOURCE_IDS = 50

INPUT = input_schema(
    {
        "query": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_QUERY_CHARACTERS,
            "description": "Words to search for; a passage matches when it has all of them (common words ignored).",
        },
        "sourceIds": {
            "type": "array",
            "items": UUID_STRING,
            "maxItems": MAX_SOURCE_IDS,
            "description": (
                "Only search these sources (ids from list_sources); ids not in your organization match nothing."
            ),
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_LIMIT,
            "default": DEFAULT_LIMIT,
            "description": "Most results to return.",
        },
    },
    required=["query"],
)

HIT = {
    "type": "object",
    "properties": {
        "sourceId": UUID_STRING,
        "sourceTitle": {"type": "string"},
        "chunkIndex": {"type": "integer", "minimum": 0, "description": "Pass as startChunk to fetch_knowledge."},
        "snippet": {"type": "string", "description": "The matching passage, shortened."},
        "score": {"type": "number", "description": "Relevance; higher is better. Comparable within one answer only."},
    },
    "required": ["sourceId", "sourceTitle", "chunkIndex", "snippet", "score"],
    "additionalProperties": False,
}

OUTPUT = knowledge_output_schema(
    {"query": {"type": "string"}, "results": {"type": "array", "items": HIT, "description": "Best first."}}
)


def search_knowledge(call: ToolCall) -> dict[str, Any]:
    arguments = call.arguments
    query = arguments["query"]
    if not query.strip():
        raise InvalidArguments("query must contain at least one word", field="query")
    source_ids = arguments.get("sourceIds")
    if source_ids is not None:
        # dict.fromkeys: drop repeats, keep the caller's order
        source_ids = list(dict.fromkeys(source_id.lower() for source_id in source_ids))
    hits = search_chunks(call.organization, query=query, source_ids=source_ids, limit=arguments["limit"])
    return {
        "success": True,
        "organization": organization_ref(call.organization),
        "query": query,
        "results": [
            {
                "sourceId": str(hit.source_id),
                "sourceTitle": hit.source_title,
                "chunkIndex": hit.chunk_index,
                "snippet": hit.snippet,
                "score": hit.score,
            }
            for hit in hits
        ],
    }


TOOL = Tool(
    name=NAME,
    title="Search knowledge",
    description=(
        "Full-text search over the processed knowledge sources of your organization. Returns the best-matching "
        "passages (source, chunk index, snippet, score), best first; the same query on the same data always "
        "returns the same list. Narrow it to some sources with `sourceIds`; read around a hit with "
        "fetch_knowledge (sourceId, startChunk=chunkIndex). Failures come back as success: false with an error."
    ),
    input_schema=INPUT,
    output_schema=OUTPUT,
    handler=search_knowledge,
    knowledge=True,
)
