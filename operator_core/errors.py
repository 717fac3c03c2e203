"""The one error hierarchy of the service and its renderers (code style §3).

Services and selectors raise `OperatorError` subclasses; the edges (the MCP
transport and agent_auth) render them with the functions below. OAuth errors are
not here: oauthlib renders those through DOT.
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


class OperatorError(Exception):
    code: str = ErrorCode.INTERNAL_ERROR
    http_status: int = 500

    def __init__(self, message: str, **data: Any) -> None:
        super().__init__(message)
        self.message = message
        self.data = data


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


class RateLimited(OperatorError):
    """Too many calls; `retryAfterSeconds` says when to try again."""

    code, http_status = ErrorCode.RATE_LIMITED, 429

    def __init__(self, message: str, *, retry_after_seconds: int, **data: Any) -> None:
        super().__init__(message, retryAfterSeconds=retry_after_seconds, **data)
        self.retry_after_seconds = retry_after_seconds


class ConcurrencyLimited(RateLimited):
    code = ErrorCode.CONCURRENCY_LIMITED


class Conflict(OperatorError):
    code, http_status = ErrorCode.CONFLICT, 409


def error_payload(error: OperatorError) -> dict[str, Any]:
    """The structured error object shared by every renderer: {code, message, ...data}."""
    return {"code": str(error.code), "message": error.message, **error.data}


def as_json_response(error: OperatorError) -> JsonResponse:
    """Render for plain JSON APIs (agent_auth): `{"error": {...}}` plus Retry-After."""
    response = JsonResponse({"error": error_payload(error)}, status=error.http_status)
    if isinstance(error, RateLimited):
        response["Retry-After"] = str(error.retry_after_seconds)
    return response


def as_tool_result(error: OperatorError, *, knowledge: bool) -> dict[str, Any]:
    """Render as a CallToolResult body (product decisions §3, "Tool errors").

    Knowledge tools: no `isError`; `structuredContent: {success: false, error}` and
    the same JSON as text, so one outputSchema admits both shapes. Every other
    tool: `isError: true`, a readable text item and `structuredContent: {error}`.
    """
    import json  # only this renderer needs it

    payload = error_payload(error)
    if knowledge:
        structured: dict[str, Any] = {"success": False, "error": payload}
        text = json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
        return {"content": [{"type": "text", "text": text}], "structuredContent": structured}
    return {
        "content": [{"type": "text", "text": f"{error.message} ({payload['code']})"}],
        "structuredContent": {"error": payload},
        "isError": True,
    }


# JSON-RPC codes an OperatorError maps to when it reaches the transport's edge
# outside a tool call (a tool's own failures are results, never JSON-RPC errors).
_JSONRPC_INVALID_PARAMS = -32602
_JSONRPC_INTERNAL_ERROR = -32603
_INVALID_PARAMS_CODES = {
    ErrorCode.INVALID_ARGUMENTS,
    ErrorCode.NOT_FOUND,
    ErrorCode.INVALID_ORGANIZATION_SELECTOR,
    ErrorCode.ORGANIZATION_SCOPE_MISMATCH,
}


def as_jsonrpc_error(error: OperatorError) -> dict[str, Any]:
    """Render as a JSON-RPC error object: `{code, message, data: {code, message, ...}}`.

    Bad input (arguments, ids, selectors) is -32602; anything else -32603. The
    structured error rides in `data` so clients still see our error code.
    """
    code = _JSONRPC_INVALID_PARAMS if error.code in _INVALID_PARAMS_CODES else _JSONRPC_INTERNAL_ERROR
    return {"code": code, "message": error.message, "data": error_payload(error)}
