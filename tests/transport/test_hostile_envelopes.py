"""Hostile envelopes on both real MCP endpoints: each gets its documented 4xx, and nothing is logged.

Lone surrogates, NUL and other control characters, values of the wrong type,
floats for the integer `id`, and bodies nested 100,000 levels deep, in every
member of the envelope (docs/transport.md, "Errors"). The docs endpoint is
reached without a token, the operator endpoint with a valid one, so every
request gets past authentication to the envelope checks.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.test import TestCase, override_settings

from operator_core.mcp.envelope import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION
from tests.factories import make_membership, token_for
from tests.hostile import (
    CONTROL_STRINGS,
    DEEP_PLACEHOLDER,
    FRACTIONAL_FLOATS,
    INTEGRAL_FLOATS,
    LONE_SURROGATES,
    NON_STRINGS,
    assert_no_traceback_logged,
    deeply_nested,
    json_with_deep_value,
)
from tests.mcp_requests import CLIENT_META, envelope
from tests.support import validate_against_mcp_schema

PARSE_ERROR = (400, -32700)
INVALID_REQUEST = (400, -32600)
UNSUPPORTED_VERSION = (400, -32022)
HEADER_MISMATCH = (400, -32020)
METHOD_NOT_FOUND = (404, -32601)
INVALID_PARAMS = (400, -32602)


@dataclass(frozen=True)
class Case:
    """One request: its body (a message, or raw text), its headers, and the documented answer."""

    name: str
    expected: tuple[int, int]
    message: dict[str, Any] = field(default_factory=dict)
    body: str | bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)


def _encoded(value: Any) -> str:
    """A routing header naming `value`: base64 for any string (docs/transport.md "Headers"), else its text."""
    if isinstance(value, str):
        return f"=?base64?{base64.b64encode(value.encode('utf-8', 'surrogatepass')).decode()}?="
    return json.dumps(value)


def _with_meta(method: str, params: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return envelope(method, params, meta={**CLIENT_META, **meta})


def envelope_cases(*, tool: str) -> Iterator[Case]:
    """Every hostile envelope, with `tool` as the name of a real tool of the endpoint."""
    call = envelope("tools/call", {"name": tool, "arguments": {}})
    # Bodies that are not JSON this service reads.
    for kind in ("array", "object"):
        yield Case(f"body nested 100,000 {kind}s deep", PARSE_ERROR, call, deeply_nested(kind=kind))
    for where in ("arguments", "meta", "id"):
        message = {
            "arguments": envelope("tools/call", {"name": tool, "arguments": {"x": DEEP_PLACEHOLDER}}),
            "meta": _with_meta("tools/list", {}, extra=DEEP_PLACEHOLDER),
            "id": envelope("tools/list", request_id=DEEP_PLACEHOLDER),
        }[where]
        yield Case(f"{where} nested 100,000 levels deep", PARSE_ERROR, message, json_with_deep_value(message))
    for raw in (b"\xff\xfe", b" ", b"NaN", b'{"jsonrpc": "2.0", "id": Infinity}', b'{"id": 1e400}'):
        yield Case(f"body {raw!r}", PARSE_ERROR, call, raw)
    # Lone surrogates, wherever a string or a key may stand.
    for surrogate in LONE_SURROGATES:
        for where, message in {
            "id": envelope("tools/list", request_id=surrogate),
            "method": envelope(surrogate),
            "tool name": envelope("tools/call", {"name": surrogate}),
            "argument": envelope("tools/call", {"name": tool, "arguments": {"query": surrogate}}),
            "argument name": envelope("tools/call", {"name": tool, "arguments": {surrogate: 1}}),
            "resource uri": envelope("resources/read", {"uri": surrogate}),
            "protocol version": _with_meta("tools/list", {}, **{META_PROTOCOL_VERSION: surrogate}),
            "client capabilities": _with_meta("tools/list", {}, **{META_CLIENT_CAPABILITIES: {surrogate: {}}}),
        }.items():
            yield Case(f"lone surrogate in the {where}", PARSE_ERROR, message)
    # NUL and other control characters, announced in matching (base64) routing headers.
    for text in CONTROL_STRINGS:
        yield Case("control in the method", METHOD_NOT_FOUND, envelope(text), headers={"Mcp-Method": _encoded(text)})
        yield Case(
            "control in the tool name",
            INVALID_PARAMS,
            envelope("tools/call", {"name": text}),
            headers={"Mcp-Name": _encoded(text)},
        )
        yield Case(
            "control in the resource uri",
            INVALID_PARAMS,
            envelope("resources/read", {"uri": text}),
            headers={"Mcp-Name": _encoded(text)},
        )
        yield Case(
            "control in the protocol version",
            UNSUPPORTED_VERSION,
            _with_meta("tools/list", {}, **{META_PROTOCOL_VERSION: text}),
            headers={"MCP-Protocol-Version": _encoded(text)},
        )
        yield Case("control in jsonrpc", INVALID_REQUEST, {**envelope("tools/list"), "jsonrpc": text})
        yield Case(
            "control in a raw Mcp-Method header", HEADER_MISMATCH, envelope("tools/list"), headers={"Mcp-Method": text}
        )
    # Values of another type where a string (or an object) belongs.
    for value in NON_STRINGS:
        yield Case(f"method {value!r}", INVALID_REQUEST, {**envelope("tools/list"), "method": value})
        yield Case(f"jsonrpc {value!r}", INVALID_REQUEST, {**envelope("tools/list"), "jsonrpc": value})
        yield Case(
            f"tool name {value!r}",
            HEADER_MISMATCH,
            envelope("tools/call", {"name": value}),
            headers={"Mcp-Name": _encoded(value)},
        )
        yield Case(
            f"resource uri {value!r}",
            HEADER_MISMATCH,
            envelope("resources/read", {"uri": value}),
            headers={"Mcp-Name": _encoded(value)},
        )
        yield Case(
            f"protocol version {value!r}",
            UNSUPPORTED_VERSION,
            _with_meta("tools/list", {}, **{META_PROTOCOL_VERSION: value}),
            headers={"MCP-Protocol-Version": "2026-07-28"},
        )
        if not isinstance(value, int) or isinstance(value, bool):
            yield Case(f"id {value!r}", INVALID_REQUEST, {**envelope("tools/list"), "id": value})
        if not isinstance(value, dict):
            yield Case(f"params {value!r}", INVALID_REQUEST, {**envelope("tools/list"), "params": value})
            yield Case(
                f"client capabilities {value!r}",
                INVALID_PARAMS,
                _with_meta("tools/list", {}, **{META_CLIENT_CAPABILITIES: value}),
            )
            yield Case(f"_meta {value!r}", UNSUPPORTED_VERSION, {**envelope("tools/list"), "params": {"_meta": value}})
        if value is not None and not isinstance(value, dict):
            yield Case(
                f"arguments {value!r}", INVALID_PARAMS, envelope("tools/call", {"name": tool, "arguments": value})
            )
    # Floats for the integer id: JSON-RPC ids are strings or integers.
    for number in INTEGRAL_FLOATS + FRACTIONAL_FLOATS:
        yield Case(f"id {number!r}", INVALID_REQUEST, envelope("tools/list", request_id=number))


@override_settings(OPERATOR={**settings.OPERATOR, "docs_calls_per_minute": 100_000})
class HostileEnvelopeTests(TestCase):
    def send(self, path: str, case: Case, *, token: str | None = None):
        """POST the case with the routing headers a client derives from its body, then the case's own."""
        message = case.message
        method = message.get("method")
        headers = {"Accept": "application/json, text/event-stream", "Mcp-Method": _encoded(method)}
        params = message.get("params")
        name_key = {"tools/call": "name", "resources/read": "uri"}.get(method) if isinstance(method, str) else None
        if name_key is not None and isinstance(params, dict):
            headers["Mcp-Name"] = _encoded(params.get(name_key))
        headers.update(case.headers)
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        body = case.body if case.body is not None else json.dumps(message)
        return self.client.post(path, data=body, content_type="application/json", headers=headers)

    def assert_every_case_refused(self, path: str, *, tool: str, token: str | None = None) -> int:
        cases = list(envelope_cases(tool=tool))
        with assert_no_traceback_logged(self):
            for case in cases:
                with self.subTest(case=case.name, body=case.body or case.message):
                    response = self.send(path, case, token=token)
                    self.assertEqual(response.status_code, case.expected[0], response.content[:300])
                    payload = response.json()
                    validate_against_mcp_schema(payload, "JSONRPCErrorResponse")
                    self.assertEqual(payload["error"]["code"], case.expected[1])
        return len(cases)

    def test_docs_endpoint_refuses_every_hostile_envelope(self) -> None:
        self.assert_every_case_refused("/api/mcp/docs", tool="search_docs")

    def test_operator_endpoint_refuses_every_hostile_envelope(self) -> None:
        token = token_for(make_membership())

        self.assert_every_case_refused("/api/mcp/operator", tool="list_modules", token=token)
