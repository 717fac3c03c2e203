"""The one MCP 2026-07-28 Streamable HTTP transport, shared by both MCP endpoints.

A thin HTTP shell: it reads the request, asks `operator_core.mcp.envelope` to
check it, dispatches a `Route` to the endpoint's tool or resource set, and
renders every answer through `operator_core.mcp.jsonrpc`. It knows nothing of
authentication or of any tool: each endpoint hands it an `authenticate`
callable (whose `Refusal` is answered untouched, and whose principal is passed
through to the sets), a tool set and a resource set. OPTIONS is answered
without authentication (a CORS preflight never gets here: django-cors-headers
answers it). It is the endpoint's one edge handler: an outage is 503 -32001
with `Retry-After`, anything else is logged and answered -32603 with no detail.
No sessions, no streams; responses are JSON. The rules: docs/transport.md; the
walk of a call and the order of checks:
docs/development/architecture.md#one-tool-call-step-by-step,
docs/development/decisions.md#order-of-checks.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from django.core.signals import setting_changed
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from operator_core.conf import operator_settings
from operator_core.errors import OperatorError
from operator_core.mcp.envelope import (
    ALLOWED_HTTP_METHODS,
    HEADER_MCP_METHOD,
    HEADER_MCP_NAME,
    HEADER_PROTOCOL_VERSION,
    META_SERVER_INFO,
    METHOD_DISCOVER,
    METHOD_RESOURCES_LIST,
    METHOD_RESOURCES_READ,
    METHOD_RESOURCES_TEMPLATES_LIST,
    METHOD_TOOLS_CALL,
    METHOD_TOOLS_LIST,
    Rejection,
    Route,
    check_http,
    decode_header_value,
    route_message,
)
from operator_core.mcp.jsonrpc import (
    JSONRPC_INVALID_PARAMS,
    JSONRPC_METHOD_NOT_FOUND,
    JsonRpcError,
    caught_error,
    encode_result,
    error_response,
    result_response,
)
from operator_core.mcp.revisions import add_deprecation_headers, served_versions
from operator_core.outages import error_for_failure
from operator_core.request_log import annotate
from operator_core.telemetry import metrics
from operator_core.telemetry.mcp_spans import describe_mcp_exchange

logger = logging.getLogger(__name__)

RESULT_COMPLETE = "complete"
# Every result is immediately stale: tools/list is to be re-read on every
# connection, and nothing else is worth a client cache.
RESULT_TTL_MS = 0
CACHE_SCOPE_PRIVATE = "private"
CACHE_SCOPE_PUBLIC = "public"


_DISCOVER = frozenset({METHOD_DISCOVER})
_DISCOVER_AND_TOOLS_LIST = frozenset({METHOD_DISCOVER, METHOD_TOOLS_LIST})
# Bumped when settings change: served revisions, server version and instructions
# come from them, so every result encoded before is stale.
_settings_generation = itertools.count()
_current_generation = [next(_settings_generation)]
setting_changed.connect(lambda **_: _current_generation.__setitem__(0, next(_settings_generation)), weak=False)


class Refusal(Exception):
    """Raised by an authenticator to answer with `response` before any other check.

    The response goes out untouched: no JSON-RPC body, no version headers.
    """

    def __init__(self, response: HttpResponse) -> None:
        super().__init__(response.status_code)
        self.response = response


class UnknownTool(Exception):
    """No tool of that name: JSON-RPC -32602 (docs/tools.md "Errors")."""

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


@dataclass(frozen=True)
class McpEndpoint:
    """One MCP endpoint: server identity, tools, resources and an optional authenticator."""

    server_info: ServerInfo
    tools: ToolSet
    resources: ResourceSet
    authenticate: Callable[[HttpRequest], object] | None = None
    # Completes the authenticator's check before any answer but a tool call's (whose tool set
    # completes it, with the call's first read): raises `Refusal`. See mcp_operator/auth.py.
    confirm: Callable[[object], None] | None = None
    # "private" when answers belong to one authorization context (the operator
    # endpoint); "public" when every caller gets the same answers (the docs).
    cache_scope: str = CACHE_SCOPE_PRIVATE
    # method -> (settings generation, encoded result) of the methods answered the same to everyone
    _encoded_results: dict[str, tuple[int, str]] = field(default_factory=dict, init=False, repr=False, compare=False)

    def as_view(self) -> Callable[[HttpRequest], HttpResponse]:
        """A plain Django view serving this endpoint (CSRF-exempt: bearer tokens, no cookies)."""

        @csrf_exempt
        def view(request: HttpRequest) -> HttpResponse:
            return self.handle(request)

        return view

    def handle(self, request: HttpRequest) -> HttpResponse:
        """Answer one HTTP exchange, in the order of docs/transport.md."""
        if request.method == "OPTIONS":
            return _finish(HttpResponse(status=204, headers={"Allow": ALLOWED_HTTP_METHODS}))
        started = time.perf_counter()
        headers = _envelope_headers(request)
        version = decode_header_value(headers.get(HEADER_PROTOCOL_VERSION))
        request_id: Any = None
        mcp_method = request.method
        error_code: int | None = None
        # Authentication passed: the exchange reached the server, so it gets version headers.
        reached = False
        try:
            principal = self.authenticate(request) if self.authenticate is not None else None
            reached = True
            outcome = self._check(request, headers)
            if self.confirm is not None and (
                isinstance(outcome, Rejection) or outcome.is_notification or outcome.method != METHOD_TOOLS_CALL
            ):
                self.confirm(principal)
            describe_mcp_exchange(outcome)
            if isinstance(outcome, Rejection):
                version = outcome.version or version
                error_code = outcome.error.code
                response = error_response(outcome.error)
            else:
                version, request_id, mcp_method = outcome.version, outcome.request_id, outcome.method
                annotate(mcp_method=mcp_method)
                response = self._answer(outcome, principal)
        except Refusal as refusal:
            return refusal.response
        except JsonRpcError as error:
            error.request_id = request_id
            error_code = error.code
            response = error_response(error)
        except Exception as failure:
            # The one edge handler: an OperatorError (the docs endpoint's limit), an outage
            # (503, retryable) or a bug (-32603); no detail leaves, never a token in the log.
            caught = _as_jsonrpc_error(failure, mcp_method=mcp_method, request_id=request_id)
            error_code = caught.code
            response = error_response(caught)
        metrics.record_mcp_operation(mcp_method, error_code, time.perf_counter() - started)
        if reached:
            add_deprecation_headers(response, version)
        return _finish(response)

    def _check(self, request: HttpRequest, headers: dict[str, str]) -> Route | Rejection:
        max_bytes = operator_settings().max_request_bytes
        rejection = check_http(
            http_method=request.method or "",
            content_type=request.content_type or "",
            declared_length=request.META.get("CONTENT_LENGTH"),
            transfer_encoding=request.META.get("HTTP_TRANSFER_ENCODING"),
            max_bytes=max_bytes,
        )
        if rejection is not None:
            return rejection
        return route_message(
            request.body,
            headers=headers,
            served_versions=served_versions(),
            max_bytes=max_bytes,
            connecting_url=f"{operator_settings().base_url}/docs/connecting",
        )

    def _answer(self, route: Route, principal: object) -> HttpResponse:
        if route.is_notification:
            # Nothing to answer, and 2026-07-28 defines no notification from clients.
            return HttpResponse(status=202)
        if route.method in self._same_for_everyone():
            generation, encoded = self._encoded_results.get(route.method, (None, ""))
            if generation != _current_generation[0]:
                encoded = encode_result(self._dispatch(route, principal))
                self._encoded_results[route.method] = (_current_generation[0], encoded)
        else:
            encoded = encode_result(self._dispatch(route, principal))
        return result_response(encoded, request_id=route.request_id)

    def _same_for_everyone(self) -> frozenset[str]:
        """Methods whose result depends on nothing of the request: encoded once, until settings change."""
        if getattr(self.tools, "same_listing_for_everyone", False):
            return _DISCOVER_AND_TOOLS_LIST
        return _DISCOVER

    def _dispatch(self, route: Route, principal: object) -> dict[str, Any]:
        handler = {
            METHOD_DISCOVER: self._discover,
            METHOD_TOOLS_LIST: self._list_tools,
            METHOD_TOOLS_CALL: self._call_tool,
            METHOD_RESOURCES_LIST: self._list_resources,
            METHOD_RESOURCES_READ: self._read_resource,
            METHOD_RESOURCES_TEMPLATES_LIST: self._list_resource_templates,
        }.get(route.method)
        if handler is None:
            raise JsonRpcError(JSONRPC_METHOD_NOT_FOUND, "Method not found", data={"method": route.method})
        try:
            result = handler(route.params, principal)
        except UnknownTool as error:
            raise JsonRpcError(
                JSONRPC_INVALID_PARAMS, f"Unknown tool: {error.name}", data={"name": error.name}
            ) from None
        except UnknownResource as error:
            raise JsonRpcError(JSONRPC_INVALID_PARAMS, "Resource not found", data={"uri": error.uri}) from None
        except OperatorError as error:
            raise JsonRpcError.from_operator_error(error) from None
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
        try:
            if not isinstance(arguments, dict):
                raise JsonRpcError(JSONRPC_INVALID_PARAMS, "params.arguments must be an object")
            # The header check proved params.name is a string equal to Mcp-Name.
            return self.tools.call_tool(principal, params["name"], arguments)
        except (JsonRpcError, UnknownTool):
            # Answered before the tool set checked the principal: the authenticator's answer comes first.
            if self.confirm is not None:
                self.confirm(principal)
            raise

    def _list_resources(self, params: dict[str, Any], principal: object) -> dict[str, Any]:
        return self._cacheable({"resources": self.resources.list_resources(principal)})

    def _read_resource(self, params: dict[str, Any], principal: object) -> dict[str, Any]:
        return self._cacheable(self.resources.read_resource(principal, params["uri"]))

    def _list_resource_templates(self, params: dict[str, Any], principal: object) -> dict[str, Any]:
        # Neither endpoint has templates. Clients that see the `resources`
        # capability list templates next to resources, and expect an empty list
        # rather than -32601 (MCP 2026-07-28, "Resources").
        return self._cacheable({"resourceTemplates": []})


# The request headers the envelope checks (MCP 2026-07-28, "Transports"), by their WSGI names.
_ENVELOPE_HEADERS = {
    name: "HTTP_" + name.upper().replace("-", "_")
    for name in (HEADER_MCP_METHOD, HEADER_MCP_NAME, HEADER_PROTOCOL_VERSION)
}


def _envelope_headers(request: HttpRequest) -> dict[str, str]:
    """The MCP headers the request sent, read once from its environ, a plain dict: each
    `request.headers.get` folds case and goes through Mapping's Python-level `get`."""
    meta = request.META
    return {name: meta[key] for name, key in _ENVELOPE_HEADERS.items() if key in meta}


def _as_jsonrpc_error(failure: Exception, *, mcp_method: str | None, request_id: Any) -> JsonRpcError:
    error = error_for_failure(failure, logger=logger, context=f"MCP request {mcp_method}", message="Internal error")
    return caught_error(error, request_id=request_id)


def _finish(response: HttpResponse) -> HttpResponse:
    # Answers are per request and may hold an organization's data: never stored by caches.
    response["Cache-Control"] = "no-store"
    return response
