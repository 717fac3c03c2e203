"""Client metadata over a bound is refused with `invalid_client_metadata` naming it, and nothing is stored.

The bounds are oauth/metadata_bounds.py's (docs/limits.md#registered-clients):
10 redirect URIs, 2,000 characters per URI, 255 for `client_name` and the
other short members, 1,000 for `scope`, 10 items per array, 16 KiB in all.
One registration once held 31,000 redirect URIs, and every later
authorization request naming it compared against all of them.
"""

import json
from typing import Any

from django.core.cache import cache
from django.test import TestCase

from oauth.cimd import CimdFailure
from oauth.models import Application
from organizations.models import Role
from tests.factories import make_membership
from tests.oauth.support import AUTHORIZE, OAuthTestCase, pkce_pair
from tests.oauth.test_cimd import CLIENT_ID, LocalDocumentFetcher, ServedResponse, served, with_fetcher
from tests.support import CIMD_LOGGER, quiet_loggers, without_oauth_rate_limits

REGISTER = "/api/auth/oauth2/register"


def callbacks(count: int, *, length: int = 40) -> list[str]:
    """`count` distinct https redirect URIs of exactly `length` characters each."""
    uris = []
    for number in range(count):
        prefix = f"https://agent.example/{number}/"
        uris.append(prefix + "c" * (length - len(prefix)))
    return uris


@without_oauth_rate_limits()
class RegistrationBoundTests(TestCase):
    def register(self, **metadata: Any) -> Any:
        body = {"client_name": "Agent", "redirect_uris": ["https://agent.example/callback"], **metadata}
        return self.client.post(REGISTER, data=json.dumps(body), content_type="application/json")

    def assertRefusedNaming(self, response: Any, *words: str) -> None:
        self.assertEqual(response.status_code, 400, response.content[:300])
        body = response.json()
        self.assertEqual(body["error"], "invalid_client_metadata")
        for word in words:
            self.assertIn(word, body["error_description"])
        self.assertFalse(Application.objects.exists())

    def test_ten_redirect_uris_register(self) -> None:
        response = self.register(redirect_uris=callbacks(10))

        self.assertEqual(response.status_code, 201, response.content)

    def test_an_eleventh_redirect_uri_is_refused(self) -> None:
        self.assertRefusedNaming(self.register(redirect_uris=callbacks(11)), "redirect_uris", "10")

    def test_the_reported_31000_redirect_uris_are_refused(self) -> None:
        uris = callbacks(31_000, length=29)
        # As reported: under the 1 MiB body cap, so the metadata bound, not the body's, refuses it.
        self.assertLess(len(json.dumps({"redirect_uris": uris})), 1024 * 1024)

        self.assertRefusedNaming(self.register(redirect_uris=uris), "16384 bytes")

    def test_a_redirect_uri_of_2000_characters_registers(self) -> None:
        response = self.register(redirect_uris=callbacks(1, length=2_000))

        self.assertEqual(response.status_code, 201, response.content)

    def test_a_redirect_uri_over_2000_characters_is_refused(self) -> None:
        response = self.register(redirect_uris=callbacks(1, length=2_001))

        self.assertRefusedNaming(response, "redirect_uris[0]", "2000")

    def test_every_other_uri_member_over_2000_characters_is_refused(self) -> None:
        for member in ("client_uri", "logo_uri", "tos_uri", "policy_uri", "jwks_uri"):
            with self.subTest(member):
                response = self.register(**{member: callbacks(1, length=2_001)[0]})

                self.assertRefusedNaming(response, member, "2000")

    def test_a_client_name_over_255_characters_is_refused(self) -> None:
        self.assertRefusedNaming(self.register(client_name="n" * 256), "client_name", "255")

    def test_a_language_tagged_client_name_has_the_same_bound(self) -> None:
        self.assertRefusedNaming(self.register(**{"client_name#ja": "n" * 256}), "client_name#ja", "255")

    def test_a_scope_over_1000_characters_is_refused(self) -> None:
        self.assertRefusedNaming(self.register(scope="s" * 1_001), "scope", "1000")

    def test_every_short_member_over_255_characters_is_refused(self) -> None:
        for member in ("software_id", "software_version", "token_endpoint_auth_method", "application_type"):
            with self.subTest(member):
                self.assertRefusedNaming(self.register(**{member: "x" * 256}), member, "255")

    def test_a_contact_over_255_characters_is_refused(self) -> None:
        self.assertRefusedNaming(self.register(contacts=["c" * 250 + "@a.example"]), "contacts[0]", "255")

    def test_eleven_contacts_are_refused(self) -> None:
        contacts = [f"person{number}@agent.example" for number in range(11)]

        self.assertRefusedNaming(self.register(contacts=contacts), "contacts", "10")

    def test_a_grant_types_array_of_eleven_items_is_refused(self) -> None:
        self.assertRefusedNaming(self.register(grant_types=["authorization_code"] * 11), "grant_types", "10")

    def test_an_unknown_member_over_2000_characters_is_refused(self) -> None:
        self.assertRefusedNaming(self.register(description="d" * 2_001), "description", "2000")

    def test_metadata_over_16_kib_in_all_is_refused(self) -> None:
        response = self.register(redirect_uris=callbacks(9, length=1_900))

        self.assertRefusedNaming(response, "client metadata", "16384 bytes")


OverBoundDocumentFetcher = served(
    ServedResponse(body=json.dumps({**LocalDocumentFetcher.document, "redirect_uris": callbacks(11)}).encode())
)


class MetadataDocumentBoundTests(OAuthTestCase):
    def test_a_document_with_eleven_redirect_uris_is_refused_before_sign_in(self) -> None:
        cache.clear()
        quiet_loggers(self.addCleanup, CIMD_LOGGER)
        self.sign_in(make_membership(role=Role.MEMBER).user)
        overrides = with_fetcher("tests.oauth.test_registration_bounds.OverBoundDocumentFetcher")

        with self.settings(OAUTH2_PROVIDER=overrides):
            response = self.browser.get(AUTHORIZE, self.authorize_params(CLIENT_ID, pkce_pair()[1]))

        self.assertEqual(response.status_code, 400)
        self.assertFalse(response.has_header("Location"))
        self.assertIn(CimdFailure.OVER_BOUND.value, response.context["message"])
        self.assertFalse(Application.objects.exists())
