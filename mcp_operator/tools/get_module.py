"""`get_module`: one module of the organization with its sections and sources."""

from __future__ import annotations

from typing import Any

from knowledge.models import ModuleStatus
from knowledge.selectors import module_in_organization
from mcp_operator.tools.payloads import TIMESTAMP, UUID_STRING, input_schema, organization_ref, output_schema, timestamp
from operator_core.mcp.tools import Tool, ToolCall

NAME = "get_module"

INPUT = input_schema(
    {"moduleId": {**UUID_STRING, "description": "Id of the module, as listed by list_modules."}},
    required=["moduleId"],
)

MODULE_DETAIL = {
    "type": "object",
    "properties": {
        "id": UUID_STRING,
        "title": {"type": "string"},
        "summary": {"type": "string"},
        "status": {"type": "string", "enum": ModuleStatus.values},
        "createdAt": TIMESTAMP,
        "updatedAt": TIMESTAMP,
        "sections": {
            "type": "array",
            "description": "In order of `position`.",
            "items": {
                "type": "object",
                "properties": {
                    "position": {"type": "integer", "minimum": 0},
                    "title": {"type": "string"},
                    "body": {"type": "string", "description": "Markdown."},
                },
                "required": ["position", "title", "body"],
                "additionalProperties": False,
            },
        },
        "sources": {
            "type": "array",
            "description": "Processed sources the module was built from, by title.",
            "items": {
                "type": "object",
                "properties": {"id": UUID_STRING, "title": {"type": "string"}},
                "required": ["id", "title"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["id", "title", "summary", "status", "createdAt", "updatedAt", "sections", "sources"],
    "additionalProperties": False,
}

OUTPUT = output_schema({"module": MODULE_DETAIL})


def get_module(call: ToolCall) -> dict[str, Any]:
    module = module_in_organization(call.organization, module_id=call.arguments["moduleId"])
    return {"organization": organization_ref(call.organization), "module": _detail(module)}


def _detail(module: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": str(module["id"]),
        "title": module["title"],
        "summary": module["summary"],
        "status": module["status"],
        "createdAt": timestamp(module["created_at"]),
        "updatedAt": timestamp(module["updated_at"]),
        "sections": module["sections"],
        "sources": [{"id": str(source["id"]), "title": source["title"]} for source in module["sources"]],
    }


TOOL = Tool(
    name=NAME,
    title="Get a module",
    description=(
        "Read one module of your organization: title, summary, status, every section (Markdown body, in "
        "order) and the sources it was built from. `moduleId` comes from list_modules."
    ),
    input_schema=INPUT,
    output_schema=OUTPUT,
    handler=get_module,
)
