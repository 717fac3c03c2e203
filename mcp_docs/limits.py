"""The per-IP request limit of the public docs endpoint (product decisions §8).

The docs endpoint has no authentication, so its `authenticate` hook is this
limit: it admits every request (principal None) until one IP address exceeds
`operator_settings().docs_calls_per_minute` in the current one-minute window,
then refuses with HTTP 429 before any other check (docs/limits.md).
"""

import json

from django.http import HttpRequest, HttpResponse

from operator_core.conf import operator_settings
from operator_core.errors import RateLimited, error_payload
from operator_core.mcp.transport import Refusal
from operator_core.rate_limits import require_within_ip_limit

RATE_LIMIT_GROUP = "mcp_docs.calls"
# JSON-RPC's "server error" range: the request was fine, the server declines it for now.
JSONRPC_RATE_LIMITED = -32000


def limit_calls_per_ip(request: HttpRequest) -> None:
    """Count this request against its IP address; raise `Refusal` (429) once over the limit."""
    try:
        require_within_ip_limit(
            request,
            group=RATE_LIMIT_GROUP,
            rate=f"{operator_settings().docs_calls_per_minute}/m",
            message="Too many requests to the docs endpoint.",
        )
    except RateLimited as error:
        raise Refusal(_rate_limited_response(error)) from None


def _rate_limited_response(error: RateLimited) -> HttpResponse:
    # A JSON-RPC error with no id: the body was not read, so there is no id to echo.
    body = {
        "jsonrpc": "2.0",
        "error": {"code": JSONRPC_RATE_LIMITED, "message": error.message, "data": error_payload(error)},
    }
    response = HttpResponse(json.dumps(body), status=error.http_status, content_type="application/json")
    response["Retry-After"] = str(error.retry_after_seconds)
    response["Cache-Control"] = "no-store"
    return response
