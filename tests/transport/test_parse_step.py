"""The transport's one parse step and its encoder, over the fake tool set (docs/transport.md "Order of checks").

Every body that is not UTF-8 JSON, nests deeper than the limit or holds a lone
UTF-16 surrogate is a parse error (400, -32700) and writes nothing to the log;
every answer can be encoded, whatever text a tool returns.
"""

import json

from django.test import SimpleTestCase, override_settings

from operator_core.json_bodies import MAX_JSON_DEPTH
from operator_core.mcp.jsonrpc import JSONRPC_INTERNAL_ERROR, JsonRpcError, error_response
from tests.hostile import DEEP_PLACEHOLDER, assert_no_traceback_logged, json_with_deep_value
from tests.mcp_requests import envelope, post_mcp
from tests.support import validate_against_mcp_schema
from tests.transport.urls import PUBLIC_PATH, UNPAIRED_TEXT


@override_settings(ROOT_URLCONF="tests.transport.urls")
class ParseStepTests(SimpleTestCase):
    def post(self, message, **kwargs):
        return post_mcp(self.client, message, path=PUBLIC_PATH, **kwargs)

    def assert_parse_error(self, response) -> dict:
        self.assertEqual(response.status_code, 400, response.content[:300])
        payload = response.json()
        validate_against_mcp_schema(payload, "JSONRPCErrorResponse")
        validate_against_mcp_schema(payload["error"], "ParseError")
        return payload

    def test_body_nested_100000_levels_deep_is_a_parse_error(self) -> None:
        message = envelope("tools/call", {"name": "echo", "arguments": {"x": DEEP_PLACEHOLDER}})

        with assert_no_traceback_logged(self):
            response = self.post(message, body=json_with_deep_value(message))

        self.assert_parse_error(response)

    def test_body_nested_one_level_past_the_limit_is_a_parse_error(self) -> None:
        message = envelope("tools/call", {"name": "echo", "arguments": {"x": DEEP_PLACEHOLDER}})
        # the envelope holds the value three levels down: message, params, arguments
        body = json_with_deep_value(message, levels=MAX_JSON_DEPTH - 3 + 1)

        response = self.post(message, body=body)

        self.assert_parse_error(response)

    def test_body_nested_up_to_the_limit_is_read(self) -> None:
        message = envelope("tools/call", {"name": "echo", "arguments": {"x": DEEP_PLACEHOLDER}})
        body = json_with_deep_value(message, levels=MAX_JSON_DEPTH - 3)

        response = self.post(message, body=body)

        self.assertEqual(response.status_code, 200)

    def test_lone_surrogate_in_the_id_is_a_parse_error(self) -> None:
        with assert_no_traceback_logged(self):
            response = self.post(envelope("tools/list", request_id="\ud800"))

        payload = self.assert_parse_error(response)
        self.assertNotIn("id", payload)

    def test_lone_surrogate_in_arguments_is_a_parse_error(self) -> None:
        response = self.post(envelope("tools/call", {"name": "echo", "arguments": {"query": "a\udfffb"}}))

        self.assert_parse_error(response)

    def test_paired_surrogate_escapes_are_one_character(self) -> None:
        response = self.post(envelope("tools/call", {"name": "echo", "arguments": {"query": "\U0001f600"}}))

        self.assertEqual(response.json()["result"]["structuredContent"]["arguments"], {"query": "\U0001f600"})

    def test_body_that_is_not_utf8_is_a_parse_error(self) -> None:
        body = json.dumps(envelope("tools/list")).encode().replace(b"tools/list", b"tools/\xff")

        response = self.post(envelope("tools/list"), body=body)

        self.assert_parse_error(response)

    def test_nan_is_a_parse_error(self) -> None:
        body = json.dumps(envelope("tools/call", {"name": "echo", "arguments": {"x": float("nan")}}))

        response = self.post(envelope("tools/call", {"name": "echo"}), body=body)

        self.assert_parse_error(response)


@override_settings(ROOT_URLCONF="tests.transport.urls")
class EncodingTests(SimpleTestCase):
    def post(self, message, **kwargs):
        return post_mcp(self.client, message, path=PUBLIC_PATH, **kwargs)

    def test_a_result_holding_a_lone_surrogate_is_sent_escaped(self) -> None:
        with assert_no_traceback_logged(self):
            response = self.post(envelope("tools/call", {"name": "unpaired"}))

        self.assertEqual(response.status_code, 200)
        self.assertIn(b"\\ud83d", response.content)
        self.assertEqual(response.json()["result"]["structuredContent"], {"text": UNPAIRED_TEXT})

    def test_an_error_echoing_an_unpaired_id_is_sent_escaped(self) -> None:
        error = JsonRpcError(JSONRPC_INTERNAL_ERROR, "Internal error", request_id="\udfff")

        response = error_response(error)

        self.assertEqual(json.loads(response.content)["id"], "\udfff")

    def test_other_text_is_sent_as_utf8(self) -> None:
        response = self.post(envelope("tools/call", {"name": "echo", "arguments": {"word": "café"}}))

        self.assertIn("café".encode(), response.content)
