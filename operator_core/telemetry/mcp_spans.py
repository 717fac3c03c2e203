"""What an MCP request's span learns from the transport once the envelope is read.

`RequestSpanMiddleware` (operator_core/telemetry/request_spans.py) opens the
span; the transport calls `describe_mcp_exchange` with what the envelope
checks answered, which names the span `{mcp.method.name} {target}` (the tool's
name for `tools/call`) and sets the MCP attributes of docs/operations.md#traces.
Only names, ids and the revision: never an argument nor a result.
"""

from __future__ import annotations

from typing import Any

from operator_core.mcp.envelope import META_CLIENT_INFO, METHOD_TOOLS_CALL, Rejection, Route
from operator_core.telemetry.spans import (
    ATTR_JSONRPC_REQUEST_ID,
    ATTR_MCP_CLIENT_NAME,
    ATTR_MCP_METHOD,
    ATTR_MCP_PROTOCOL_VERSION,
    ATTR_TOOL_NAME,
    bounded,
    recording_span,
)


def describe_mcp_exchange(outcome: Route | Rejection) -> None:
    """Name the current span after the request's method and set its MCP attributes."""
    span = recording_span()
    if span is None:
        return
    attributes: dict[str, str] = {}
    version: str | None
    if isinstance(outcome, Route):
        method: str | None = outcome.method
        request_id, version, params = outcome.request_id, outcome.version, outcome.params
    else:
        method, request_id, version, params = outcome.method, outcome.error.request_id, outcome.version, {}
    if request_id is not None:
        attributes[ATTR_JSONRPC_REQUEST_ID] = bounded(request_id)
    if version is not None:
        attributes[ATTR_MCP_PROTOCOL_VERSION] = bounded(version)
    client_name = _client_name(params)
    if client_name:
        attributes[ATTR_MCP_CLIENT_NAME] = bounded(client_name)
    if method is not None:
        name = attributes[ATTR_MCP_METHOD] = bounded(method)
        tool = params.get("name") if method == METHOD_TOOLS_CALL else None
        if isinstance(tool, str):
            attributes[ATTR_TOOL_NAME] = bounded(tool)
            name = f"{name} {attributes[ATTR_TOOL_NAME]}"
        span.update_name(name)
    span.set_attributes(attributes)


def _client_name(params: dict[str, Any]) -> str:
    meta = params.get("_meta")
    info = meta.get(META_CLIENT_INFO) if isinstance(meta, dict) else None
    name = info.get("name") if isinstance(info, dict) else None
    return name if isinstance(name, str) else ""
