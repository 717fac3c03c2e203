"""The one error hierarchy of the service (docs/development/architecture.md, "Errors").

Services and selectors raise `OperatorError` subclasses. Each error carries
what every renderer needs: a code, an HTTP status, structured data and its own
response headers (`Retry-After`). The renderers are `as_json_response` below
(agent_auth), `operator_core.mcp.results` (tool results) and
`operator_core.mcp.jsonrpc` (JSON-RPC errors). OAuth errors are not here:
oauthlib renders those through django-oauth-toolkit.
"""

from enum import StrEnum
from typing import Any

from django.http import JsonResponse


class ErrorCode(StrEnum):
    FORBIDDEN = "forbidden"
    ORGANIZATION_SCOPE_MISMATCH = "organization_scope_mismatch"
    INVALID_ORGANIZATION_SELECTOR = "invalid_organization_selector"
    INVALID_ARGUMENTS = "invalid_arguments"
    NOT_FOUND = "not_found"
    RATE_LIMITED = "rate_limited"
    CONCURRENCY_LIMITED = "concurrency_limited"
    INTERNAL_ERROR = "internal_error"
    CONFLICT = "conflict"
    TEMPORARILY_UNAVAILABLE = "temporarily_unavailable"


class OperatorError(Exception):
    code: str = ErrorCode.INTERNAL_ERROR
    http_status: int = 500

    def __init__(self, message: str, **data: Any) -> None:
        super().__init__(message)
        self.message = message
        self.data = data

    @property
    def headers(self) -> dict[str, str]:
        """Response headers that belong to this error, whichever renderer answers it."""
        return {}


class NotFound(OperatorError):
    code, http_status = ErrorCode.NOT_FOUND, 404


class Forbidden(OperatorError):
    code, http_status = ErrorCode.FORBIDDEN, 403


class InvalidArguments(OperatorError):
    """Bad input; `field` names the argument at fault."""

    code, http_status = ErrorCode.INVALID_ARGUMENTS, 400


class OrganizationScopeMismatch(OperatorError):
    code, http_status = ErrorCode.ORGANIZATION_SCOPE_MISMATCH, 403


class InvalidOrganizationSelector(OperatorError):
    code, http_status = ErrorCode.INVALID_ORGANIZATION_SELECTOR, 400


class RetryLater(OperatorError):
    """Refused for now; `retryAfterSeconds` (and `Retry-After`) say when to try again."""

    def __init__(self, message: str, *, retry_after_seconds: int, **data: Any) -> None:
        super().__init__(message, retryAfterSeconds=retry_after_seconds, **data)
        self.retry_after_seconds = retry_after_seconds

    @property
    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after_seconds)}


class RateLimited(RetryLater):
    """Too many calls."""

    code, http_status = ErrorCode.RATE_LIMITED, 429


class ConcurrencyLimited(RateLimited):
    code = ErrorCode.CONCURRENCY_LIMITED


# Long enough for a database restart or a Redis failover, short enough that an agent
# does not give up (docs/operations.md#outages).
OUTAGE_RETRY_AFTER_SECONDS = 5


class TemporarilyUnavailable(RetryLater):
    """A part the service depends on (the database, Redis) did not answer: retry shortly.

    The same code on every path: a tool error, a JSON-RPC error (HTTP 503), the
    headless JSON error (503), and the OAuth error `temporarily_unavailable`
    (RFC 6749 §4.1.2.1), always with `Retry-After`.
    """

    code, http_status = ErrorCode.TEMPORARILY_UNAVAILABLE, 503

    def __init__(
        self,
        message: str = "The service is briefly unavailable; retry shortly.",
        *,
        retry_after_seconds: int = OUTAGE_RETRY_AFTER_SECONDS,
        **data: Any,
    ) -> None:
        super().__init__(message, retry_after_seconds=retry_after_seconds, **data)


class Conflict(OperatorError):
    code, http_status = ErrorCode.CONFLICT, 409


def error_payload(error: OperatorError) -> dict[str, Any]:
    """The structured error object shared by every renderer: {code, message, ...data}."""
    return {"code": str(error.code), "message": error.message, **error.data}


def as_json_response(error: OperatorError) -> JsonResponse:
    """Render for plain JSON APIs (agent_auth): `{"error": {...}}` with the error's own headers."""
    return JsonResponse({"error": error_payload(error)}, status=error.http_status, headers=error.headers)
