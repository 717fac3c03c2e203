"""The per-IP request limit of the public docs endpoint (product decisions §8).

The docs endpoint has no authentication, so its `authenticate` hook is this
limit: it admits every request (principal None) until one IP address exceeds
`operator_settings().docs_calls_per_minute` in the current one-minute window,
then refuses with HTTP 429 before any other check (docs/limits.md).
"""

import json

from django.http import HttpRequest, HttpResponse
from django_ratelimit.core import get_usage

from operator_site.client_ip import client_ip
from operator_site.conf import operator_settings
from operator_site.errors import RateLimited, error_payload
from operator_site.mcp_transport import Refusal

RATE_LIMIT_GROUP = "mcp_docs.calls"
# JSON-RPC's "server error" range: the request was fine, the server declines it for now.
JSONRPC_RATE_LIMITED = -32000


def limit_calls_per_ip(request: HttpRequest) -> None:
    """Count this request against its IP address; raise `Refusal` (429) once over the limit."""
    usage = get_usage(
        request,
        group=RATE_LIMIT_GROUP,
        key=lambda _group, req: client_ip(req),
        rate=f"{operator_settings().docs_calls_per_minute}/m",
        increment=True,
    )
    if usage is None or not usage["should_limit"]:
        return None
    retry_after = max(1, int(usage["time_left"]))
    raise Refusal(
        _rate_limited_response(RateLimited("Too many requests to the docs endpoint.", retry_after_seconds=retry_after))
    )


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
