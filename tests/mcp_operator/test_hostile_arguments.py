"""Hostile tool arguments get a documented answer, never a failure of the server.

A tool answer must be HTTP 200, valid against the official schema and the
tool's own output schema (checked by `call_tool_with_token`), and carry a
documented error code or none. Arguments holding a lone surrogate or nested
100,000 levels never reach the tool: the body is a parse error (400, -32700).
Nothing may write a traceback to the log.
"""

import json
import random
from typing import Any

from django.conf import settings
from django.test import override_settings

from mcp_operator.tools import TOOLS
from operator_core.errors import ErrorCode
from tests.factories import make_membership, make_module, make_source, token_for
from tests.hostile import (
    ANSWERED,
    PARSE_ERROR,
    REFUSED,
    assert_no_traceback_logged,
    holds_lone_surrogate,
    hostile_arguments,
    hostile_object,
    json_with_deep_value,
)
from tests.mcp_operator.base import META, OperatorEndpointTestCase, ToolResult
from tests.mcp_requests import OPERATOR_PATH as ENDPOINT

CALLS_PER_TOOL = 60
ARGUMENT_NAMES = [
    "organizationSlug",
    "organizationId",
    "query",
    "status",
    "kind",
    "limit",
    "cursor",
    "moduleId",
    "sourceId",
    "sourceIds",
    "startChunk",
    "maxChunks",
    "unknown",
]
EXPECTED_REFUSALS = {
    ErrorCode.INVALID_ARGUMENTS,
    ErrorCode.NOT_FOUND,
    ErrorCode.ORGANIZATION_SCOPE_MISMATCH,
    ErrorCode.INVALID_ORGANIZATION_SELECTOR,
}


@override_settings(OPERATOR={**settings.OPERATOR, "tool_calls_per_minute": 100_000})
class HostileArgumentTests(OperatorEndpointTestCase):
    def setUp(self) -> None:
        self.member = make_membership()
        self.token = token_for(self.member)
        module = make_module(organization=self.member.organization)
        source = make_source(organization=self.member.organization)
        # Valid arguments for each tool; the sweep replaces one of them at a time.
        self.valid = {
            "list_modules": {},
            "get_module": {"moduleId": str(module.id)},
            "list_sources": {},
            "search_knowledge": {"query": "safety"},
            "fetch_knowledge": {"sourceId": str(source.id)},
        }

    def answer(self, name: str, arguments: dict[str, Any]) -> ToolResult | None:
        """The tool's answer, or None when the transport refused the body as a parse error."""
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": META},
        }
        body = json_with_deep_value(message)
        if body == json.dumps(message) and not holds_lone_surrogate(message):
            return self.call_tool_with_token(self.token, name, **arguments)
        response = self.client.post(
            ENDPOINT,
            data=body,
            content_type="application/json",
            headers={"Authorization": f"Bearer {self.token}", "Mcp-Method": "tools/call", "Mcp-Name": name},
        )
        self.assertEqual(response.status_code, 400, response.content[:300])
        self.assertEqual(response.json()["error"]["code"], -32700)
        return None

    def test_seeded_hostile_arguments_get_documented_errors(self) -> None:
        rng = random.Random(20261121)
        codes: set[str | None] = set()

        with assert_no_traceback_logged(self):
            for tool in TOOLS:
                for _ in range(CALLS_PER_TOOL):
                    arguments = hostile_object(rng, keys=ARGUMENT_NAMES)
                    result = self.answer(tool.name, arguments)
                    codes.add(result.error_code if result else "parse error")

        self.assertLessEqual(codes - {None, "parse error"}, EXPECTED_REFUSALS)
        self.assertIn(ErrorCode.INVALID_ARGUMENTS, codes)

    def test_every_argument_of_every_tool_refuses_hostile_values(self) -> None:
        with assert_no_traceback_logged(self):
            for tool in TOOLS:
                for name, value, expected in hostile_arguments(tool.input_schema):
                    arguments = {**self.valid[tool.name], name: value}
                    with self.subTest(tool=tool.name, argument=name, value=json.dumps(value)[:40]):
                        result = self.answer(tool.name, arguments)
                        self.assert_answer(result, argument=name, expected=expected)

    def assert_answer(self, result: ToolResult | None, *, argument: str, expected: str) -> None:
        if expected == PARSE_ERROR:
            self.assertIsNone(result)
            return
        self.assertIsNotNone(result)
        if expected == ANSWERED:
            self.assertIn(result.error_code, EXPECTED_REFUSALS | {None})
            return
        assert expected == REFUSED
        self.assertIn(result.error_code, EXPECTED_REFUSALS)
        if result.error_code == ErrorCode.INVALID_ARGUMENTS:
            self.assertEqual(result.error["field"], argument)
