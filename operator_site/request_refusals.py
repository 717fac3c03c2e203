"""Requests refused for their size or shape, answered in each path's own format, never as a 500.

Two edges (docs/limits.md#request-size):

- `RequestSizeMiddleware`, early in `MIDDLEWARE`, refuses a request whose
  declared `Content-Length` is over `max_request_bytes` (1 MiB) with 413
  before anything reads its body: not a session, not the CSRF check, not a
  view. The MCP endpoints are left to their own envelope check
  (`operator_core.mcp.envelope.check_http`), which refuses the same bodies
  unread, in the order docs/transport.md promises (authentication, then the
  HTTP method, the content type, the size); nothing before it reads a body.
- `bad_request`, the root URLconf's `handler400`, answers what Django raises
  while reading a request (a form with more than 1,000 fields, more files
  than allowed, a malformed multipart body, a Host it refuses):
  `operator_site.middleware.ApiFailureMiddleware` leaves those to Django,
  which logs them as `django.security` events and calls this handler.

The format of an answer is the path's: JSON-RPC on the MCP endpoints, the
headless JSON under `/api/agent/`, an OAuth error body (or the error page of
the sign-in and authorization pages) on the authorization server, the plain
JSON error elsewhere under `/api/`, and plain text on every other page.
"""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from oauth.failures import failure_response
from operator_core.conf import operator_settings
from operator_core.errors import InvalidArguments, as_json_response
from operator_core.mcp.jsonrpc import JSONRPC_INVALID_REQUEST, JsonRpcError, error_response
from operator_core.request_refusals import BodyTooLarge, MalformedRequest, declared_length, refusal_for
from operator_site.middleware import MCP_PATH_PREFIX, OAUTH_PATH_PREFIXES

PLAIN_TEXT = "text/plain; charset=utf-8"
# The headless path and every other machine address under /api/ answer the plain JSON error.
API_PATH_PREFIX = "/api/"


class RequestSizeMiddleware:
    """413 for a declared body over `max_request_bytes`, before it is read; the MCP endpoints judge their own."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(MCP_PATH_PREFIX):
            max_bytes = operator_settings().max_request_bytes
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
