"""JSON-RPC 2.0 as both MCP endpoints speak it: the codes, their HTTP statuses, one body builder.

Every JSON-RPC error the service sends is a `JsonRpcError` rendered by
`error_response`; nothing else builds an error body. Its HTTP status comes from
`HTTP_STATUS` (the one table, for envelope checks and handler errors alike)
unless the failure is about HTTP itself (405, 411, 413, 415), which names its own
status. docs/transport.md lists every code a client can meet.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from django.http import HttpResponse

from operator_core.errors import ErrorCode, OperatorError, error_payload
from operator_core.telemetry.spans import note_error_type

JSONRPC_VERSION = "2.0"
JSON_CONTENT_TYPE = "application/json"

JSONRPC_PARSE_ERROR = -32700
JSONRPC_INVALID_REQUEST = -32600
JSONRPC_METHOD_NOT_FOUND = -32601
JSONRPC_INVALID_PARAMS = -32602
JSONRPC_INTERNAL_ERROR = -32603
# JSON-RPC's "server error" range: the request was fine, the server declines it for now.
JSONRPC_RATE_LIMITED = -32000
# Same range: the database or Redis did not answer; retry after `Retry-After` (docs/operations.md#outages).
JSONRPC_TEMPORARILY_UNAVAILABLE = -32001
# MCP 2026-07-28, "Transports": routing headers that disagree with the body.
JSONRPC_HEADER_MISMATCH = -32020
# MCP 2026-07-28, "Versioning": a revision this server does not serve.
JSONRPC_UNSUPPORTED_PROTOCOL_VERSION = -32022

# The HTTP status of each JSON-RPC error code. -32603 stays 200: the exchange
# itself succeeded and a client should read the body (docs/transport.md).
HTTP_STATUS: dict[int, int] = {
    JSONRPC_PARSE_ERROR: 400,
    JSONRPC_INVALID_REQUEST: 400,
    JSONRPC_METHOD_NOT_FOUND: 404,
    JSONRPC_INVALID_PARAMS: 400,
    JSONRPC_INTERNAL_ERROR: 200,
    JSONRPC_RATE_LIMITED: 429,
    JSONRPC_TEMPORARILY_UNAVAILABLE: 503,
    JSONRPC_HEADER_MISMATCH: 400,
    JSONRPC_UNSUPPORTED_PROTOCOL_VERSION: 400,
}

# The JSON-RPC code of an `OperatorError` that reaches the edge outside a tool
# call (a tool's own failures are results, never JSON-RPC errors). Bad input is
# -32602, a refused rate -32000, an outage -32001, anything else -32603.
_CODE_OF_ERROR: dict[str, int] = {
    ErrorCode.INVALID_ARGUMENTS: JSONRPC_INVALID_PARAMS,
    ErrorCode.NOT_FOUND: JSONRPC_INVALID_PARAMS,
    ErrorCode.INVALID_ORGANIZATION_SELECTOR: JSONRPC_INVALID_PARAMS,
    ErrorCode.ORGANIZATION_SCOPE_MISMATCH: JSONRPC_INVALID_PARAMS,
    ErrorCode.RATE_LIMITED: JSONRPC_RATE_LIMITED,
    ErrorCode.TEMPORARILY_UNAVAILABLE: JSONRPC_TEMPORARILY_UNAVAILABLE,
}


@dataclass
class JsonRpcError(Exception):
    """One JSON-RPC error answer: code, message, optional data, and its own HTTP details.

    `request_id` is filled in by the transport once the body's id is known;
    `http_status` is set only for failures of HTTP itself (405, 411, 413, 415).
    """

    code: int
    message: str
    data: Any = None
    request_id: Any = None
    http_status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__init__(self.message)

    @classmethod
    def from_operator_error(cls, error: OperatorError) -> JsonRpcError:
        """The JSON-RPC form of a service error: our structured error rides in `data`."""
        return cls(
            _CODE_OF_ERROR.get(error.code, JSONRPC_INTERNAL_ERROR),
            error.message,
            data=error_payload(error),
            headers=error.headers,
        )

    @property
    def status(self) -> int:
        return self.http_status or HTTP_STATUS[self.code]


def caught_error(error: OperatorError, *, request_id: Any = None) -> JsonRpcError:
    """The JSON-RPC answer for an error an edge caught (`operator_core.outages.error_for_failure`).

    An internal error carries no data: its details are in the server log only
    (docs/transport.md). Any other keeps its structured error and headers.
    """
    if error.code == ErrorCode.INTERNAL_ERROR:
        return JsonRpcError(JSONRPC_INTERNAL_ERROR, "Internal error", request_id=request_id)
    answer = JsonRpcError.from_operator_error(error)
    answer.request_id = request_id
    return answer


def json_response(payload: dict[str, Any], *, status: int) -> HttpResponse:
    """A JSON body as the MCP endpoints send it: UTF-8, not ASCII-escaped, and always encodable.

    A string holding a lone UTF-16 surrogate has no UTF-8 form; such a body is
    sent ASCII-escaped instead (`\\ud800`, still valid JSON), so that rendering
    an answer, an error answer included, can never fail.
    """
    return HttpResponse(_utf8_json(payload), status=status, content_type=JSON_CONTENT_TYPE)


def _utf8_json(payload: Any) -> bytes:
    """`payload` as UTF-8 JSON bytes; never raises for a string's content."""
    try:
        return json.dumps(payload, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(payload).encode("ascii")


def encode_result(result: dict[str, Any]) -> str:
    """The JSON text of a result, as it stands inside the response (a result the same for
    every caller can be encoded once and kept)."""
    return json.dumps(result, ensure_ascii=False)


def result_response(encoded_result: str, *, request_id: Any) -> HttpResponse:
    """A successful JSON-RPC response around an encoded result.

    The text is exactly what encoding the whole response object would give.
    """
    encoded_id = json.dumps(request_id, ensure_ascii=False)
    body = f'{{"jsonrpc": "{JSONRPC_VERSION}", "id": {encoded_id}, "result": {encoded_result}}}'
    # A lone surrogate can only stand inside a JSON string, where `\udXXX` is its escape:
    # the answer stays valid JSON and encoding it can never fail (as in json_response).
    return HttpResponse(body.encode("utf-8", "backslashreplace"), status=200, content_type=JSON_CONTENT_TYPE)


def error_response(error: JsonRpcError) -> HttpResponse:
    """The one builder of a JSON-RPC error body; `id` is left out when there is none to echo."""
    note_error_type(str(error.code))
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        body["data"] = error.data
    payload: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION, "error": body}
    if error.request_id is not None:
        payload["id"] = error.request_id
    response = json_response(payload, status=error.status)
    for name, value in error.headers.items():
        response[name] = value
    return response
