"""One SERVER span per request, when tracing is on: the MCP requests and every other path.

`RequestSpanMiddleware` sits right below `RequestLogMiddleware` and is left out
of the chain when tracing is off (`MiddlewareNotUsed`), so that a request then
pays nothing for it. On, it opens the request's span, gives the request the
span's trace id as its request id (`operator_core.request_log.adopt_request_id`:
log line, audit row and trace join on it), and when the answer is known sets
what the request taught the log: the organization, a tool's failure, an
endpoint's outcome.

Parent context (W3C Trace Context): for an MCP request, `params._meta.traceparent`
and `tracestate` (MCP 2026-07-28, "_meta"), else the HTTP `traceparent` header.
A malformed value is ignored as if absent; no request is refused or changed for it.
Baggage is never read. The body is looked at only when it is a JSON POST no
larger than the MCP endpoints accept and it names `traceparent`; the
transport still makes every check of its own (docs/transport.md).

The outcome of the authorization server's and the headless path's endpoints
(`ATTR_OUTCOME`) is read from their answer, where they already say it: the
status, the `error` of a refusal's JSON body (an OAuth error code or a headless
code), the `error` or `code` parameter of an authorization redirect (only
which of the two is there: a code is never read), and the refresh-token event
the grace window annotated (`oauth.refresh_grace`). A successful body, which
holds tokens, is never read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

from django.core.exceptions import MiddlewareNotUsed, SuspiciousOperation
from django.http import HttpRequest, HttpResponse
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from operator_core.conf import operator_settings
from operator_core.request_log import adopt_request_id, annotation
from operator_core.telemetry import tracing
from operator_core.telemetry.spans import (
    ATTR_ERROR_TYPE,
    ATTR_GRANT_TYPE,
    ATTR_HTTP_METHOD,
    ATTR_HTTP_ROUTE,
    ATTR_HTTP_STATUS,
    ATTR_OAUTH_EVENT,
    ATTR_ORGANIZATION_ID,
    ATTR_OUTCOME,
    ERROR_TYPE_TOOL,
)

MCP_PATHS = frozenset({"/api/mcp/operator", "/api/mcp/docs"})
OUTCOME_ISSUED = "issued"
OUTCOME_REFUSED = "refused"
OUTCOME_REPLAYED = "replayed"
OUTCOME_REVOKED = "revoked"
OUTCOME_STARTED = "started"
# A page or a redirect to sign in: the authorization goes on in a later request.
OUTCOME_PENDING = "pending"
# Each endpoint with an outcome, and what a success answered with 2xx means there.
_OUTCOME_ENDPOINTS = {
    "/api/auth/oauth2/authorize": OUTCOME_PENDING,
    "/api/auth/oauth2/token": OUTCOME_ISSUED,
    "/api/auth/oauth2/register": OUTCOME_ISSUED,
    "/api/auth/oauth2/revoke": OUTCOME_REVOKED,
    "/api/agent/auth": OUTCOME_STARTED,
    "/api/agent/auth/claim/complete": OUTCOME_ISSUED,
}
_TOKEN_PATH = "/api/auth/oauth2/token"
_GRANT_TYPES = frozenset(
    {
        "authorization_code",
        "refresh_token",
        "client_credentials",
        "urn:ietf:params:oauth:grant-type:jwt-bearer",
        "urn:ietf:params:oauth:grant-type:token-exchange",
    }
)
# oauth/refresh_grace.py's event for a refresh answered again within the grace window.
_EVENT_GRACE_REPLAY = "refresh_token.grace_replay"
_TOOL_OK = "ok"
# An error code as the answers spell them (RFC 6749 §5.2, agent_auth/errors.py); anything else is not kept.
_ERROR_CODE = re.compile(r"^[a-z0-9_.]{1,64}$")
_MAX_ERROR_BODY = 4096
_JSON = "application/json"
_propagator = TraceContextTextMapPropagator()


class RequestSpanMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        if not tracing.is_on():
            raise MiddlewareNotUsed
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        is_mcp = request.path in MCP_PATHS
        parent = _parent_context(request, read_meta=is_mcp)
        span = tracing.tracer().start_span(
            request.method or "HTTP",
            context=parent,
            kind=SpanKind.SERVER,
            attributes={ATTR_HTTP_METHOD: request.method or ""},
        )
        # An exception's text may hold anything: the edges log it, the span does not.
        try:
            with trace.use_span(span, record_exception=False):
                adopt_request_id(trace.format_trace_id(span.get_span_context().trace_id))
                response = self.get_response(request)
                # A request the sampler left out keeps its trace id and nothing else: no answer is read for it.
                if span.is_recording():
                    attributes: dict[str, str | int] = {ATTR_HTTP_STATUS: response.status_code}
                    if is_mcp:
                        _finish_mcp(span, response, attributes)
                    else:
                        _finish_http(span, request, response, attributes)
                    span.set_attributes(attributes)
        except BaseException:
            span.end()
            raise
        _end_when_closed(response, span)
        return response


def _end_when_closed(response: HttpResponse, span: Span) -> None:
    """End the span when the server closes the answer, so that what runs then is inside it.

    The tool-call limits give their lease back at that moment (`request_finished`,
    mcp_operator/limits.py): its Redis command is the request's child, not a trace of its own.
    """
    close = response.close

    def close_within_span() -> None:
        with trace.use_span(span, end_on_exit=True, record_exception=False):
            close()

    response.close = close_within_span  # type: ignore[method-assign]


def _finish_mcp(span: Span, response: HttpResponse, attributes: dict[str, str | int]) -> None:
    organization_id = annotation("organization_id")
    if organization_id is not None:
        attributes[ATTR_ORGANIZATION_ID] = str(organization_id)
    error_type = (getattr(span, "attributes", None) or {}).get(ATTR_ERROR_TYPE)
    if error_type is None and annotation("outcome") not in (None, _TOOL_OK):
        error_type = ERROR_TYPE_TOOL
    if error_type is None and response.status_code >= 400:
        # Refused before a JSON-RPC answer (401, 403): the HTTP status names it.
        error_type = str(response.status_code)
    if error_type is not None:
        attributes[ATTR_ERROR_TYPE] = error_type
        span.set_status(StatusCode.ERROR)


def _finish_http(span: Span, request: HttpRequest, response: HttpResponse, attributes: dict[str, str | int]) -> None:
    match = request.resolver_match
    if match is not None and match.route:
        route = "/" + match.route
        span.update_name(f"{request.method} {route}")
        attributes[ATTR_HTTP_ROUTE] = route
    if response.status_code >= 500:
        attributes[ATTR_ERROR_TYPE] = str(response.status_code)
        span.set_status(StatusCode.ERROR)
    success = _OUTCOME_ENDPOINTS.get(request.path)
    if success is None:
        return
    outcome, error = _endpoint_outcome(response, success=success)
    event = annotation("oauth_event")
    if isinstance(event, str):
        attributes[ATTR_OAUTH_EVENT] = event
        if event == _EVENT_GRACE_REPLAY and outcome == OUTCOME_ISSUED:
            outcome = OUTCOME_REPLAYED
    attributes[ATTR_OUTCOME] = outcome
    if error is not None:
        attributes[ATTR_ERROR_TYPE] = error
    if request.path == _TOKEN_PATH and request.method == "POST":
        grant = _grant_type(request)
        if grant is not None:
            attributes[ATTR_GRANT_TYPE] = grant


def _grant_type(request: HttpRequest) -> str | None:
    try:
        grant = request.POST.get("grant_type")
    except (SuspiciousOperation, OSError):
        # A form Django refused to read was answered so already; the span only lacks the grant.
        return None
    return grant if grant in _GRANT_TYPES else None


def _endpoint_outcome(response: HttpResponse, *, success: str) -> tuple[str, str | None]:
    """(outcome, error code or None) of an authorization-server or headless answer."""
    status = response.status_code
    if status >= 400:
        return OUTCOME_REFUSED, _refusal_code(response)
    if 300 <= status < 400:
        parameters = parse_qs(urlsplit(response.get("Location", "")).query)
        if "error" in parameters:
            code = parameters["error"][0]
            return OUTCOME_REFUSED, code if _ERROR_CODE.fullmatch(code) else str(status)
        return (OUTCOME_ISSUED if "code" in parameters else OUTCOME_PENDING), None
    return success, None


def _refusal_code(response: HttpResponse) -> str:
    """The `error` of a refusal's JSON body (`"invalid_grant"` or `{"code": ...}`), else the status."""
    fallback = str(response.status_code)
    content = getattr(response, "content", b"")
    if not response.get("Content-Type", "").startswith(_JSON) or len(content) > _MAX_ERROR_BODY:
        return fallback
    try:
        body = json.loads(content)
    except ValueError:
        return fallback
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        error = error.get("code")
    return error if isinstance(error, str) and _ERROR_CODE.fullmatch(error) else fallback


def _parent_context(request: HttpRequest, *, read_meta: bool) -> Context | None:
    """The client's trace: `_meta` of an MCP request first, then the `traceparent` header; None for a new root."""
    if read_meta:
        carrier = _meta_carrier(request)
        if carrier is not None:
            context = _valid(_propagator.extract(carrier))
            if context is not None:
                return context
    header = request.META.get("HTTP_TRACEPARENT")
    if header is None:
        return None
    return _valid(_propagator.extract({"traceparent": header, "tracestate": request.META.get("HTTP_TRACESTATE", "")}))


def _valid(context: Context) -> Context | None:
    return context if trace.get_current_span(context).get_span_context().is_valid else None


def _meta_carrier(request: HttpRequest) -> dict[str, str] | None:
    """`traceparent` and `tracestate` from `params._meta`, when the body is worth reading for them."""
    if request.method != "POST" or request.content_type != _JSON:
        return None
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or "")
    except ValueError:
        return None
    if declared > operator_settings().max_request_bytes:
        return None
    try:
        body = request.body
    except (SuspiciousOperation, OSError):
        return None
    if b"traceparent" not in body:
        return None
    try:
        message: Any = json.loads(body)
    except (ValueError, RecursionError):
        return None
    params = message.get("params") if isinstance(message, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict) or not isinstance(meta.get("traceparent"), str):
        return None
    tracestate = meta.get("tracestate")
    return {"traceparent": meta["traceparent"], "tracestate": tracestate if isinstance(tracestate, str) else ""}
