"""Requests refused for their size or shape, answered in each path's own format, never as a 500.

`RequestSizeMiddleware`, early in `MIDDLEWARE`, refuses a declared
`Content-Length` over `max_request_bytes` with 413 before anything reads the
body, and a body sent chunked without a `Content-Length` with 411 (the MCP
endpoints are left to their own envelope check, which keeps the order
docs/transport.md promises). `bad_request`, the root `handler400`,
answers what Django raises while reading a request (too many fields or files, a
malformed multipart body, a refused Host). The answer is the path's format:
JSON-RPC, headless JSON, an OAuth body or error page, plain JSON under `/api/`,
plain text elsewhere (docs/limits.md#request-size;
docs/development/architecture.md#errors).
"""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from oauth.failures import failure_response
from operator_core.conf import operator_settings
from operator_core.errors import InvalidArguments, as_json_response
from operator_core.mcp.jsonrpc import JSONRPC_INVALID_REQUEST, JsonRpcError, error_response
from operator_core.request_refusals import (
    BodyTooLarge,
    LengthRequired,
    MalformedRequest,
    declared_length,
    refusal_for,
    sends_without_length,
)
from operator_site.middleware import MCP_PATH_PREFIX, OAUTH_PATH_PREFIXES

PLAIN_TEXT = "text/plain; charset=utf-8"
# The headless path and every other machine address under /api/ answer the plain JSON error.
API_PATH_PREFIX = "/api/"


class RequestSizeMiddleware:
    """413 for a declared body over `max_request_bytes`, 411 for one of no declared length, before it is read.

    The MCP endpoints judge their own, after authentication (docs/transport.md#order-of-checks).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(MCP_PATH_PREFIX):
            max_bytes = operator_settings().max_request_bytes
            if sends_without_length(request.META):
                return refusal_response(request, LengthRequired())
            if declared_length(request.META) > max_bytes:
                return refusal_response(request, BodyTooLarge(max_bytes))
        return self.get_response(request)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """`handler400`: the path's own 4xx for a request Django refused to read."""
    refusal = refusal_for(exception, max_bytes=operator_settings().max_request_bytes)
    return refusal_response(request, refusal or MalformedRequest("The request is malformed."))


def refusal_response(request: HttpRequest, refusal: InvalidArguments) -> HttpResponse:
    """`refusal` in the format of the request's path, with its status and `Cache-Control: no-store`."""
    path = request.path
    if path.startswith(MCP_PATH_PREFIX):
        response = error_response(
            JsonRpcError(JSONRPC_INVALID_REQUEST, refusal.message, http_status=refusal.http_status)
        )
    elif path.startswith(OAUTH_PATH_PREFIXES):
        response = failure_response(request, refusal)
    elif path.startswith(API_PATH_PREFIX):
        response = as_json_response(refusal)
    else:
        response = HttpResponse(refusal.message, status=refusal.http_status, content_type=PLAIN_TEXT)
    response["Cache-Control"] = "no-store"
    return response
