"""`search_docs`: the documentation sections that best match a query, best first."""

from mcp_docs.selectors import docs_library
from operator_core.mcp.tools import Tool, ToolCall, object_schema

DEFAULT_LIMIT = 5
MAX_LIMIT = 20
MAX_QUERY_CHARACTERS = 200

INPUT = object_schema(
    {
        "query": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_QUERY_CHARACTERS,
            "description": "Words to look for, e.g. 'rate limit' or 'refresh token'.",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_LIMIT,
            "default": DEFAULT_LIMIT,
            "description": "Most sections to return.",
        },
    },
    required=["query"],
)

HIT = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Page, e.g. 'authentication.md'; pass it to get_doc."},
        "section": {"type": "string", "description": "Section anchor; pass it to get_doc as 'section'."},
        "title": {"type": "string"},
        "snippet": {"type": "string"},
        "score": {"type": "number"},
        "uri": {"type": "string", "description": "docs://<path>#<section>"},
    },
    "required": ["path", "section", "title", "snippet", "score", "uri"],
    "additionalProperties": False,
}

OUTPUT = object_schema(
    {
        "query": {"type": "string"},
        "results": {"type": "array", "items": HIT},
    },
    required=["query", "results"],
)


def search_docs(call: ToolCall) -> dict[str, object]:
    query = call.arguments["query"]
    hits = docs_library().search(query, limit=call.arguments.get("limit", DEFAULT_LIMIT))
    return {
        "query": query,
        "results": [
            {
                "path": hit.path,
                "section": hit.section,
                "title": hit.title,
                "snippet": hit.snippet,
                "score": hit.score,
                "uri": hit.uri,
            }
            for hit in hits
        ],
    }


TOOL = Tool(
    name="search_docs",
    title="Search the documentation",
    description=(
        "Search the Service Operator documentation. Returns the best matching sections, best first, "
        "each with its page path and section anchor for get_doc. The same query always gives the same list."
    ),
    input_schema=INPUT,
    output_schema=OUTPUT,
    handler=search_docs,
)
