"""The attribute names of our spans, and the one helper that notes what the code learns on the way.

A hook costs one call and one check when tracing is off (`operator_core.telemetry.tracing.is_on`).
Values are ids, names and codes only, cut to a bounded length: never a token,
a secret, a code sent by email, an argument's text or a result (docs/operations.md#traces).
"""

from __future__ import annotations

from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span

from operator_core.telemetry.tracing import is_on

# MCP semantic conventions (docs/operations.md#traces lists them all).
ATTR_MCP_METHOD = "mcp.method.name"
ATTR_MCP_PROTOCOL_VERSION = "mcp.protocol.version"
ATTR_MCP_CLIENT_NAME = "mcp.client.name"
ATTR_TOOL_NAME = "gen_ai.tool.name"
ATTR_JSONRPC_REQUEST_ID = "jsonrpc.request.id"
ATTR_ERROR_TYPE = "error.type"
# HTTP semantic conventions.
ATTR_HTTP_METHOD = "http.request.method"
ATTR_HTTP_ROUTE = "http.route"
ATTR_HTTP_STATUS = "http.response.status_code"
# Ours.
ATTR_ORGANIZATION_ID = "operator.organization.id"
ATTR_OUTCOME = "operator.outcome"
ATTR_OAUTH_EVENT = "operator.oauth.event"
ATTR_GRANT_TYPE = "operator.oauth.grant_type"

ERROR_TYPE_TOOL = "tool_error"
# Client-chosen strings (a method, a tool's or a client's name, a request id) are kept this short.
MAX_VALUE_LENGTH = 128


def recording_span() -> Span | None:
    """The current request's span when this process traces and it records; None otherwise."""
    if not is_on():
        return None
    span = trace.get_current_span()
    return span if span.is_recording() else None


def note_error_type(error_type: str) -> None:
    """Set `error.type` on the current span: a JSON-RPC code as a string, `tool_error`, an OAuth error."""
    span = recording_span()
    if span is not None:
        span.set_attribute(ATTR_ERROR_TYPE, bounded(error_type))


def bounded(value: Any) -> str:
    return str(value)[:MAX_VALUE_LENGTH]
