import json
import random
from typing import Any
from urllib.parse import urlsplit

from django.test import TestCase

from oauth.client_secrets import client_secret_digest
from oauth.models import Application
from tests.hostile import (
    DEEP_PLACEHOLDER,
    assert_no_traceback_logged,
    hostile_object,
    hostile_value,
    json_with_deep_value,
)
from tests.oauth.client_registrations import CLIENT_REGISTRATIONS, HOSTILE_REDIRECT_URIS
from tests.support import without_oauth_rate_limits

REGISTER = "/api/auth/oauth2/register"


class RegistrationTests(TestCase):
    def register(self, **metadata: object):
        body = {"client_name": "Agent", "redirect_uris": ["https://agent.example/callback"]}
        body.update(metadata)
        return self.client.post(REGISTER, data=json.dumps(body), content_type="application/json")

    def assertRefused(self, response, error: str) -> None:
        self.assertEqual(response.status_code, 400, response.content)
        self.assertEqual(response.json()["error"], error)
        self.assertFalse(Application.objects.exists())

    def test_public_client_registers_without_an_account(self) -> None:
        response = self.register(token_endpoint_auth_method="none", redirect_uris=["http://127.0.0.1:33418/cb"])

        self.assertEqual(response.status_code, 201)
        body = response.json()
        self.assertNotIn("client_secret", body)
        self.assertEqual(body["token_endpoint_auth_method"], "none")
        application = Application.objects.get(client_id=body["client_id"])
        self.assertEqual(application.client_type, Application.CLIENT_PUBLIC)
        self.assertEqual(application.name, "Agent")

    def test_confidential_client_gets_a_secret_stored_hashed(self) -> None:
        response = self.register(token_endpoint_auth_method="client_secret_post")

        body = response.json()
        application = Application.objects.get(client_id=body["client_id"])
        self.assertEqual(application.client_type, Application.CLIENT_CONFIDENTIAL)
        self.assertNotEqual(application.client_secret, body["client_secret"])
        self.assertEqual(application.client_secret, client_secret_digest(body["client_secret"]))
        self.assertEqual(body["client_secret_expires_at"], 0)

    def test_native_client_may_use_a_private_use_scheme(self) -> None:
        response = self.register(application_type="native", redirect_uris=["com.example.agent:/oauth/callback"])

        self.assertEqual(response.status_code, 201, response.content)
        self.assertEqual(response.json()["application_type"], "native")
        self.assertEqual(Application.objects.get().application_type, "native")

    def test_private_use_scheme_needs_no_application_type(self) -> None:
        response = self.register(redirect_uris=["cursor://anysphere.cursor-mcp/oauth/callback"])

        self.assertEqual(response.status_code, 201, response.content)

    def test_web_client_may_use_a_private_use_scheme_too(self) -> None:
        response = self.register(application_type="web", redirect_uris=["com.example.agent:/oauth/callback"])

        self.assertEqual(response.status_code, 201, response.content)

    def test_plain_http_to_a_named_host_is_refused(self) -> None:
        response = self.register(redirect_uris=["http://agent.example/callback"])

        self.assertRefused(response, "invalid_redirect_uri")

    def test_javascript_scheme_is_refused_even_for_native_clients(self) -> None:
        response = self.register(application_type="native", redirect_uris=["javascript:alert(1)"])

        self.assertRefused(response, "invalid_redirect_uri")

    def test_redirect_uri_with_a_fragment_is_refused(self) -> None:
        response = self.register(redirect_uris=["https://agent.example/callback#frag"])

        self.assertRefused(response, "invalid_redirect_uri")

    def test_missing_redirect_uris_are_refused(self) -> None:
        response = self.register(redirect_uris=[])

        self.assertRefused(response, "invalid_redirect_uri")

    def test_unknown_application_type_is_refused(self) -> None:
        response = self.register(application_type="service")

        self.assertRefused(response, "invalid_client_metadata")

    def test_application_type_that_is_not_a_string_is_refused(self) -> None:
        response = self.register(application_type=["web"])

        self.assertRefused(response, "invalid_client_metadata")

    def test_grant_types_holding_a_non_string_are_refused(self) -> None:
        response = self.register(grant_types=[["authorization_code"]])

        self.assertRefused(response, "invalid_client_metadata")

    def test_client_credentials_grant_is_refused(self) -> None:
        response = self.register(grant_types=["client_credentials"])

        self.assertRefused(response, "invalid_client_metadata")

    def test_implicit_response_type_is_refused(self) -> None:
        response = self.register(response_types=["token"])

        self.assertRefused(response, "invalid_client_metadata")

    def test_body_that_is_not_json_is_refused(self) -> None:
        response = self.client.post(REGISTER, data="not json", content_type="application/json")

        self.assertRefused(response, "invalid_client_metadata")

    def test_unsupported_auth_method_is_refused(self) -> None:
        response = self.register(token_endpoint_auth_method="private_key_jwt")

        self.assertRefused(response, "invalid_client_metadata")

    def test_body_nested_100000_levels_deep_is_refused(self) -> None:
        body = json_with_deep_value({"client_name": "Agent", "redirect_uris": [DEEP_PLACEHOLDER]})

        with assert_no_traceback_logged(self):
            response = self.client.post(REGISTER, data=body, content_type="application/json")

        self.assertRefused(response, "invalid_client_metadata")

    def test_lone_surrogate_in_the_client_name_is_refused(self) -> None:
        with assert_no_traceback_logged(self):
            response = self.register(client_name="Agent \ud800")

        self.assertRefused(response, "invalid_client_metadata")

    def test_nul_in_the_client_name_is_refused(self) -> None:
        response = self.register(client_name="Agent\x00")

        self.assertRefused(response, "invalid_client_metadata")

    def test_control_character_anywhere_in_the_metadata_is_refused(self) -> None:
        for metadata in ({"client_name": "\x1b[31mAgent"}, {"scope": "mcp:operator.read\n"}, {"x-note": ["\x7f"]}):
            with self.subTest(metadata=metadata):
                self.assertRefused(self.register(**metadata), "invalid_client_metadata")

    def test_client_name_that_is_not_a_string_is_refused(self) -> None:
        for name in ({"a": 1}, 123, ["a", "b"], True):
            with self.subTest(client_name=name):
                self.assertRefused(self.register(client_name=name), "invalid_client_metadata")

    def test_null_client_name_counts_as_absent(self) -> None:
        response = self.register(client_name=None)

        self.assertEqual(response.status_code, 201, response.content)
        self.assertEqual(Application.objects.get().name, "")

    def test_control_character_or_whitespace_in_a_redirect_uri_is_refused(self) -> None:
        for uri in (
            "https://agent.example/cb\x00",
            "https://agent.example/c\x01b",
            "https://agent.example/cb\n",
            "https://agent.example/\x7fcb",
            "https://agent.example/cb\x85",
            "http://127.0.0.1/cb javascript:alert(1)",
        ):
            with self.subTest(uri=uri):
                self.assertRefused(self.register(redirect_uris=[uri]), "invalid_redirect_uri")

    # 200 registrations in one test: past the per-address limit, which tests/oauth/test_limits.py covers.
    @without_oauth_rate_limits()
    def test_hostile_metadata_is_refused_with_rfc7591_errors(self) -> None:
        rng = random.Random(20261121)
        keys = ["client_name", "redirect_uris", "grant_types", "response_types", "token_endpoint_auth_method"]
        keys += ["application_type", "scope", "client_uri", "jwks"]
        errors = set()

        for number in range(200):
            body = hostile_object(rng, keys=keys) if number % 10 else hostile_value(rng)
            response = self.client.post(REGISTER, data=json.dumps(body), content_type="application/json")
            self.assertEqual(response.status_code, 400, body)
            errors.add(response.json()["error"])

        self.assertLessEqual(errors, {"invalid_client_metadata", "invalid_redirect_uri"})
        self.assertFalse(Application.objects.exists())


@without_oauth_rate_limits()
class RealClientRegistrationTests(TestCase):
    """The bodies of tests/oauth/client_registrations.py, each accepted, each hostile variant refused."""

    def post(self, body: dict) -> Any:
        return self.client.post(REGISTER, data=json.dumps(body), content_type="application/json")

    def test_every_major_client_registers_as_it_is(self) -> None:
        for client, body in CLIENT_REGISTRATIONS.items():
            with self.subTest(client=client):
                response = self.post(body)

                self.assertEqual(response.status_code, 201, response.content)
                registered = response.json()
                self.assertEqual(registered["redirect_uris"], body["redirect_uris"])
                application = Application.objects.get(client_id=registered["client_id"])
                self.assertEqual(application.redirect_uris.split(), body["redirect_uris"])

    def test_each_client_is_sent_back_to_each_of_its_redirect_uris(self) -> None:
        for client, body in CLIENT_REGISTRATIONS.items():
            application = Application.objects.get(client_id=self.post(body).json()["client_id"])
            for uri in body["redirect_uris"]:
                with self.subTest(client=client, uri=uri):
                    self.assertTrue(application.redirect_uri_allowed(uri))
                    self.assertIn(urlsplit(uri).scheme, application.get_allowed_schemes())

    def test_a_hostile_redirect_uri_beside_each_client_s_own_is_refused(self) -> None:
        for client, body in CLIENT_REGISTRATIONS.items():
            for uri, error in HOSTILE_REDIRECT_URIS.items():
                with self.subTest(client=client, uri=uri):
                    response = self.post({**body, "redirect_uris": [*body["redirect_uris"], uri]})

                    self.assertEqual(response.status_code, 400, response.content)
                    self.assertEqual(response.json()["error"], error)
        self.assertFalse(Application.objects.exists())

    def test_a_hostile_redirect_uri_is_refused_for_native_clients_too(self) -> None:
        for uri, error in HOSTILE_REDIRECT_URIS.items():
            with self.subTest(uri=uri):
                response = self.post(
                    {**CLIENT_REGISTRATIONS["cursor"], "application_type": "native", "redirect_uris": [uri]}
                )

                self.assertEqual(response.json()["error"], error)
        self.assertFalse(Application.objects.exists())
