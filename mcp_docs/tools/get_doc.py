"""`get_doc`: one documentation page, or one section of it, as Markdown."""

from mcp_docs.selectors import docs_library
from operator_core.mcp.tools import Tool, ToolCall, object_schema

INPUT = object_schema(
    {
        "path": {
            "type": "string",
            "minLength": 1,
            "maxLength": 100,
            "description": "Page, e.g. 'authentication.md' (as returned by search_docs; 'index.md' lists every page).",
        },
        "section": {
            "type": "string",
            "minLength": 1,
            "maxLength": 200,
            "description": "Anchor of one section (as returned by search_docs); omit for the whole page.",
        },
    },
    required=["path"],
)

OUTPUT = object_schema(
    {
        "path": {"type": "string"},
        "title": {"type": "string", "description": "Title of the page, or of the section when one was asked for."},
        "section": {"type": "string"},
        "markdown": {"type": "string"},
        "sections": {
            "type": "array",
            "description": "Every section of the page, in order: anchors to pass as 'section'.",
            "items": {
                "type": "object",
                "properties": {
                    "section": {"type": "string"},
                    "title": {"type": "string"},
                    "level": {"type": "integer", "minimum": 1, "maximum": 3},
                },
                "required": ["section", "title", "level"],
                "additionalProperties": False,
            },
        },
    },
    required=["path", "title", "markdown", "sections"],
)


def get_doc(call: ToolCall) -> dict[str, object]:
    page = docs_library().page(call.arguments["path"])
    outline = [{"section": item.anchor, "title": item.title, "level": item.level} for item in page.sections]
    anchor = call.arguments.get("section")
    if anchor is None:
        return {"path": page.path, "title": page.title, "markdown": page.markdown, "sections": outline}
    section, markdown = page.section_markdown(anchor)
    return {"path": page.path, "title": section.title, "section": anchor, "markdown": markdown, "sections": outline}


TOOL = Tool(
    name="get_doc",
    title="Read a documentation page",
    description=(
        "Read one page of the Service Operator documentation as Markdown, or one section of it. "
        "Unknown pages and sections answer the tool error not_found."
    ),
    input_schema=INPUT,
    output_schema=OUTPUT,
    handler=get_doc,
)
