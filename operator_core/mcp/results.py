"""The two shapes of a `CallToolResult` body: success, and a tool's own failure.

A tool's failure is a result, never a JSON-RPC error (MCP 2026-07-28, "Tools",
error handling). Two failure shapes exist (docs/tools.md "Errors"):

- knowledge tools: no `isError`; `structuredContent: {success: false, error}` and
  the same JSON as text, so one outputSchema admits both the success and the
  failure shape;
- every other tool: `isError: true`, a readable text item and
  `structuredContent: {error}`.
"""

import json
from typing import Any

from operator_core.errors import OperatorError, error_payload


def to_json_text(value: Any) -> str:
    """Compact, deterministic JSON for a `text` content item (keys keep their order)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def success_result(structured: dict[str, Any]) -> dict[str, Any]:
    """A successful CallToolResult body: structuredContent plus the same JSON as text."""
    return {"content": [{"type": "text", "text": to_json_text(structured)}], "structuredContent": structured}


def failure_result(error: OperatorError, *, knowledge: bool) -> dict[str, Any]:
    """A failed CallToolResult body, in the knowledge or the ordinary shape."""
    payload = error_payload(error)
    if knowledge:
        structured: dict[str, Any] = {"success": False, "error": payload}
        return {"content": [{"type": "text", "text": to_json_text(structured)}], "structuredContent": structured}
    return {
        "content": [{"type": "text", "text": f"{error.message} ({payload['code']})"}],
        "structuredContent": {"error": payload},
        "isError": True,
    }
