"""Limits of the OAuth endpoints: per address on token, registration, authorization and revocation,
per client on token; a refusal is 429 with Retry-After and an OAuth error (docs/limits.md#request-rates).
Registration can be closed or restricted to listed redirect hosts."""

import json

from django.conf import settings
from django.test import override_settings

from oauth.models import Application
from tests.oauth.support import AUTHORIZE, REGISTER, REVOKE, TOKEN, OAuthTestCase
from tests.support import pinned_clock

LIMIT = 3
LIMITED = {
    **settings.OPERATOR,
    "oauth_token_requests_per_minute": LIMIT,
    "oauth_token_requests_per_client_per_minute": LIMIT,
    "oauth_registrations_per_hour": LIMIT,
    "oauth_authorizations_per_minute": LIMIT,
    "oauth_revocations_per_minute": LIMIT,
}
REGISTRATION = {
    "client_name": "Agent",
    "redirect_uris": ["https://agent.example/cb"],
    "token_endpoint_auth_method": "none",
}


@override_settings(OPERATOR=LIMITED)
class EndpointLimitTests(OAuthTestCase):
    def token_request(self, *, address: str = "203.0.113.1", client_id: str = "some-client"):
        data = {"grant_type": "authorization_code", "code": "nope", "client_id": client_id, "code_verifier": "x" * 43}
        return self.api.post(TOKEN, data, REMOTE_ADDR=address)

    def register_from(self, address: str):
        return self.api.post(REGISTER, json.dumps(REGISTRATION), content_type="application/json", REMOTE_ADDR=address)

    def assertRateLimited(self, response, *, retry_after: int) -> None:
        self.assertEqual(response.status_code, 429, response.content)
        self.assertEqual(response["Retry-After"], str(retry_after))
        self.assertEqual(response.json()["error"], "temporarily_unavailable")
        self.assertIn("error_description", response.json())

    def test_the_token_request_past_the_limit_from_one_address_is_429(self) -> None:
        with pinned_clock() as clock:
            answered = [self.token_request(client_id=f"client-{n}").status_code for n in range(LIMIT)]
            clock.advance(20)
            refused = self.token_request(client_id="client-x")

        self.assertNotIn(429, answered)
        self.assertRateLimited(refused, retry_after=40)

    def test_another_address_and_the_next_window_are_counted_afresh(self) -> None:
        with pinned_clock() as clock:
            for n in range(LIMIT + 1):
                self.token_request(client_id=f"client-{n}")
            other_address = self.token_request(address="203.0.113.2", client_id="client-y")
            clock.advance(60)
            next_window = self.token_request(client_id="client-z")

        self.assertNotEqual(other_address.status_code, 429)
        self.assertNotEqual(next_window.status_code, 429)

    def test_token_requests_naming_one_client_are_limited_across_addresses(self) -> None:
        with pinned_clock():
            answered = [self.token_request(address=f"198.51.100.{n}").status_code for n in range(LIMIT)]
            refused = self.token_request(address="198.51.100.99")

        self.assertNotIn(429, answered)
        self.assertRateLimited(refused, retry_after=60)

    def test_the_registration_past_the_limit_from_one_address_is_429(self) -> None:
        with pinned_clock():
            answered = [self.register_from("203.0.113.5").status_code for _ in range(LIMIT)]
            refused = self.register_from("203.0.113.5")

        self.assertEqual(answered, [201] * LIMIT)
        self.assertRateLimited(refused, retry_after=3600)
        self.assertEqual(Application.objects.count(), LIMIT)

    def test_authorization_and_revocation_are_limited_per_address(self) -> None:
        requests = {
            "authorize": lambda: self.browser.get(AUTHORIZE, {"client_id": "x"}, REMOTE_ADDR="203.0.113.6"),
            "revoke": lambda: self.api.post(REVOKE, {"token": "t", "client_id": "x"}, REMOTE_ADDR="203.0.113.7"),
        }
        for name, send in requests.items():
            with self.subTest(endpoint=name), pinned_clock():
                answered = [send().status_code for _ in range(LIMIT)]
                refused = send()

                self.assertNotIn(429, answered)
                self.assertRateLimited(refused, retry_after=60)


class RegistrationPolicyTests(OAuthTestCase):
    def post_registration(self, redirect_uri: str):
        body = {**REGISTRATION, "redirect_uris": [redirect_uri]}
        return self.api.post(REGISTER, json.dumps(body), content_type="application/json")

    def test_registration_is_open_by_default(self) -> None:
        self.assertEqual(self.post_registration("https://anywhere.example/cb").status_code, 201)

    @override_settings(OPERATOR={**settings.OPERATOR, "client_registration": "closed"})
    def test_closed_registration_is_403_and_left_out_of_the_metadata(self) -> None:
        response = self.post_registration("https://anywhere.example/cb")

        self.assertEqual(response.status_code, 403)
        self.assertEqual(response.json()["error"], "access_denied")
        self.assertFalse(Application.objects.exists())
        metadata = self.api.get("/.well-known/oauth-authorization-server").json()
        self.assertNotIn("registration_endpoint", metadata)

    @override_settings(OPERATOR={**settings.OPERATOR, "registration_redirect_hosts": ["claude.ai", "127.0.0.1"]})
    def test_an_allow_list_admits_only_redirect_uris_on_its_hosts(self) -> None:
        listed = self.post_registration("https://claude.ai/api/mcp/auth_callback")
        loopback = self.post_registration("http://127.0.0.1:33418/cb")
        unlisted = self.post_registration("https://evil.example/cb")

        self.assertEqual((listed.status_code, loopback.status_code), (201, 201))
        self.assertEqual(unlisted.status_code, 400)
        self.assertEqual(unlisted.json()["error"], "invalid_redirect_uri")
