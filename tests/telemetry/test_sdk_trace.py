"""An agent's trace, started around the official MCP Python SDK client, continues in the server's span.

The SDK (2.3) puts the current trace into each request's `params._meta`
(`traceparent`, `tracestate`); the live server reads it there and makes its
span a child of the SDK's client span, in the agent's trace.
"""

import asyncio

import httpx2
from django.conf import settings
from django.test import LiveServerTestCase, override_settings
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from operator_core.telemetry import tracing
from tests.factories import make_membership, token_for
from tests.support import HTTP_CLIENT_LOGGERS, quiet_loggers
from tests.telemetry.support import parent_ids, server_spans, trace_id_of


def agent_side_exporter() -> InMemorySpanExporter:
    """The agent's own tracing: the process-wide provider the SDK traces through, into memory."""
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter


class SdkTraceTests(LiveServerTestCase):
    host = "127.0.0.1"

    @classmethod
    def setUpClass(cls) -> None:
        # Before the live server builds its middleware chain.
        cls.server_spans = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(cls.server_spans))
        tracing.install(provider)
        cls.addClassCleanup(tracing.uninstall)
        cls.agent_spans = agent_side_exporter()
        super().setUpClass()

    def setUp(self) -> None:
        quiet_loggers(self.addCleanup, *HTTP_CLIENT_LOGGERS)
        base = self.live_server_url
        self.endpoint = f"{base}/api/mcp/operator"
        operator = {**settings.OPERATOR, "base_url": base, "issuer": f"{base}/api/auth"}
        self.enterContext(override_settings(OPERATOR={**operator, "operator_endpoint_url": self.endpoint}))
        self.token = token_for(make_membership(), expires_in=600)

    async def call_in_a_trace(self) -> str:
        """Call one tool inside the agent's span; the agent's trace id."""
        with trace.get_tracer("agent").start_as_current_span("agent task") as agent:
            headers = {"Authorization": f"Bearer {self.token}"}
            async with (
                httpx2.AsyncClient(headers=headers, timeout=30) as http,
                Client(streamable_http_client(self.endpoint, http_client=http)) as client,
            ):
                result = await client.call_tool("list_modules", {})
            self.assertFalse(result.is_error)
            return trace.format_trace_id(agent.get_span_context().trace_id)

    def test_the_server_span_is_a_child_of_the_sdk_s_client_span_in_the_agent_s_trace(self) -> None:
        agent_trace_id = asyncio.run(self.call_in_a_trace())

        (server,) = [
            span
            for span in server_spans(self.server_spans.get_finished_spans())
            if span.name == "tools/call list_modules"
        ]
        self.assertEqual(trace_id_of(server), agent_trace_id)
        client_spans = {
            (trace_id_of(span), trace.format_span_id(span.context.span_id)): span
            for span in self.agent_spans.get_finished_spans()
        }
        parent = client_spans.get(parent_ids(server))
        self.assertIsNotNone(parent, "the server span's parent is none of the agent's spans")
        self.assertEqual(parent.kind, trace.SpanKind.CLIENT)
        self.assertIn("tools/call list_modules", parent.name)
