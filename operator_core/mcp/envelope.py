"""The envelope checks of one MCP 2026-07-28 POST, as pure functions over plain values.

Nothing here touches Django's request, the settings or the database: the HTTP
shell (`operator_core.mcp.transport`) reads the request, and these functions
answer with a `Route` to dispatch or a `Rejection` to send, as data. They
check, in the order docs/transport.md#order-of-checks promises clients: the
HTTP method, content type and declared size; the body (`operator_core.json_bodies`,
one JSON-RPC request, no batch); the protocol revision and client capabilities
in `params._meta`; the `Mcp-Method`, `Mcp-Name` and `MCP-Protocol-Version`
headers. Why this order: docs/development/decisions.md#order-of-checks.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from operator_core.json_bodies import MalformedJson, parse_json_body
from operator_core.mcp.jsonrpc import (
    JSON_CONTENT_TYPE,
    JSONRPC_HEADER_MISMATCH,
    JSONRPC_INVALID_PARAMS,
    JSONRPC_INVALID_REQUEST,
    JSONRPC_PARSE_ERROR,
    JSONRPC_UNSUPPORTED_PROTOCOL_VERSION,
    JSONRPC_VERSION,
    JsonRpcError,
)

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"

# The hosts whose `clientInfo.name` we know, and their section of docs/connecting.md.
_HOST_SECTIONS = {
    "claude-code": "claude-code",
    "codex-mcp-client": "codex",
    "gemini-cli-mcp-client": "gemini-cli",
    "opencode": "opencode",
    "mcp-remote": "mcp-remote",
    # mcp-remote 0.15.1's first initialize when run without --protocol auto.
    "mcp-remote-fallback-test": "mcp-remote",
}
DEFAULT_CONNECTING_SECTION = "protocol-revision"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"

HEADER_MCP_METHOD = "Mcp-Method"
HEADER_MCP_NAME = "Mcp-Name"
HEADER_PROTOCOL_VERSION = "MCP-Protocol-Version"
ALLOWED_HTTP_METHODS = "POST, OPTIONS"

METHOD_DISCOVER = "server/discover"
METHOD_INITIALIZE = "initialize"
METHOD_TOOLS_LIST = "tools/list"
METHOD_TOOLS_CALL = "tools/call"
METHOD_RESOURCES_LIST = "resources/list"
METHOD_RESOURCES_READ = "resources/read"
METHOD_RESOURCES_TEMPLATES_LIST = "resources/templates/list"
# Methods whose entity is mirrored in Mcp-Name, and the params key holding it.
NAME_BEARING_METHODS = {METHOD_TOOLS_CALL: "name", METHOD_RESOURCES_READ: "uri"}

_BASE64_SENTINEL = re.compile(r"^=\?base64\?(?P<payload>.*)\?=$")


@dataclass(frozen=True)
class Route:
    """A request that passed every envelope check: what to dispatch, and to whom to answer."""

    method: str
    params: dict[str, Any]
    request_id: Any
    version: str
    is_notification: bool


@dataclass(frozen=True)
class Rejection:
    """A request that failed a check.

    `version` is the revision the exchange named, for the deprecation headers;
    None when the check came before the body was read (the header alone names it then).
    `method` is the request's method once the body was read, None before.
    """

    error: JsonRpcError
    version: str | None
    # The request's method, once the body was read (it names the request's span).
    method: str | None = None


def check_http(
    *, http_method: str, content_type: str, declared_length: str | None, transfer_encoding: str | None, max_bytes: int
) -> Rejection | None:
    """The checks made before the body is read, so that an oversized body is never buffered."""
    if http_method != "POST":
        return _reject(
            JSONRPC_INVALID_REQUEST,
            "Method not allowed: send JSON-RPC with POST",
            http_status=405,
            headers={"Allow": ALLOWED_HTTP_METHODS},
        )
    if content_type != JSON_CONTENT_TYPE:
        return _reject(JSONRPC_INVALID_REQUEST, "Content-Type must be application/json", http_status=415)
    if transfer_encoding and not declared_length:
        # WSGI reads no body without a Content-Length: a chunked one would be read as empty.
        return _reject(JSONRPC_INVALID_REQUEST, "Length required: send the body with a Content-Length", http_status=411)
    try:
        declared = int(declared_length or 0)
    except ValueError:
        declared = 0
    if declared > max_bytes:
        return _reject(JSONRPC_INVALID_REQUEST, f"Request body exceeds {max_bytes} bytes", http_status=413)
    return None


def route_message(
    body: bytes, *, headers: Mapping[str, str], served_versions: list[str], max_bytes: int, connecting_url: str
) -> Route | Rejection:
    """Parse the body and check revision and routing headers.

    `headers` maps each MCP header the request sent, by the name this module
    spells it (`HEADER_MCP_METHOD`, ...), to its raw value.

    `connecting_url` is the page a person is sent to when their client speaks another revision.
    """
    header_version = decode_header_value(headers.get(HEADER_PROTOCOL_VERSION))
    if len(body) > max_bytes:
        return _reject(JSONRPC_INVALID_REQUEST, f"Request body exceeds {max_bytes} bytes", http_status=413)
    try:
        message = _parse_message(body)
    except JsonRpcError as error:
        return Rejection(error=error, version=header_version)
    request_id = message.get("id")
    params = message.get("params") or {}
    try:
        version = _require_served_revision(
            message, served_versions, header_version=header_version, connecting_url=connecting_url
        )
    except JsonRpcError as error:
        error.request_id = request_id
        return Rejection(error=error, version=header_version, method=message["method"])
    exchange_version = header_version if header_version is not None else version
    try:
        _require_client_capabilities(params)
        _require_routing_headers(headers, method=message["method"], params=params, version=version)
    except JsonRpcError as error:
        error.request_id = request_id
        return Rejection(error=error, version=exchange_version, method=message["method"])
    return Route(
        method=message["method"],
        params=params,
        request_id=request_id,
        version=exchange_version,
        is_notification="id" not in message,
    )


def decode_header_value(value: str | None) -> str | None:
    """Undo the `=?base64?<b64>?=` form of an MCP header; None when the form is malformed.

    A value without the sentinel is returned as is. Bad or non-canonical base64
    and bad UTF-8 give None, so a corrupt header never equals a body value.
    """
    if value is None:
        return None
    match = _BASE64_SENTINEL.fullmatch(value)
    if match is None:
        return value
    payload = match.group("payload")
    try:
        decoded = base64.b64decode(payload, validate=True)
    except binascii.Error:
        return None
    if base64.b64encode(decoded).decode("ascii") != payload:
        return None
    try:
        return decoded.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _reject(code: int, message: str, *, http_status: int, headers: dict[str, str] | None = None) -> Rejection:
    error = JsonRpcError(code, message, http_status=http_status, headers=headers or {})
    return Rejection(error=error, version=None)


def _parse_message(body: bytes) -> dict[str, Any]:
    """The one JSON-RPC request object the body holds."""
    try:
        message = parse_json_body(body)
    except MalformedJson as malformed:
        raise JsonRpcError(JSONRPC_PARSE_ERROR, f"Parse error: {malformed}") from None
    if isinstance(message, list):
        raise JsonRpcError(JSONRPC_INVALID_REQUEST, "Batch requests are not supported")
    if not isinstance(message, dict):
        raise JsonRpcError(JSONRPC_INVALID_REQUEST, "The body must be one JSON-RPC request object")
    request_id = message.get("id")
    id_is_valid = "id" not in message or (isinstance(request_id, str | int) and not isinstance(request_id, bool))
    echo_id = request_id if id_is_valid else None
    if message.get("jsonrpc") != JSONRPC_VERSION:
        raise JsonRpcError(JSONRPC_INVALID_REQUEST, 'jsonrpc must be "2.0"', request_id=echo_id)
    if not id_is_valid:
        raise JsonRpcError(JSONRPC_INVALID_REQUEST, "id must be a string or an integer")
    if not isinstance(message.get("method"), str):
        raise JsonRpcError(JSONRPC_INVALID_REQUEST, "method must be a string", request_id=echo_id)
    if "params" in message and not isinstance(message["params"], dict):
        raise JsonRpcError(JSONRPC_INVALID_REQUEST, "params must be an object", request_id=echo_id)
    return message


def _require_served_revision(
    message: dict[str, Any], served_versions: list[str], *, header_version: str | None, connecting_url: str
) -> str:
    """The revision named in `params._meta`, or a -32022 error naming the served ones.

    Host applications print the error's message as it is, to a person who has
    just signed in: so it says in one plain line what this server speaks, what
    the client sent, and where the recipe for that client is (docs/connecting.md),
    with words after the link so that whatever a host appends cannot lengthen it.
    """
    params = message.get("params") or {}
    meta = params.get("_meta")
    requested = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
    if not isinstance(requested, str):
        requested = None
    is_initialize = message["method"] == METHOD_INITIALIZE
    if is_initialize and requested is None:
        # A 2025-style handshake names its revision in params.protocolVersion.
        legacy = params.get("protocolVersion")
        requested = legacy if isinstance(legacy, str) else None
    if not is_initialize and requested is not None and requested in served_versions:
        return requested
    sent = f"MCP {requested}" if requested else "no MCP revision"
    served = " and ".join(served_versions)
    section = _HOST_SECTIONS.get(_client_name(params), DEFAULT_CONNECTING_SECTION)
    # Text after the link: Codex appends `data` to the message, which would otherwise run into the URL.
    reason = (
        f"This server speaks MCP {served} only; your client sent {sent}. See {connecting_url}#{section} to connect it."
    )
    raise JsonRpcError(
        JSONRPC_UNSUPPORTED_PROTOCOL_VERSION,
        reason,
        data={"supported": served_versions, "requested": requested or header_version or ""},
    )


def _client_name(params: dict[str, Any]) -> str:
    """The client's `name`, from the 2026-07-28 envelope or a 2025-style `initialize`; "" when absent."""
    meta = params.get("_meta")
    info = meta.get(META_CLIENT_INFO) if isinstance(meta, dict) else None
    if not isinstance(info, dict):
        info = params.get("clientInfo")
    name = info.get("name") if isinstance(info, dict) else None
    return name if isinstance(name, str) else ""


def _require_client_capabilities(params: dict[str, Any]) -> None:
    """`_meta` carries the client's capabilities as an object (`{}` at least), or -32602.

    The MCP 2026-07-28 schema marks them required in every request's `_meta`
    (`RequestMetaObject`); the server reads none of them, but a request without
    them is not a 2026-07-28 request.
    """
    capabilities = params["_meta"].get(META_CLIENT_CAPABILITIES)
    if not isinstance(capabilities, dict):
        raise JsonRpcError(JSONRPC_INVALID_PARAMS, f"params._meta must carry {META_CLIENT_CAPABILITIES} as an object")


def _require_routing_headers(headers: Mapping[str, str], *, method: str, params: dict[str, Any], version: str) -> None:
    """Mcp-Method always, Mcp-Name for named entities, MCP-Protocol-Version when sent: -32020."""

    def mismatch(message: str) -> JsonRpcError:
        return JsonRpcError(JSONRPC_HEADER_MISMATCH, message)

    for name in (HEADER_MCP_METHOD, HEADER_MCP_NAME, HEADER_PROTOCOL_VERSION):
        raw = headers.get(name)
        if raw is not None and decode_header_value(raw) is None:
            raise mismatch(f"{name} header carries a malformed base64 value")
    sent_version = decode_header_value(headers.get(HEADER_PROTOCOL_VERSION))
    if sent_version is not None and sent_version != version:
        raise mismatch(f"{HEADER_PROTOCOL_VERSION} header does not match params._meta protocol version")
    sent_method = decode_header_value(headers.get(HEADER_MCP_METHOD))
    if sent_method is None:
        raise mismatch(f"{HEADER_MCP_METHOD} header is required")
    if sent_method != method:
        raise mismatch(f"{HEADER_MCP_METHOD} header does not match the request method")
    name_key = NAME_BEARING_METHODS.get(method)
    if name_key is None:
        return
    sent_name = decode_header_value(headers.get(HEADER_MCP_NAME))
    if sent_name is None:
        raise mismatch(f"{HEADER_MCP_NAME} header is required for {method}")
    if sent_name != params.get(name_key):
        raise mismatch(f"{HEADER_MCP_NAME} header does not match params.{name_key}")
