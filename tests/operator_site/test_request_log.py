"""One JSON record per request, with a request id, and no secret in any log line of a whole flow."""

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager

from django.test import override_settings

from operator_core.log_format import JsonLogFormatter
from operator_core.request_log import REQUEST_ID_HEADER
from organizations.models import Role
from tests.agent_auth.support import HeadlessTestCase
from tests.factories import PASSWORD, make_membership
from tests.mcp_requests import envelope, post_mcp
from tests.oauth.support import OAuthTestCase

SIGN_IN = "/api/auth/sign-in"
REQUEST_LOGGER = "operator.requests"


@contextmanager
def captured_json_log(test: object) -> Iterator[list[str]]:
    """Every log record of the block, from every logger, formatted as LOG_FORMAT=json writes it."""
    lines: list[str] = []
    request_logger = logging.getLogger(REQUEST_LOGGER)
    previous = request_logger.level
    request_logger.setLevel(logging.INFO)
    try:
        with test.assertLogs(level="DEBUG") as captured:  # type: ignore[attr-defined]
            logging.getLogger(REQUEST_LOGGER).info("capture started")
            yield lines
    finally:
        request_logger.setLevel(previous)
    formatter = JsonLogFormatter()
    lines.extend(formatter.format(record) for record in captured.records)


def request_records(lines: list[str]) -> list[dict[str, object]]:
    records = [json.loads(line) for line in lines]
    return [record for record in records if record["logger"] == REQUEST_LOGGER and "status" in record]


class OAuthFlowLogTests(OAuthTestCase):
    def test_flow_and_tool_calls_log_request_ids_and_no_secret(self) -> None:
        membership = make_membership(role=Role.MEMBER)
        with captured_json_log(self) as lines:
            client = self.register(token_endpoint_auth_method="client_secret_post")
            signed_in = self.browser.post(SIGN_IN, {"email": membership.user.email, "password": PASSWORD})
            self.assertEqual(signed_in.status_code, 200)
            authorization = self.authorize(client["client_id"])
            tokens = self.exchange(client["client_id"], authorization, client_secret=client["client_secret"]).json()
            refreshed = self.refresh(
                client["client_id"], tokens["refresh_token"], client_secret=client["client_secret"]
            ).json()
            called = post_mcp(
                self.api,
                envelope("tools/call", {"name": "list_modules", "arguments": {}}),
                token=refreshed["access_token"],
            )
            self.assertEqual(called.status_code, 200)
        secrets = {
            "access token": tokens["access_token"],
            "refreshed access token": refreshed["access_token"],
            "refresh token": tokens["refresh_token"],
            "new refresh token": refreshed["refresh_token"],
            "authorization code": authorization.code,
            "code verifier": authorization.verifier,
            "client secret": client["client_secret"],
            "password": PASSWORD,
            "session cookie": self.browser.cookies["sessionid"].value,
        }
        text = "\n".join(lines)
        for name, value in secrets.items():
            self.assertNotIn(value, text, f"the {name} reached a log line")
        records = request_records(lines)
        self.assertGreaterEqual(len(records), 6)
        self.assertTrue(all(record["request_id"] for record in records))
        call = records[-1]
        self.assertEqual(call["mcp_method"], "tools/call")
        self.assertEqual(call["tool"], "list_modules")
        self.assertEqual(call["outcome"], "ok")
        self.assertEqual(call["user_id"], membership.user.pk)
        self.assertEqual(call["organization_id"], str(membership.organization_id))
        self.assertEqual(called[REQUEST_ID_HEADER], call["request_id"])

    def test_request_id_of_an_untrusted_client_is_replaced(self) -> None:
        response = self.api.get("/.well-known/mcp", headers={REQUEST_ID_HEADER: "client-chosen-id"})
        self.assertNotEqual(response[REQUEST_ID_HEADER], "client-chosen-id")

    def test_request_id_of_a_trusted_proxy_is_kept(self) -> None:
        with override_settings(OPERATOR={**self.operator_values(), "trusted_proxies": 1}):
            response = self.api.get("/.well-known/mcp", headers={REQUEST_ID_HEADER: "proxy-id-42"})
        self.assertEqual(response[REQUEST_ID_HEADER], "proxy-id-42")

    def test_request_id_of_a_direct_client_is_replaced_even_with_a_proxy_configured(self) -> None:
        with override_settings(OPERATOR={**self.operator_values(), "trusted_proxies": 1}):
            response = self.api.get(
                "/.well-known/mcp", headers={REQUEST_ID_HEADER: "client-chosen-id"}, REMOTE_ADDR="192.0.2.44"
            )
        self.assertNotEqual(response[REQUEST_ID_HEADER], "client-chosen-id")

    def test_malformed_proxy_request_id_is_replaced(self) -> None:
        with override_settings(OPERATOR={**self.operator_values(), "trusted_proxies": 1}):
            response = self.api.get("/.well-known/mcp", headers={REQUEST_ID_HEADER: "bad id\twith spaces"})
        self.assertNotIn(" ", response[REQUEST_ID_HEADER])

    @staticmethod
    def operator_values() -> dict[str, object]:
        from django.conf import settings

        return dict(settings.OPERATOR)


class HeadlessClaimLogTests(HeadlessTestCase):
    address = "203.0.113.77"

    def test_headless_claim_logs_no_code_and_no_claim_token(self) -> None:
        membership = make_membership(role=Role.MEMBER)
        with captured_json_log(self) as lines:
            claim_token, code = self.start_and_read_code(membership.user.email)
            completed = self.complete(claim_token, code)
            self.assertEqual(completed.status_code, 200, completed.content)
        text = "\n".join(lines)
        self.assertNotIn(claim_token, text)
        self.assertNotIn(code, text)
        self.assertNotIn(completed.json()["access_token"], text)
        self.assertTrue(all(record["request_id"] for record in request_records(lines)))
