"""Hostile arguments to the docs endpoint's tools get a documented answer, and nothing is logged.

The same sweep as the operator tools' (tests/mcp_operator/test_hostile_arguments.py),
without a token: lone surrogates and 100,000-level nesting are parse errors,
NUL, values of another type and fractional floats are `invalid_arguments`.
"""

import json
from typing import Any

from django.conf import settings
from django.test import override_settings

from mcp_docs.tools import TOOLS
from operator_core.errors import ErrorCode
from tests.hostile import (
    ANSWERED,
    PARSE_ERROR,
    REFUSED,
    assert_no_traceback_logged,
    hostile_arguments,
    json_with_deep_value,
)
from tests.mcp_docs.base import DocsEndpointTestCase
from tests.mcp_requests import CLIENT_META as META
from tests.mcp_requests import DOCS_PATH as ENDPOINT
from tests.support import validate_against_mcp_schema

VALID = {"search_docs": {"query": "token"}, "get_doc": {"path": "index.md"}}
DOCUMENTED = {ErrorCode.INVALID_ARGUMENTS, ErrorCode.NOT_FOUND}


@override_settings(OPERATOR={**settings.OPERATOR, "docs_calls_per_minute": 100_000})
class HostileDocsArgumentTests(DocsEndpointTestCase):
    def post(self, name: str, arguments: dict[str, Any]):
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": META},
        }
        return self.client.post(
            ENDPOINT,
            data=json_with_deep_value(message),
            content_type="application/json",
            headers={"Mcp-Method": "tools/call", "Mcp-Name": name},
        )

    def test_every_argument_of_every_tool_refuses_hostile_values(self) -> None:
        with assert_no_traceback_logged(self):
            for tool in TOOLS:
                for name, value, expected in hostile_arguments(tool.input_schema):
                    with self.subTest(tool=tool.name, argument=name, value=json.dumps(value)[:40]):
                        response = self.post(tool.name, {**VALID[tool.name], name: value})
                        self.assert_answer(response, argument=name, expected=expected)

    def assert_answer(self, response, *, argument: str, expected: str) -> None:
        if expected == PARSE_ERROR:
            self.assertEqual(response.status_code, 400, response.content[:300])
            self.assertEqual(response.json()["error"]["code"], -32700)
            return
        self.assertEqual(response.status_code, 200, response.content[:300])
        payload = response.json()
        validate_against_mcp_schema(payload, "CallToolResultResponse")
        result = payload["result"]
        error = result["structuredContent"].get("error") if result.get("isError") else None
        if expected == ANSWERED:
            self.assertIn(error["code"] if error else None, DOCUMENTED | {None})
            return
        assert expected == REFUSED
        self.assertIsNotNone(error, result)
        self.assertEqual((error["code"], error["field"]), (ErrorCode.INVALID_ARGUMENTS, argument))
