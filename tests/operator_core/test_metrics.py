"""The metrics the code records (docs/operations.md#metrics): what moves, by which labels, and what never becomes one.

Through the real endpoints: tool calls over the operator endpoint, refreshes
over the token endpoint. Counts are read from the process's registry, as the
exposition renders them, before and after one action.
"""

from __future__ import annotations

import os
import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from unittest import mock

from django.conf import settings
from django.test import override_settings
from prometheus_client import generate_latest

from mcp_operator.limits import CONCURRENCY_LIMIT, RATE_GROUP, concurrency_slot
from operator_core.telemetry import metrics
from tests.factories import make_membership, make_module, make_user, token_for
from tests.hostile import CONTROL_STRINGS, LONE_SURROGATES, hostile_value
from tests.mcp_operator.base import OperatorEndpointTestCase
from tests.mcp_requests import envelope, post_mcp
from tests.oauth.support import TOKEN, OAuthTestCase

METRICS_TOKEN = "metrics-token-for-tests-0123456789abcdef"
DURATION_COUNT = "mcp_server_operation_duration_seconds_count"
# Looks like every secret a label must never carry: a bearer token, a client secret, an email code.
SECRET_LOOKING = "Bearer eyJhbGciOiJSUzI1NiJ9.c2VjcmV0.c2lnbmF0dXJl client_secret=s3cr3t-XYZ code=482913"


def _operator(**changes: object) -> dict[str, object]:
    return {**settings.OPERATOR, "metrics_token": METRICS_TOKEN, **changes}


def sample(name: str, **labels: str) -> float:
    return metrics.REGISTRY.get_sample_value(name, labels) or 0.0


def operations(method: str, tool: str = "", error_type: str = "") -> float:
    return sample(DURATION_COUNT, mcp_method_name=method, gen_ai_tool_name=tool, error_type=error_type)


def hostile_strings() -> list[str]:
    rng = random.Random(35)
    generated = [value for value in (hostile_value(rng) for _ in range(60)) if isinstance(value, str)]
    return [SECRET_LOOKING, *CONTROL_STRINGS, *LONE_SURROGATES, *generated]


@override_settings(OPERATOR=_operator())
class ToolCallMetricsTests(OperatorEndpointTestCase):
    def setUp(self) -> None:
        self.membership = make_membership()
        make_module(organization=self.membership.organization)

    def test_a_tool_call_counts_under_its_method_and_tool(self) -> None:
        before = operations("tools/call", "list_modules")

        self.call_tool(self.membership, "list_modules")

        self.assertEqual(operations("tools/call", "list_modules"), before + 1)

    def test_a_failing_tool_counts_as_tool_error(self) -> None:
        before = operations("tools/call", "get_module", metrics.TOOL_ERROR)

        result = self.call_tool(self.membership, "get_module", moduleId="not-a-uuid")

        self.assertEqual(result.error_code, "invalid_arguments")
        self.assertEqual(operations("tools/call", "get_module", metrics.TOOL_ERROR), before + 1)

    def test_tools_list_counts_under_its_method_without_a_tool(self) -> None:
        before = operations("tools/list")

        response = post_mcp(self.client, envelope("tools/list"), token=token_for(self.membership))

        self.assertEqual(response.status_code, 200)
        self.assertEqual(operations("tools/list"), before + 1)

    def test_an_unknown_tool_counts_its_json_rpc_code_and_no_tool_name(self) -> None:
        before = operations("tools/call", "", "-32602")

        message = envelope("tools/call", {"name": "no_such_tool", "arguments": {}})
        post_mcp(self.client, message, token=token_for(self.membership))

        self.assertEqual(operations("tools/call", "", "-32602"), before + 1)
        self.assertNotIn(b"no_such_tool", generate_latest(metrics.REGISTRY))

    def test_a_transport_error_counts_its_code(self) -> None:
        message = envelope("tools/list")
        before = sample(DURATION_COUNT, mcp_method_name=metrics.OTHER, gen_ai_tool_name="", error_type="-32020")

        post_mcp(self.client, message, token=token_for(self.membership), headers={"Mcp-Method": "tools/call"})

        self.assertEqual(
            sample(DURATION_COUNT, mcp_method_name=metrics.OTHER, gen_ai_tool_name="", error_type="-32020"), before + 1
        )

    def test_a_refused_call_counts_against_its_limit(self) -> None:
        before = sample("operator_limit_refusals_total", limit=RATE_GROUP)

        with override_settings(OPERATOR=_operator(tool_calls_per_minute=1)):
            self.call_tool(self.membership, "list_modules")
            refused = self.call_tool(self.membership, "list_modules")

        self.assertEqual(refused.error_code, "rate_limited")
        self.assertEqual(sample("operator_limit_refusals_total", limit=RATE_GROUP), before + 1)

    def test_a_call_refused_for_concurrency_counts_against_that_limit(self) -> None:
        before = sample("operator_limit_refusals_total", limit=CONCURRENCY_LIMIT)
        membership = self.membership

        with (
            override_settings(OPERATOR=_operator(tool_concurrency=1)),
            concurrency_slot(
                user_id=membership.user_id, organization_id=membership.organization_id, tool_name="list_modules"
            ),
        ):
            refused = self.call_tool(membership, "list_modules")

        self.assertEqual(refused.error_code, "concurrency_limited")
        self.assertEqual(sample("operator_limit_refusals_total", limit=CONCURRENCY_LIMIT), before + 1)

    def test_no_label_holds_a_token_an_argument_or_a_name_the_client_chose(self) -> None:
        token = token_for(self.membership)
        for value in hostile_strings():
            post_mcp(
                self.client,
                envelope("tools/call", {"name": "search_knowledge", "arguments": {"query": value}}),
                token=token,
            )
            post_mcp(self.client, envelope("tools/call", {"name": value, "arguments": {"query": value}}), token=token)
            post_mcp(self.client, envelope(value if value else "x"), token=token)

        exposition = generate_latest(metrics.REGISTRY).decode()

        self.assertNotIn(token, exposition)
        for value in hostile_strings():
            if len(value) >= 4:  # shorter ones are parts of ordinary names ("a\nb" aside, which is escaped)
                self.assertNotIn(value, exposition)
        self.assertNotIn("s3cr3t", exposition)
        self.assertNotIn("482913", exposition)


class MetricsOffTests(OperatorEndpointTestCase):
    def test_without_a_token_or_exporter_nothing_is_counted(self) -> None:
        membership = make_membership()
        before = operations("tools/call", "list_modules")

        self.call_tool(membership, "list_modules")

        self.assertFalse(metrics.counting())
        self.assertEqual(operations("tools/call", "list_modules"), before)


@override_settings(OPERATOR=_operator())
class TokenEndpointMetricsTests(OAuthTestCase):
    scope = "mcp:operator.read"

    def setUp(self) -> None:
        super().setUp()
        self.client_id = self.register()["client_id"]
        self.user = make_user()
        make_membership(user=self.user)
        self.sign_in(self.user)
        self.r0 = self.tokens_for(self.client_id, scope=self.scope)["refresh_token"]

    def outcomes(self, grant_type: str, result: str) -> float:
        return sample("operator_oauth_token_requests_total", grant_type=grant_type, result=result)

    def test_a_refresh_counts_as_issued(self) -> None:
        before = self.outcomes("refresh_token", metrics.TOKEN_ISSUED)

        self.assertEqual(self.refresh(self.client_id, self.r0).status_code, 200)

        self.assertEqual(self.outcomes("refresh_token", metrics.TOKEN_ISSUED), before + 1)

    def test_a_retry_within_the_grace_window_counts_as_a_replay(self) -> None:
        self.refresh(self.client_id, self.r0)
        before = sample("operator_oauth_refresh_grace_replays_total")

        self.assertEqual(self.refresh(self.client_id, self.r0).status_code, 200)

        self.assertEqual(sample("operator_oauth_refresh_grace_replays_total"), before + 1)

    def test_a_reuse_counts_a_family_revocation_and_invalid_grant(self) -> None:
        r1 = self.refresh(self.client_id, self.r0).json()["refresh_token"]
        self.refresh(self.client_id, r1)
        revoked = sample("operator_oauth_token_family_revocations_total", reason="successor_used")
        refused = self.outcomes("refresh_token", "invalid_grant")

        self.assertEqual(self.refresh(self.client_id, self.r0).status_code, 400)

        self.assertEqual(sample("operator_oauth_token_family_revocations_total", reason="successor_used"), revoked + 1)
        self.assertEqual(self.outcomes("refresh_token", "invalid_grant"), refused + 1)

    def test_a_grant_type_the_client_made_up_counts_as_other(self) -> None:
        before = self.outcomes(metrics.OTHER, "unsupported_grant_type")
        sent: list[Any] = []
        for value in hostile_strings():
            if "\x00" in value or any(0xD800 <= ord(character) <= 0xDFFF for character in value):
                continue  # not sendable in a form body
            sent.append(value)
            self.client.post(TOKEN, {"grant_type": value or "x", "client_id": self.client_id})

        self.assertGreater(self.outcomes(metrics.OTHER, "unsupported_grant_type"), before)
        exposition = generate_latest(metrics.REGISTRY).decode()
        for value in sent:
            if len(value) >= 4:
                self.assertNotIn(value, exposition)


class _OtlpReceiver(BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver on loopback: keeps each export's path and protobuf body."""

    received: ClassVar[list[tuple[str, bytes]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.received.append((self.path, body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return


class OtlpExportTests(OperatorEndpointTestCase):
    def test_a_tool_call_reaches_an_otlp_receiver_over_a_real_socket(self) -> None:
        receiver = ThreadingHTTPServer(("127.0.0.1", 0), _OtlpReceiver)
        threading.Thread(target=receiver.serve_forever, daemon=True).start()
        self.addCleanup(receiver.server_close)
        self.addCleanup(receiver.shutdown)
        endpoint = f"http://127.0.0.1:{receiver.server_address[1]}"
        membership = make_membership()

        # The SDK reads its own variables; the settings only say that OTLP is on.
        with (
            mock.patch.dict(os.environ, {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}),
            override_settings(OPERATOR={**settings.OPERATOR, "metrics_otlp": True}),
        ):
            try:
                self.call_tool(membership, "list_modules")
                provider = metrics._otlp_instruments()["provider"]
                provider.force_flush()
            finally:
                metrics._otlp_instruments()["provider"].shutdown()
                metrics._otlp_instruments.cache_clear()

        # The flush exports, and so does the shutdown: each holds the call.
        exports = [export for export in _OtlpReceiver.received if b"mcp.server.operation.duration" in export[1]]
        self.assertTrue(exports, _OtlpReceiver.received)
        path, body = exports[0]
        self.assertEqual(path, "/v1/metrics")
        self.assertIn(b"gen_ai.tool.name", body)
        self.assertIn(b"list_modules", body)
        self.assertNotIn(token_for(membership).encode(), body)
