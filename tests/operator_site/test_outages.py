"""Outages in one process: every API path answers in its own format, never HTML or a bare 500.

docs/operations.md#outages is the policy. A Redis outage is real here: the
cache points at a loopback port nobody listens on. A database outage is the
`OperationalError` Django raises when PostgreSQL restarts, raised by the query
of each path (a restart inside one test process would take the test's own
connection with it; tests/faults restarts a real PostgreSQL under gunicorn).
"""

from __future__ import annotations

import json
import logging
from typing import Any
from unittest import mock

from django.conf import settings
from django.db import OperationalError
from django.test import TestCase, override_settings

from operator_core import rate_limits
from operator_core.errors import OUTAGE_RETRY_AFTER_SECONDS, ErrorCode
from operator_core.mcp.jsonrpc import JSONRPC_TEMPORARILY_UNAVAILABLE
from organizations.models import Role
from tests.agent_auth.support import START_URL, fresh_address, post_json
from tests.factories import PASSWORD, make_membership, make_user, token_for
from tests.live_servers import free_port
from tests.mcp_operator.base import OperatorEndpointTestCase
from tests.mcp_requests import DOCS_PATH, envelope, post_mcp
from tests.oauth.support import REGISTER, TOKEN
from tests.support import pinned_clock, validate_against_mcp_schema

SIGN_IN = "/api/auth/sign-in"
RESTARTING = OperationalError("terminating connection due to administrator command")
_QUIET = ("operator_core", "operator_site", "agent_auth", "mcp_operator", "django.request")


def unreachable_redis() -> override_settings:
    """Django's cache on Redis at a loopback port where nothing listens: every command is refused."""
    location = f"redis://127.0.0.1:{free_port()}/0"
    cache = {**settings.CACHES["default"], "BACKEND": "django.core.cache.backends.redis.RedisCache"}
    return override_settings(CACHES={"default": {**cache, "LOCATION": location}})


class OutageTestCase(TestCase):
    def setUp(self) -> None:
        super().setUp()
        rate_limits.OUTAGE_STORE.clear()
        self.enterContext(pinned_clock())
        for name in _QUIET:
            logger = logging.getLogger(name)
            self.addCleanup(logger.setLevel, logger.level)
            logger.setLevel(logging.CRITICAL)

    def assert_retry_after(self, response: Any) -> None:
        self.assertEqual(response["Retry-After"], str(OUTAGE_RETRY_AFTER_SECONDS))

    def assert_jsonrpc_unavailable(self, response: Any) -> dict[str, Any]:
        self.assertEqual(response.status_code, 503)
        self.assertEqual(response["Content-Type"], "application/json")
        self.assert_retry_after(response)
        body = response.json()
        validate_against_mcp_schema(body, "JSONRPCErrorResponse")
        self.assertEqual(body["error"]["code"], JSONRPC_TEMPORARILY_UNAVAILABLE)
        self.assertEqual(body["error"]["data"]["code"], ErrorCode.TEMPORARILY_UNAVAILABLE)
        self.assertEqual(body["error"]["data"]["retryAfterSeconds"], OUTAGE_RETRY_AFTER_SECONDS)
        return body

    def assert_headless_unavailable(self, response: Any) -> None:
        self.assertEqual(response.status_code, 503)
        self.assert_retry_after(response)
        error = response.json()["error"]
        self.assertEqual(error["code"], ErrorCode.TEMPORARILY_UNAVAILABLE)
        self.assertEqual(error["retryAfterSeconds"], OUTAGE_RETRY_AFTER_SECONDS)

    def assert_oauth_unavailable(self, response: Any) -> None:
        self.assertEqual(response.status_code, 503)
        self.assert_retry_after(response)
        self.assertEqual(response["Content-Type"], "application/json")
        self.assertEqual(response.json()["error"], "temporarily_unavailable")
        self.assertEqual(response["Cache-Control"], "no-store")


class DatabaseOutageTests(OutageTestCase, OperatorEndpointTestCase):
    def test_operator_authentication_meeting_a_database_outage_is_a_jsonrpc_503(self) -> None:
        token = token_for(make_membership(role=Role.MEMBER))
        # A tool call reads the access with its first read (the next test's case); any other
        # request reads it alone, before its answer.
        message = envelope("tools/list", {}, request_id=7)

        with mock.patch("mcp_operator.auth.operator_access_or_none", side_effect=RESTARTING):
            response = post_mcp(self.client, message, token=token)

        body = self.assert_jsonrpc_unavailable(response)
        self.assertNotIn("id", body)
        self.assertNotIn(b"administrator", response.content)

    def test_a_tool_meeting_a_database_outage_answers_temporarily_unavailable(self) -> None:
        member = make_membership(role=Role.MEMBER)

        with mock.patch("mcp_operator.tools.list_modules.modules_for_organization", side_effect=RESTARTING):
            result = self.call_tool(member, "list_modules")

        self.assertEqual(result.error_code, ErrorCode.TEMPORARILY_UNAVAILABLE)
        self.assertEqual(result.error["retryAfterSeconds"], OUTAGE_RETRY_AFTER_SECONDS)
        self.assertTrue(result.result["isError"])

    def test_a_tool_calls_access_read_meeting_a_database_outage_answers_temporarily_unavailable(self) -> None:
        member = make_membership(role=Role.MEMBER)

        with mock.patch("mcp_operator.auth.operator_access_statement", side_effect=RESTARTING):
            result = self.call_tool(member, "list_modules")

        self.assertEqual(result.error_code, ErrorCode.TEMPORARILY_UNAVAILABLE)
        self.assertEqual(result.error["retryAfterSeconds"], OUTAGE_RETRY_AFTER_SECONDS)

    def test_a_headless_registration_meeting_a_database_outage_is_a_json_503(self) -> None:
        user = make_membership().user

        with mock.patch("agent_auth.views.start_claim", side_effect=RESTARTING):
            response = post_json(self.client, START_URL, {"email": user.email}, address=fresh_address())

        self.assert_headless_unavailable(response)

    def test_the_token_endpoint_meeting_a_database_outage_is_an_oauth_503(self) -> None:
        with mock.patch("oauth.endpoint_views.dot_views.TokenView.post", side_effect=RESTARTING):
            response = self.client.post(TOKEN, {"grant_type": "authorization_code", "code": "x", "client_id": "y"})

        self.assert_oauth_unavailable(response)

    def test_registration_meeting_a_database_outage_is_an_oauth_503(self) -> None:
        body = {
            "client_name": "Agent",
            "redirect_uris": ["http://127.0.0.1:8765/cb"],
            "token_endpoint_auth_method": "none",
        }

        with mock.patch("oauth.endpoint_views.register_client", side_effect=RESTARTING):
            response = self.client.post(REGISTER, json.dumps(body), content_type="application/json")

        self.assert_oauth_unavailable(response)

    def test_the_sign_in_page_meeting_a_database_outage_is_its_own_page_with_503(self) -> None:
        user = make_user()

        with mock.patch("oauth.sign_in_views.authenticate", side_effect=RESTARTING):
            response = self.client.post(SIGN_IN, {"email": user.email, "password": PASSWORD, "next": ""})

        self.assertEqual(response.status_code, 503)
        self.assert_retry_after(response)
        self.assertContains(response, "Temporarily unavailable", status_code=503)

    def test_a_bug_is_still_an_internal_error_in_the_paths_format(self) -> None:
        with mock.patch("oauth.endpoint_views.register_client", side_effect=RuntimeError("secret detail")):
            response = self.client.post(REGISTER, "{}", content_type="application/json")

        self.assertEqual(response.status_code, 500)
        self.assertEqual(response.json()["error"], "server_error")
        self.assertNotIn(b"secret detail", response.content)


class RedisOutageTests(OutageTestCase, OperatorEndpointTestCase):
    """Each limiter's outage policy, with Redis refusing every connection."""

    def setUp(self) -> None:
        super().setUp()
        self.enterContext(unreachable_redis())

    @override_settings(OPERATOR={**settings.OPERATOR, "tool_calls_per_minute": 2})
    def test_tool_calls_count_in_this_process_while_redis_is_away(self) -> None:
        member = make_membership(role=Role.MEMBER)

        answers = [self.call_tool(member, "list_modules").error_code for _ in range(3)]

        self.assertEqual(answers, [None, None, ErrorCode.RATE_LIMITED])

    @override_settings(OPERATOR={**settings.OPERATOR, "docs_calls_per_minute": 2})
    def test_the_docs_endpoint_counts_in_this_process_while_redis_is_away(self) -> None:
        message = envelope("tools/list")

        statuses = [post_mcp(self.client, message, path=DOCS_PATH).status_code for _ in range(3)]

        self.assertEqual(statuses, [200, 200, 429])

    def test_sign_in_fails_closed_with_its_page_and_503(self) -> None:
        user = make_user()

        response = self.client.post(SIGN_IN, {"email": user.email, "password": PASSWORD, "next": ""})

        self.assertEqual(response.status_code, 503)
        self.assert_retry_after(response)
        self.assertContains(response, "briefly unavailable", status_code=503)
        self.assertNotIn("_auth_user_id", self.client.session)

    def test_headless_registration_fails_closed_with_a_json_503(self) -> None:
        user = make_membership().user

        response = post_json(self.client, START_URL, {"email": user.email}, address=fresh_address())

        self.assert_headless_unavailable(response)

    def test_a_refused_headless_request_frees_its_idempotency_key(self) -> None:
        user = make_membership().user
        address = fresh_address()
        post_json(self.client, START_URL, {"email": user.email}, address=address, idempotency_key="k-1")

        with override_settings(CACHES={"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}):
            response = post_json(self.client, START_URL, {"email": user.email}, address=address, idempotency_key="k-1")

        self.assertEqual(response.status_code, 202)
        self.assertNotIn("Idempotent-Replayed", response)
