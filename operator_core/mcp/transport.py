"""The one MCP 2026-07-28 Streamable HTTP transport, shared by both MCP endpoints.

It owns the request envelope, the order of checks (product decisions §4), the
JSON-RPC errors and their HTTP statuses (contract §7.1), the result decoration
(`resultType`, server info in `_meta`, `ttlMs`/`cacheScope`) and the deprecation
headers of contract §9. It knows nothing of authentication or of any tool: each
endpoint hands it an `authenticate` callable, a tool set and a resource set
(docs/transport.md describes the rules for client developers).

Order of checks for every request to an endpoint:

1. OPTIONS: answered here without authentication. CORS itself (the permissive
   preflight, `Access-Control-Allow-Origin: *`, only `WWW-Authenticate` exposed,
   never credentials) belongs to django-cors-headers, configured in settings for
   `/api/mcp/` and `/.well-known/`; a CORS preflight never reaches this module.
2. `authenticate(request)`: a `Refusal` is answered with its response untouched.
3. HTTP method: anything but POST is 405 with `Allow: POST, OPTIONS`.
4. Body: `Content-Type: application/json` (415), at most
   `operator_settings().max_request_bytes` (413), valid JSON (400 -32700), one
   JSON-RPC object, no batch (400 -32600).
5. Protocol revision in `params._meta["io.modelcontextprotocol/protocolVersion"]`:
   missing `_meta`, missing or unserved revision, or `initialize` -> 400 -32022
   with `data.supported`.
6. Headers `Mcp-Method`, `Mcp-Name` (tools/call, resources/read) and, when sent,
   `MCP-Protocol-Version`, each possibly `=?base64?...?=` encoded -> 400 -32020.
7. Dispatch: a notification is 202 with no body; an unknown method 404 -32601.

An `OperatorError` escaping a tool or resource set becomes a JSON-RPC error
(`errors.as_jsonrpc_error`); any other exception is logged and answered -32603
"Internal error" with no detail (the transport's one edge handler).

No sessions: `Mcp-Session-Id` is never issued nor read, `Last-Event-ID` is
ignored, and no server-initiated stream is ever opened. Responses are JSON.

INTERFACE (fixed):

    class Refusal(Exception): raised by an authenticator to answer with `response`
    class UnknownTool(Exception): raised by ToolSet.call_tool -> JSON-RPC -32602
    class UnknownResource(Exception): raised by ResourceSet.read_resource -> -32602
    class ToolSet(Protocol), class ResourceSet(Protocol), ServerInfo, McpEndpoint

The principal (whatever `authenticate` returns; None without authentication) is
passed through untouched to the tool and resource sets.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from django.http import HttpRequest, HttpResponse
from django.utils.http import http_date
from django.views.decorators.csrf import csrf_exempt

from operator_core.conf import ProtocolRevision, operator_settings
from operator_core.errors import OperatorError, as_jsonrpc_error

logger = logging.getLogger(__name__)

JSONRPC_VERSION = "2.0"
JSONRPC_PARSE_ERROR = -32700
JSONRPC_INVALID_REQUEST = -32600
JSONRPC_METHOD_NOT_FOUND = -32601
JSONRPC_INVALID_PARAMS = -32602
JSONRPC_INTERNAL_ERROR = -32603
JSONRPC_HEADER_MISMATCH = -32020
JSONRPC_UNSUPPORTED_PROTOCOL_VERSION = -32022

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

HEADER_MCP_METHOD = "Mcp-Method"
HEADER_MCP_NAME = "Mcp-Name"
HEADER_PROTOCOL_VERSION = "MCP-Protocol-Version"
ALLOWED_HTTP_METHODS = "POST, OPTIONS"
JSON_CONTENT_TYPE = "application/json"

METHOD_DISCOVER = "server/discover"
METHOD_INITIALIZE = "initialize"
METHOD_TOOLS_LIST = "tools/list"
METHOD_TOOLS_CALL = "tools/call"
METHOD_RESOURCES_LIST = "resources/list"
METHOD_RESOURCES_READ = "resources/read"
# Methods whose entity is mirrored in Mcp-Name, and the params key holding it.
NAME_BEARING_METHODS = {METHOD_TOOLS_CALL: "name", METHOD_RESOURCES_READ: "uri"}

RESULT_COMPLETE = "complete"
# Every result is immediately stale: tools/list is to be re-read on every
# connection (contract §4.2), and nothing else is worth a client cache.
RESULT_TTL_MS = 0
CACHE_SCOPE_PRIVATE = "private"
CACHE_SCOPE_PUBLIC = "public"

_BASE64_SENTINEL = re.compile(r"^=\?base64\?(?P<payload>.*)\?=$")


class Refusal(Exception):
    """Raised by an authenticator to answer with `response` before any other check.

    The response goes out untouched: no JSON-RPC body, no version headers
    (contract §9.3: a 401 or 403 never reached the server).
    """

    def __init__(self, response: HttpResponse) -> None:
        super().__init__(response.status_code)
        self.response = response


class UnknownTool(Exception):
    """No tool of that name: JSON-RPC -32602 (product decisions §3)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class UnknownResource(Exception):
    """No resource at that URI: JSON-RPC -32602 (the 2026-07-28 resource-not-found code)."""

    def __init__(self, uri: str) -> None:
        super().__init__(uri)
        self.uri = uri


class ToolSet(Protocol):
    """Implemented by `operator_core.mcp.tools.ToolRegistry`."""

    def list_tools(self, principal: object) -> list[dict]: ...

    def call_tool(self, principal: object, name: str, arguments: dict) -> dict: ...


class ResourceSet(Protocol):
    def list_resources(self, principal: object) -> list[dict]: ...

    def read_resource(self, principal: object, uri: str) -> dict: ...


@dataclass(frozen=True)
class ServerInfo:
    name: str
    title: str
    version: str
    instructions: str

    def implementation(self) -> dict[str, str]:
        """The MCP `Implementation` object naming this server."""
        return {"name": self.name, "title": self.title, "version": self.version}


class _Rejection(Exception):
    """One failed check: rendered as a JSON-RPC error response with `status`."""

    def __init__(self, status: int, code: int, message: str, *, data: Any = None, request_id: Any = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.data, self.request_id = data, request_id

    def response(self) -> HttpResponse:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return _jsonrpc_error_response(error, request_id=self.request_id, status=self.status)


@dataclass
class _Exchange:
    """What one POST has established so far; `version` drives the deprecation headers."""

    principal: object
    version: str | None = None
    request_id: Any = None
    method: str | None = None


@dataclass(frozen=True)
class McpEndpoint:
    """One MCP endpoint: server identity, tools, resources and an optional authenticator."""

    server_info: ServerInfo
    tools: ToolSet
    resources: ResourceSet
    authenticate: Callable[[HttpRequest], object] | None = None
    # "private" when answers belong to one authorization context (the operator
    # endpoint); "public" when every caller gets the same answers (the docs).
    cache_scope: str = CACHE_SCOPE_PRIVATE

    def as_view(self) -> Callable[[HttpRequest], HttpResponse]:
        """A plain Django view serving this endpoint (CSRF-exempt: bearer tokens, no cookies)."""

        @csrf_exempt
        def view(request: HttpRequest) -> HttpResponse:
            return self.handle(request)

        return view

    def handle(self, request: HttpRequest) -> HttpResponse:
        """Answer one HTTP exchange, in the order of product decisions §4."""
        if request.method == "OPTIONS":
            return _finish(HttpResponse(status=204, headers={"Allow": ALLOWED_HTTP_METHODS}))
        principal: object = None
        if self.authenticate is not None:
            try:
                principal = self.authenticate(request)
            except Refusal as refusal:
                return refusal.response
        exchange = _Exchange(principal=principal, version=_header(request, HEADER_PROTOCOL_VERSION))
        try:
            response = self._exchange(request, exchange)
        except _Rejection as rejection:
            response = rejection.response()
        except Exception:
            # The one edge handler: no detail leaves, the trace goes to the log (never a token).
            logger.exception("MCP request failed: %s", exchange.method or request.method)
            response = _Rejection(
                200, JSONRPC_INTERNAL_ERROR, "Internal error", request_id=exchange.request_id
            ).response()
        _add_version_headers(response, exchange.version)
        return _finish(response)

    def _exchange(self, request: HttpRequest, exchange: _Exchange) -> HttpResponse:
        if request.method != "POST":
            raise _Rejection(405, JSONRPC_INVALID_REQUEST, "Method not allowed: send JSON-RPC with POST")
        message = _read_message(request)
        exchange.request_id = message.get("id")
        params = message.get("params")
        method = exchange.method = message["method"]
        version = _require_served_revision(message, exchange)
        if exchange.version is None:
            exchange.version = version
        _require_routing_headers(request, method=method, params=params, version=version, request_id=exchange.request_id)
        if "id" not in message:
            # A notification: nothing to answer, and 2026-07-28 defines none from clients.
            return HttpResponse(status=202)
        result = self._dispatch(method, params, exchange)
        return _json_response({"jsonrpc": JSONRPC_VERSION, "id": exchange.request_id, "result": result}, status=200)

    def _dispatch(self, method: str, params: dict[str, Any], exchange: _Exchange) -> dict[str, Any]:
        handler = {
            METHOD_DISCOVER: self._discover,
            METHOD_TOOLS_LIST: self._list_tools,
            METHOD_TOOLS_CALL: self._call_tool,
            METHOD_RESOURCES_LIST: self._list_resources,
            METHOD_RESOURCES_READ: self._read_resource,
        }.get(method)
        if handler is None:
            raise _Rejection(
                404,
                JSONRPC_METHOD_NOT_FOUND,
                "Method not found",
                data={"method": method},
                request_id=exchange.request_id,
            )
        try:
            result = handler(params, exchange.principal)
        except UnknownTool as error:
            raise _Rejection(
                400,
                JSONRPC_INVALID_PARAMS,
                f"Unknown tool: {error.name}",
                data={"name": error.name},
                request_id=exchange.request_id,
            ) from None
        except UnknownResource as error:
            raise _Rejection(
                400,
                JSONRPC_INVALID_PARAMS,
                "Resource not found",
                data={"uri": error.uri},
                request_id=exchange.request_id,
            ) from None
        except _Rejection as rejection:
            rejection.request_id = exchange.request_id
            raise
        except OperatorError as error:
            rendered = as_jsonrpc_error(error)
            status = 400 if rendered["code"] == JSONRPC_INVALID_PARAMS else 200
            raise _Rejection(
                status,
                rendered["code"],
                rendered["message"],
                data=rendered.get("data"),
                request_id=exchange.request_id,
            ) from None
        return self._decorate(result)

    def _decorate(self, result: dict[str, Any]) -> dict[str, Any]:
        decorated = dict(result)
        decorated["resultType"] = RESULT_COMPLETE
        meta = dict(decorated.get("_meta") or {})
        meta[META_SERVER_INFO] = self.server_info.implementation()
        decorated["_meta"] = meta
        return decorated

    def _cacheable(self, result: dict[str, Any]) -> dict[str, Any]:
        return {**result, "ttlMs": RESULT_TTL_MS, "cacheScope": self.cache_scope}

    def _discover(self, params: dict[str, Any], principal: object) -> dict[str, Any]:
        return self._cacheable(
            {
                "supportedVersions": served_versions(),
                "capabilities": {"tools": {}, "resources": {}},
                "serverInfo": self.server_info.implementation(),
                "instructions": self.server_info.instructions,
            }
        )

    def _list_tools(self, params: dict[str, Any], principal: object) -> dict[str, Any]:
        return self._cacheable({"tools": self.tools.list_tools(principal)})

    def _call_tool(self, params: dict[str, Any], principal: object) -> dict[str, Any]:
        arguments = params.get("arguments", {})
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise _Rejection(400, JSONRPC_INVALID_PARAMS, "params.arguments must be an object")
        # The header check proved params.name is a string equal to Mcp-Name.
        return self.tools.call_tool(principal, params["name"], arguments)

    def _list_resources(self, params: dict[str, Any], principal: object) -> dict[str, Any]:
        return self._cacheable({"resources": self.resources.list_resources(principal)})

    def _read_resource(self, params: dict[str, Any], principal: object) -> dict[str, Any]:
        return self._cacheable(self.resources.read_resource(principal, params["uri"]))


def served_revisions(*, now: datetime | None = None) -> list[ProtocolRevision]:
    """Revisions still served: every configured one whose sunset has not passed (contract §9.5)."""
    now = now or datetime.now(UTC)
    return [
        revision
        for revision in operator_settings().protocol_revisions
        if revision.sunset_at is None or _aware(revision.sunset_at) > now
    ]


def served_versions() -> list[str]:
    """The served revision strings, newest first: `data.supported`, `supportedVersions`, /.well-known/mcp."""
    return [revision.version for revision in served_revisions()]


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


def _header(request: HttpRequest, name: str) -> str | None:
    raw = request.headers.get(name)
    return decode_header_value(raw) if raw is not None else None


def _read_message(request: HttpRequest) -> dict[str, Any]:
    """Check the body of a POST and return the one JSON-RPC message it holds."""
    if request.content_type != JSON_CONTENT_TYPE:
        raise _Rejection(415, JSONRPC_INVALID_REQUEST, "Content-Type must be application/json")
    limit = operator_settings().max_request_bytes
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    # Checked before reading, so an oversized body is never buffered.
    if declared > limit:
        raise _Rejection(413, JSONRPC_INVALID_REQUEST, f"Request body exceeds {limit} bytes")
    body = request.body
    if len(body) > limit:
        raise _Rejection(413, JSONRPC_INVALID_REQUEST, f"Request body exceeds {limit} bytes")
    try:
        message = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise _Rejection(400, JSONRPC_PARSE_ERROR, "Parse error: the body is not valid JSON") from None
    if isinstance(message, list):
        raise _Rejection(400, JSONRPC_INVALID_REQUEST, "Batch requests are not supported")
    if not isinstance(message, dict):
        raise _Rejection(400, JSONRPC_INVALID_REQUEST, "The body must be one JSON-RPC request object")
    request_id = message.get("id")
    id_is_valid = "id" not in message or (isinstance(request_id, str | int) and not isinstance(request_id, bool))
    echo_id = request_id if id_is_valid else None
    if message.get("jsonrpc") != JSONRPC_VERSION:
        raise _Rejection(400, JSONRPC_INVALID_REQUEST, 'jsonrpc must be "2.0"', request_id=echo_id)
    if not id_is_valid:
        raise _Rejection(400, JSONRPC_INVALID_REQUEST, "id must be a string or an integer")
    if not isinstance(message.get("method"), str):
        raise _Rejection(400, JSONRPC_INVALID_REQUEST, "method must be a string", request_id=echo_id)
    if "params" in message and not isinstance(message["params"], dict):
        raise _Rejection(400, JSONRPC_INVALID_REQUEST, "params must be an object", request_id=echo_id)
    return message


def _require_served_revision(message: dict[str, Any], exchange: _Exchange) -> str:
    """The revision named in `params._meta`, or a -32022 rejection naming the served ones."""
    params = message.get("params") or {}
    meta = params.get("_meta")
    requested = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
    if not isinstance(requested, str):
        requested = None
    if message["method"] == METHOD_INITIALIZE and requested is None:
        # A 2025-style handshake names its revision in params.protocolVersion.
        legacy = params.get("protocolVersion")
        requested = legacy if isinstance(legacy, str) else None
    supported = served_versions()
    if message["method"] == METHOD_INITIALIZE or requested is None or requested not in supported:
        if message["method"] == METHOD_INITIALIZE:
            reason = "The initialize handshake is not supported; use server/discover and params._meta"
        elif requested is None:
            reason = f"Unsupported protocol version: params._meta must carry {META_PROTOCOL_VERSION}"
        else:
            reason = f"Unsupported protocol version: {requested}"
        raise _Rejection(
            400,
            JSONRPC_UNSUPPORTED_PROTOCOL_VERSION,
            reason,
            data={"supported": supported, "requested": requested or exchange.version or ""},
            request_id=exchange.request_id,
        )
    return requested


def _require_routing_headers(
    request: HttpRequest, *, method: str, params: dict[str, Any], version: str, request_id: Any
) -> None:
    """Mcp-Method always, Mcp-Name for named entities, MCP-Protocol-Version when sent: -32020."""

    def mismatch(message: str) -> _Rejection:
        return _Rejection(400, JSONRPC_HEADER_MISMATCH, message, request_id=request_id)

    for name in (HEADER_MCP_METHOD, HEADER_MCP_NAME, HEADER_PROTOCOL_VERSION):
        raw = request.headers.get(name)
        if raw is not None and decode_header_value(raw) is None:
            raise mismatch(f"{name} header carries a malformed base64 value")
    sent_version = _header(request, HEADER_PROTOCOL_VERSION)
    if sent_version is not None and sent_version != version:
        raise mismatch(f"{HEADER_PROTOCOL_VERSION} header does not match params._meta protocol version")
    sent_method = _header(request, HEADER_MCP_METHOD)
    if sent_method is None:
        raise mismatch(f"{HEADER_MCP_METHOD} header is required")
    if sent_method != method:
        raise mismatch(f"{HEADER_MCP_METHOD} header does not match the request method")
    name_key = NAME_BEARING_METHODS.get(method)
    if name_key is None:
        return
    sent_name = _header(request, HEADER_MCP_NAME)
    if sent_name is None:
        raise mismatch(f"{HEADER_MCP_NAME} header is required for {method}")
    if sent_name != params.get(name_key):
        raise mismatch(f"{HEADER_MCP_NAME} header does not match params.{name_key}")


def _add_version_headers(response: HttpResponse, version: str | None) -> None:
    """Deprecation, Sunset and Link for an exchange naming a revision announced for removal (contract §9)."""
    if version is None:
        return
    revision = next((r for r in operator_settings().protocol_revisions if r.version == version), None)
    if revision is None or revision.deprecated_at is None:
        return
    policy = operator_settings().deprecation_policy_url
    response["Deprecation"] = f"@{int(_aware(revision.deprecated_at).timestamp())}"
    links = [f'<{policy}>; rel="deprecation"']
    if revision.sunset_at is not None:
        response["Sunset"] = http_date(_aware(revision.sunset_at).timestamp())
        links.append(f'<{policy}>; rel="sunset"')
    response["Link"] = ", ".join(links)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _json_response(payload: dict[str, Any], *, status: int) -> HttpResponse:
    return HttpResponse(json.dumps(payload, ensure_ascii=False), status=status, content_type=JSON_CONTENT_TYPE)


def _jsonrpc_error_response(error: dict[str, Any], *, request_id: Any, status: int) -> HttpResponse:
    payload: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION, "error": error}
    if request_id is not None:
        payload["id"] = request_id
    response = _json_response(payload, status=status)
    if status == 405:
        response["Allow"] = ALLOWED_HTTP_METHODS
    return response


def _finish(response: HttpResponse) -> HttpResponse:
    # Answers are per request and may hold an organization's data: never stored by caches.
    response["Cache-Control"] = "no-store"
    return response
