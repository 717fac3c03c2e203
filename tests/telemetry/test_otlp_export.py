"""Traces leave a real gunicorn worker over OTLP/HTTP, database and Redis spans inside the MCP span.

gunicorn runs `gunicorn.conf.py` as production does, so tracing is set up by
its `post_fork` hook from OTEL_* alone, and exports to `OtlpReceiver` on a
real socket. The test run's own database is served (`LiveGunicorn`), so the
trace id can be matched to the audit row the worker wrote.
"""

import json
import os
import urllib.request
from typing import Any

from django.conf import settings
from django.test import TransactionTestCase, override_settings

from audit.models import AuditAction, AuditEvent
from tests.factories import make_membership, make_source, token_for
from tests.flows.live_gunicorn import LiveGunicorn
from tests.hostile import CONTROL_STRINGS
from tests.mcp_requests import CLIENT_META, envelope, routing_headers
from tests.telemetry.otlp_receiver import OtlpReceiver, ReceivedSpan
from tests.telemetry.support import CLIENT_SPAN_ID, CLIENT_TRACE_ID, CLIENT_TRACEPARENT

SPAN_KIND_SERVER = 2
SPAN_KIND_CLIENT = 3
# A tool argument's text: it must reach the search, and no span.
ARGUMENT_MARKER = "qz7-argument-marker"
HOSTILE_QUERY = f"forklift {ARGUMENT_MARKER} ' OR 1=1 -- {CONTROL_STRINGS[4]}"


class OtlpExportTests(TransactionTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.receiver = OtlpReceiver()
        cls.receiver.start()
        cls.addClassCleanup(cls.receiver.stop)
        environment = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": cls.receiver.endpoint,
            "OTEL_SERVICE_NAME": "operator-under-test",
            # Export a batch every 50 ms, so that the test waits little.
            "OTEL_BSP_SCHEDULE_DELAY": "50",
        }
        if os.environ.get("REDIS_URL"):
            environment["REDIS_URL"] = os.environ["REDIS_URL"]
        cls.server = LiveGunicorn(workers=1, threads=1, environment=environment)
        cls.addClassCleanup(cls.server.stop)

    def post(self, message: dict[str, Any], token: str) -> tuple[dict[str, Any], str]:
        headers = {**routing_headers(message), "Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        request = urllib.request.Request(
            f"{self.server.base_url}/api/mcp/operator", data=json.dumps(message).encode(), headers=headers
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read()), response.headers["X-Request-Id"]

    def test_a_tool_call_reaches_the_receiver_with_its_database_spans_inside_and_no_secret(self) -> None:
        membership = make_membership()
        make_source(organization=membership.organization, text="Forklift training for every driver.")
        base = self.server.base_url
        endpoint = f"{base}/api/mcp/operator"
        # A token the server accepts: minted for its issuer and its endpoint.
        with override_settings(
            OPERATOR={
                **settings.OPERATOR,
                "base_url": base,
                "issuer": f"{base}/api/auth",
                "operator_endpoint_url": endpoint,
            }
        ):
            token = token_for(membership)
        meta = {**CLIENT_META, "traceparent": CLIENT_TRACEPARENT}
        message = envelope("tools/call", {"name": "search_knowledge", "arguments": {"query": HOSTILE_QUERY}}, meta=meta)

        answer, request_id = self.post(message, token)

        self.assertIn("result", answer, answer)
        spans = self.receiver.wait_for(lambda spans: any(s.name == "tools/call search_knowledge" for s in spans))
        (server,) = [span for span in spans if span.name == "tools/call search_knowledge"]
        self.assertEqual(server.kind, SPAN_KIND_SERVER)
        self.assertEqual((server.trace_id, server.parent_span_id), (CLIENT_TRACE_ID, CLIENT_SPAN_ID))
        self.assertEqual(server.attributes["gen_ai.tool.name"], "search_knowledge")
        self.assertEqual(server.attributes["operator.organization.id"], str(membership.organization_id))
        self.assertEqual(server.resource["service.name"], "operator-under-test")
        self.assertEqual(request_id, CLIENT_TRACE_ID)
        self.assertEqual(AuditEvent.objects.get(action=AuditAction.TOOL_CALL).request_id, CLIENT_TRACE_ID)
        children = [span for span in spans if span.parent_span_id == server.span_id]
        database = [span for span in children if _database_system(span) in {"postgresql", "sqlite"}]
        self.assertTrue(database, [span.name for span in children])
        self.assertTrue(all(span.kind == SPAN_KIND_CLIENT for span in database))
        # The prepared statements of operator_core/sql.py are traced too: the tool call's audit INSERT is one.
        statements = [
            str(span.attributes.get("db.statement", span.attributes.get("db.query.text"))) for span in database
        ]
        self.assertTrue(any("audit_auditevent" in statement for statement in statements), statements)
        if os.environ.get("REDIS_URL"):
            self.assertTrue([span for span in children if _database_system(span) == "redis"])
        text = json.dumps([(span.name, span.attributes) for span in spans])
        for secret in (token, ARGUMENT_MARKER, "OR 1=1"):
            self.assertNotIn(secret, text)


def _database_system(span: ReceivedSpan) -> str | None:
    return span.attributes.get("db.system.name") or span.attributes.get("db.system")
