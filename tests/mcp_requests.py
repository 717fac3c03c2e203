"""Building MCP 2026-07-28 requests in tests: the envelope, the routing headers, one POST.

The one request builder of the suite, for both endpoints (`path=`), so that every
test speaks exactly what a conforming client sends, and each failure test changes
one thing only (`omit=` a header, `headers=` an override, `meta=` another envelope).
"""

import json
from typing import Any

from django.test import Client

from operator_core.mcp.envelope import META_PROTOCOL_VERSION

PROTOCOL_VERSION = "2026-07-28"
OPERATOR_PATH = "/api/mcp/operator"
DOCS_PATH = "/api/mcp/docs"
CLIENT_META: dict[str, Any] = {
    META_PROTOCOL_VERSION: PROTOCOL_VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "1.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
_NAME_KEYS = {"tools/call": "name", "resources/read": "uri"}


def envelope(
    method: str,
    params: dict[str, Any] | None = None,
    *,
    request_id: Any = 1,
    meta: dict[str, Any] | None = CLIENT_META,
) -> dict[str, Any]:
    """A JSON-RPC request with the `_meta` envelope (`request_id=None`: a notification; `meta=None`: no `_meta`)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": dict(params or {})}
    if meta is not None:
        message["params"]["_meta"] = meta
    if request_id is not None:
        message["id"] = request_id
    return message


def legacy_initialize(*, version: str = "2025-11-25", request_id: Any = 1) -> dict[str, Any]:
    """The 2025-style `initialize` handshake, which names its revision in `params.protocolVersion`."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "legacy", "version": "1"}},
    }


def routing_headers(message: dict[str, Any]) -> dict[str, str]:
    """The headers a conforming client derives from the message."""
    headers = {
        "Accept": "application/json, text/event-stream",
        "Mcp-Method": message["method"],
        "MCP-Protocol-Version": PROTOCOL_VERSION,
    }
    name_key = _NAME_KEYS.get(message["method"])
    if name_key is not None:
        headers["Mcp-Name"] = message["params"][name_key]
    return headers


def post_mcp(
    client: Client,
    message: Any,
    *,
    path: str = OPERATOR_PATH,
    token: str | None = None,
    headers: dict[str, str] | None = None,
    omit: tuple[str, ...] = (),
    body: str | bytes | None = None,
    content_type: str = "application/json",
):
    """POST `message` with its routing headers, a bearer `token`, overrides and omissions."""
    sent = routing_headers(message) if isinstance(message, dict) and "method" in message else {}
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    sent.update(headers or {})
    for name in omit:
        sent.pop(name, None)
    data = body if body is not None else json.dumps(message)
    return client.post(path, data=data, content_type=content_type, headers=sent)
