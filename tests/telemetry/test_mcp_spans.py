"""Each MCP request is one SERVER span named and attributed by the MCP conventions (docs/operations.md#traces)."""

import json
import os
import unittest
import uuid

from django.test import TestCase

from audit.models import AuditAction, AuditEvent
from tests.factories import make_membership, make_module, token_for
from tests.mcp_requests import CLIENT_META, DOCS_PATH, PROTOCOL_VERSION, envelope, post_mcp
from tests.telemetry.support import (
    CLIENT_SPAN_ID,
    CLIENT_TRACE_ID,
    CLIENT_TRACEPARENT,
    HEADER_SPAN_ID,
    HEADER_TRACE_ID,
    HEADER_TRACEPARENT,
    MALFORMED_TRACEPARENTS,
    parent_ids,
    server_spans,
    trace_id_of,
    trace_in_memory,
)


class McpSpanTests(TestCase):
    def setUp(self) -> None:
        self.membership = make_membership()
        self.module = make_module(organization=self.membership.organization)
        self.token = token_for(self.membership)
        self.spans = trace_in_memory(self)

    def only_server_span(self):
        (span,) = server_spans(self.spans.get_finished_spans())
        return span

    def test_a_tool_call_is_a_span_named_for_its_tool_with_the_mcp_attributes(self) -> None:
        message = envelope("tools/call", {"name": "list_modules", "arguments": {}}, request_id="call-7")
        response = post_mcp(self.client, message, token=self.token)

        self.assertEqual(response.status_code, 200, response.content)
        self.assertFalse(response.json()["result"].get("isError"))
        span = self.only_server_span()
        self.assertEqual(span.name, "tools/call list_modules")
        self.assertEqual(span.attributes["mcp.method.name"], "tools/call")
        self.assertEqual(span.attributes["gen_ai.tool.name"], "list_modules")
        self.assertEqual(span.attributes["mcp.protocol.version"], PROTOCOL_VERSION)
        self.assertEqual(span.attributes["jsonrpc.request.id"], "call-7")
        self.assertEqual(span.attributes["mcp.client.name"], "tests")
        self.assertEqual(span.attributes["operator.organization.id"], str(self.membership.organization_id))
        self.assertEqual(span.attributes["http.response.status_code"], 200)
        self.assertNotIn("error.type", span.attributes)
        self.assertIsNone(span.parent)

    def test_the_request_id_of_the_answer_the_log_and_the_audit_row_is_the_trace_id(self) -> None:
        message = envelope("tools/call", {"name": "list_modules", "arguments": {}})
        with self.assertLogs("operator.requests", "INFO") as logged:
            response = post_mcp(self.client, message, token=self.token)

        trace_id = trace_id_of(self.only_server_span())
        self.assertEqual(response["X-Request-Id"], trace_id)
        self.assertEqual(logged.records[-1].request["request_id"], trace_id)
        row = AuditEvent.objects.get(action=AuditAction.TOOL_CALL)
        self.assertEqual(row.request_id, trace_id)

    def test_tools_list_is_a_span_named_for_its_method_alone(self) -> None:
        response = post_mcp(self.client, envelope("tools/list"), token=self.token)

        self.assertEqual(response.status_code, 200, response.content)
        span = self.only_server_span()
        self.assertEqual(span.name, "tools/list")
        self.assertEqual(span.attributes["mcp.method.name"], "tools/list")
        self.assertEqual(span.attributes["jsonrpc.request.id"], "1")
        self.assertNotIn("gen_ai.tool.name", span.attributes)
        self.assertNotIn("error.type", span.attributes)

    def test_a_failing_tool_is_a_tool_error(self) -> None:
        arguments = {"moduleId": str(uuid.uuid4())}
        message = envelope("tools/call", {"name": "get_module", "arguments": arguments})
        response = post_mcp(self.client, message, token=self.token)

        self.assertTrue(response.json()["result"]["isError"])
        span = self.only_server_span()
        self.assertEqual(span.name, "tools/call get_module")
        self.assertEqual(span.attributes["error.type"], "tool_error")
        self.assertEqual(span.status.status_code.name, "ERROR")

    def test_an_unsupported_revision_is_error_type_minus_32022(self) -> None:
        meta = {**CLIENT_META, "io.modelcontextprotocol/protocolVersion": "2025-06-18"}
        message = envelope("tools/list", meta=meta)
        response = post_mcp(self.client, message, token=self.token, omit=("MCP-Protocol-Version",))

        self.assertEqual(response.json()["error"]["code"], -32022)
        span = self.only_server_span()
        self.assertEqual(span.name, "tools/list")
        self.assertEqual(span.attributes["error.type"], "-32022")
        self.assertEqual(span.status.status_code.name, "ERROR")

    def test_a_routing_header_mismatch_is_error_type_minus_32020(self) -> None:
        message = envelope("tools/call", {"name": "list_modules", "arguments": {}})
        response = post_mcp(self.client, message, token=self.token, headers={"Mcp-Name": "get_module"})

        self.assertEqual(response.json()["error"]["code"], -32020)
        span = self.only_server_span()
        # A refused envelope names its method only: the span has no tool to stand for.
        self.assertEqual(span.name, "tools/call")
        self.assertEqual(span.attributes["error.type"], "-32020")

    def test_an_unauthenticated_request_is_error_type_401(self) -> None:
        response = post_mcp(self.client, envelope("tools/list"), token="not-a-token")

        self.assertEqual(response.status_code, 401)
        span = self.only_server_span()
        self.assertEqual(span.attributes["error.type"], "401")
        self.assertNotIn("not-a-token", json.dumps(dict(span.attributes)))

    def test_the_trace_continues_from_traceparent_in_meta(self) -> None:
        meta = {**CLIENT_META, "traceparent": CLIENT_TRACEPARENT, "tracestate": "vendor=1"}
        message = envelope("tools/call", {"name": "list_modules", "arguments": {}}, meta=meta)
        response = post_mcp(self.client, message, token=self.token, headers={"traceparent": HEADER_TRACEPARENT})

        self.assertEqual(response.status_code, 200, response.content)
        span = self.only_server_span()
        self.assertEqual(parent_ids(span), (CLIENT_TRACE_ID, CLIENT_SPAN_ID))
        self.assertEqual(response["X-Request-Id"], CLIENT_TRACE_ID)

    def test_without_meta_the_trace_continues_from_the_http_header(self) -> None:
        response = post_mcp(
            self.client, envelope("tools/list"), path=DOCS_PATH, headers={"traceparent": HEADER_TRACEPARENT}
        )

        self.assertEqual(response.status_code, 200, response.content)
        span = self.only_server_span()
        self.assertEqual(parent_ids(span), (HEADER_TRACE_ID, HEADER_SPAN_ID))

    def test_a_malformed_traceparent_changes_nothing_but_starts_a_new_trace(self) -> None:
        plain = post_mcp(self.client, envelope("tools/list"), token=self.token)
        for malformed in MALFORMED_TRACEPARENTS:
            with self.subTest(traceparent=malformed[:40]):
                self.spans.clear()
                meta = {**CLIENT_META, "traceparent": malformed, "tracestate": malformed}
                response = post_mcp(self.client, envelope("tools/list", meta=meta), token=self.token)

                self.assertEqual(response.status_code, 200, response.content)
                self.assertEqual(response.json(), plain.json())
                span = self.only_server_span()
                self.assertIsNone(span.parent)
                self.assertEqual(span.name, "tools/list")

    def test_a_malformed_traceparent_header_starts_a_new_trace(self) -> None:
        for malformed in MALFORMED_TRACEPARENTS:
            if "\x00" in malformed:
                continue  # no HTTP header can carry it
            with self.subTest(traceparent=malformed[:40]):
                self.spans.clear()
                response = post_mcp(
                    self.client, envelope("tools/list"), token=self.token, headers={"traceparent": malformed}
                )
                self.assertEqual(response.status_code, 200, response.content)
                self.assertIsNone(self.only_server_span().parent)

    def test_a_trace_the_client_did_not_sample_is_answered_the_same_and_records_nothing(self) -> None:
        unsampled = CLIENT_TRACEPARENT[:-2] + "00"
        message = envelope("tools/call", {"name": "list_modules", "arguments": {}}, request_id="call-8")
        plain = post_mcp(self.client, message, token=self.token)
        self.spans.clear()
        meta = {**CLIENT_META, "traceparent": unsampled}
        message = envelope("tools/call", {"name": "list_modules", "arguments": {}}, request_id="call-8", meta=meta)
        response = post_mcp(self.client, message, token=self.token)

        self.assertEqual(response.status_code, 200, response.content)
        self.assertEqual(response.json(), plain.json())
        self.assertEqual(response["X-Request-Id"], CLIENT_TRACE_ID)
        self.assertEqual(AuditEvent.objects.filter(request_id=CLIENT_TRACE_ID).count(), 1)
        self.assertEqual(self.spans.get_finished_spans(), ())

    @unittest.skipUnless(os.environ.get("REDIS_URL"), "the limits hold their lease in Redis only")
    def test_the_lease_given_back_after_the_answer_is_inside_the_request_span(self) -> None:
        message = envelope("tools/call", {"name": "list_modules", "arguments": {}})
        response = post_mcp(self.client, message, token=self.token)

        self.assertEqual(response.status_code, 200, response.content)
        spans = self.spans.get_finished_spans()
        server = self.only_server_span()
        releases = [span for span in spans if span.name == "ZREM"]
        self.assertEqual(len(releases), 1, [span.name for span in spans])
        self.assertEqual(parent_ids(releases[0]), (trace_id_of(server), f"{server.context.span_id:016x}"))
        self.assertEqual([span for span in spans if span.parent is None], [server])
