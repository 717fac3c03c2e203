"""Deprecation headers of docs/versioning.md, driven by OPERATOR["protocol_revisions"]."""

from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.test import TestCase, override_settings
from django.utils.http import http_date

from organizations.models import Role
from tests.factories import make_membership, token_for
from tests.mcp_requests import OPERATOR_PATH, PROTOCOL_VERSION, envelope, post_mcp

ANNOUNCED = datetime(2026, 9, 1, tzinfo=UTC)
SUNSET = datetime.now(UTC).replace(microsecond=0) + timedelta(days=120)
POLICY = "http://testserver/docs/versioning"
DEPRECATED = {
    **settings.OPERATOR,
    "protocol_revisions": [{"version": PROTOCOL_VERSION, "deprecated_at": ANNOUNCED, "sunset_at": SUNSET}],
}
SUNSET_PASSED = {
    **settings.OPERATOR,
    "protocol_revisions": [
        {"version": PROTOCOL_VERSION, "deprecated_at": ANNOUNCED, "sunset_at": datetime(2026, 1, 1, tzinfo=UTC)}
    ],
}
VERSION_HEADERS = ("Deprecation", "Sunset", "Link")


class VersioningTestCase(TestCase):
    def setUp(self) -> None:
        self.token = token_for(make_membership(role=Role.MEMBER))

    def assert_no_version_headers(self, response) -> None:
        for header in VERSION_HEADERS:
            self.assertNotIn(header, response)


class NoDeprecationTodayTests(VersioningTestCase):
    def test_no_response_carries_version_headers_today(self) -> None:
        response = post_mcp(self.client, envelope("server/discover"), token=self.token)

        self.assertEqual(response.status_code, 200)
        self.assert_no_version_headers(response)


@override_settings(OPERATOR=DEPRECATED)
class DeprecatedRevisionTests(VersioningTestCase):
    def test_exchange_naming_the_revision_carries_the_three_headers(self) -> None:
        response = post_mcp(self.client, envelope("server/discover"), token=self.token)

        self.assertEqual(response.status_code, 200)
        self.assertEqual(response["Deprecation"], f"@{int(ANNOUNCED.timestamp())}")
        self.assertEqual(response["Sunset"], http_date(SUNSET.timestamp()))
        self.assertEqual(response["Link"], f'<{POLICY}>; rel="deprecation", <{POLICY}>; rel="sunset"')

    def test_a_deprecated_revision_is_still_served(self) -> None:
        response = post_mcp(self.client, envelope("tools/list"), token=self.token)

        self.assertEqual(response.status_code, 200)

    def test_revision_named_only_in_meta_carries_the_headers(self) -> None:
        response = post_mcp(self.client, envelope("tools/list"), token=self.token, omit=("MCP-Protocol-Version",))

        self.assertIn("Deprecation", response)

    def test_error_of_an_exchange_that_reached_the_server_carries_the_headers(self) -> None:
        response = post_mcp(self.client, envelope("tools/list"), token=self.token, omit=("Mcp-Method",))

        self.assertEqual(response.status_code, 400)
        self.assertIn("Deprecation", response)

    def test_authenticated_get_naming_the_revision_carries_the_headers(self) -> None:
        response = self.client.get(
            OPERATOR_PATH, headers={"Authorization": f"Bearer {self.token}", "MCP-Protocol-Version": PROTOCOL_VERSION}
        )

        self.assertEqual(response.status_code, 405)
        self.assertIn("Deprecation", response)

    def test_exchange_naming_no_revision_carries_none(self) -> None:
        response = self.client.get(OPERATOR_PATH, headers={"Authorization": f"Bearer {self.token}"})

        self.assertEqual(response.status_code, 405)
        self.assert_no_version_headers(response)

    def test_401_never_carries_them(self) -> None:
        response = post_mcp(self.client, envelope("server/discover"))

        self.assertEqual(response.status_code, 401)
        self.assert_no_version_headers(response)

    def test_403_never_carries_them(self) -> None:
        token = token_for(make_membership(), scopes=("openid",))

        response = post_mcp(self.client, envelope("server/discover"), token=token)

        self.assertEqual(response.status_code, 403)
        self.assert_no_version_headers(response)

    def test_preflight_never_carries_them(self) -> None:
        response = self.client.options(
            OPERATOR_PATH,
            headers={
                "Origin": "https://app.example",
                "Access-Control-Request-Method": "POST",
                "MCP-Protocol-Version": PROTOCOL_VERSION,
            },
        )

        self.assertEqual(response.status_code, 200)
        self.assert_no_version_headers(response)

    def test_plain_options_never_carries_them(self) -> None:
        response = self.client.options(OPERATOR_PATH, headers={"MCP-Protocol-Version": PROTOCOL_VERSION})

        self.assert_no_version_headers(response)

    def test_unknown_path_404_never_carries_them(self) -> None:
        response = self.client.post(
            "/api/mcp/nowhere",
            data="{}",
            content_type="application/json",
            headers={"Authorization": f"Bearer {self.token}", "MCP-Protocol-Version": PROTOCOL_VERSION},
        )

        self.assertEqual(response.status_code, 404)
        self.assert_no_version_headers(response)

    def test_well_known_mcp_still_lists_the_revision_with_its_dates(self) -> None:
        document = self.client.get("/.well-known/mcp").json()["mcp"]

        self.assertEqual(document["protocolVersions"], [PROTOCOL_VERSION])
        self.assertEqual(document["revisions"][0]["sunsetAt"], SUNSET.isoformat())


@override_settings(OPERATOR=SUNSET_PASSED)
class RevisionPastSunsetTests(VersioningTestCase):
    def test_revision_past_its_sunset_is_unsupported_with_no_downgrade(self) -> None:
        response = post_mcp(self.client, envelope("server/discover"), token=self.token)

        self.assertEqual(response.status_code, 400)
        self.assertEqual(response.json()["error"]["code"], -32022)
        self.assertEqual(response.json()["error"]["data"]["supported"], [])

    def test_well_known_mcp_no_longer_lists_it(self) -> None:
        document = self.client.get("/.well-known/mcp").json()["mcp"]

        self.assertEqual(document["protocolVersions"], [])
