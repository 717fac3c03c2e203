"""One structured log record per request, with a request id the client and the proxy can quote.

`RequestLogMiddleware` gives each request an id (the trusted proxy's
`X-Request-Id`, otherwise a new one; when tracing is on, the request's trace
id, through `adopt_request_id`), returns it in `X-Request-Id`, and after
the response logs one record on the `operator.requests` logger: method, path
(never the query string, which may carry codes), status, duration and whatever
the code annotated on the way (`annotate`): the person, the organization, the
MCP method, the tool and its outcome. Nothing else of the request is logged:
no header, no body, so no token, code, password or cookie (docs/operations.md,
"Logs").
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.functional import empty

from operator_core.client_ip import from_trusted_proxy

REQUEST_ID_HEADER = "X-Request-Id"
# A proxy's id is echoed into our logs and headers: only a short, plain token is taken.
_ACCEPTED_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")

logger = logging.getLogger("operator.requests")
_fields: ContextVar[dict[str, Any] | None] = ContextVar("operator_request_fields", default=None)


def annotate(**fields: Any) -> None:
    """Add fields to the current request's log record; a no-op outside a request."""
    current = _fields.get()
    if current is not None:
        current.update(fields)


def annotation(name: str) -> Any:
    """A field the current request annotated so far; None outside a request or when not set."""
    current = _fields.get()
    return current.get(name) if current is not None else None


def adopt_request_id(request_id: str) -> None:
    """Make `request_id` the current request's id (its trace id when tracing is on: docs/operations.md#traces)."""
    current = _fields.get()
    if current is not None:
        current["request_id"] = request_id


def current_request_id() -> str | None:
    current = _fields.get()
    return current.get("request_id") if current is not None else None


class RequestLogMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = _request_id(request)
        fields: dict[str, Any] = {"request_id": request_id}
        token = _fields.set(fields)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
        finally:
            _fields.reset(token)
        response[REQUEST_ID_HEADER] = fields["request_id"]
        if logger.isEnabledFor(logging.INFO):
            fields.update(
                method=request.method,
                path=request.path,
                status=response.status_code,
                duration_ms=round((time.perf_counter() - started) * 1000, 2),
            )
            fields.setdefault("user_id", _signed_in_user_id(request))
            logger.info("%s %s %s", request.method, request.path, response.status_code, extra={"request": fields})
        return response


def _request_id(request: HttpRequest) -> str:
    if from_trusted_proxy(request):
        offered = request.headers.get(REQUEST_ID_HEADER, "")
        if _ACCEPTED_REQUEST_ID.fullmatch(offered):
            return offered
    return uuid.uuid4().hex


def _signed_in_user_id(request: HttpRequest) -> int | None:
    # Only a user the view already loaded: the log must not cost a session query.
    user = getattr(request, "user", None)
    if user is None or getattr(user, "_wrapped", None) is empty:
        return None
    return user.pk if user.is_authenticated else None
