"""A client's name cannot spoof another's: refused at registration, shown display-safe where it exists already.

The attack (issue 34): a client registers as `Trusted\u202eAgent evil`, or with a
zero-width space inside a known client's name, and the consent page, where the
person decides, reads as another client. Registration (RFC 7591) and Client ID
Metadata Documents refuse such a name; a row stored before the rule is shown
with each hidden character as U+FFFD on the consent page, the connections
pages, the admin and the audit export (operator_core/display_text.py).
"""

import csv
import io
import json

from django.core.cache import cache
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from audit.models import AuditEvent
from oauth.cimd import CimdFailure
from oauth.models import Application
from organizations.models import Role
from tests.factories import PASSWORD, make_membership, make_organization
from tests.oauth.support import AUTHORIZE, REGISTER, OAuthTestCase, pkce_pair
from tests.oauth.test_cimd import CLIENT_ID, LocalDocumentFetcher, ServedResponse, served, with_fetcher

# One of each: a bidi override and isolate, a zero-width space, a byte-order mark, the
# left-to-right mark, a private-use and an unassigned code point, the line and paragraph separators.
HIDDEN = ("\u202e", "\u2067", "\u200b", "\ufeff", "\u200e", "\ue000", "\u0378", "\u2028", "\u2029")
SPOOFING_NAME = "Trusted\u202eAgent"
SHOWN_NAME = "Trusted\ufffdAgent"

SpoofingDocumentFetcher = served(
    ServedResponse(body=json.dumps({**LocalDocumentFetcher.document, "client_name": SPOOFING_NAME}).encode())
)


class RegistrationRefusesHiddenCharactersTests(OAuthTestCase):
    def post_registration(self, **metadata: object):
        body = {"redirect_uris": ["http://127.0.0.1:8765/callback"], "token_endpoint_auth_method": "none", **metadata}
        return self.api.post(REGISTER, data=json.dumps(body), content_type="application/json")

    def test_each_hidden_character_in_client_name_is_invalid_client_metadata(self) -> None:
        for character in HIDDEN:
            with self.subTest(code_point=f"U+{ord(character):04X}"):
                response = self.post_registration(client_name=f"Trusted{character}Agent")

                self.assertEqual(response.status_code, 400, response.content)
                body = response.json()
                self.assertEqual(body["error"], "invalid_client_metadata")
                self.assertIn("client_name", body["error_description"])
                self.assertIn(f"U+{ord(character):04X}", body["error_description"])
        self.assertFalse(Application.objects.exists())

    def test_a_language_tagged_name_is_held_to_the_same_rule(self) -> None:
        response = self.post_registration(**{"client_name": "Agent", "client_name#ar": "\u202bوكيل"})

        self.assertEqual(response.status_code, 400)
        self.assertIn("client_name#ar", response.json()["error_description"])

    def test_a_name_in_any_script_with_visible_characters_registers(self) -> None:
        name = "Agent Ω — データ · وكيل 🤖"

        registered = self.register(client_name=name)

        self.assertEqual(registered["client_name"], name)


class MetadataDocumentRefusesHiddenCharactersTests(OAuthTestCase):
    def test_a_document_whose_name_holds_a_hidden_character_is_refused_with_its_reason(self) -> None:
        cache.clear()
        self.sign_in(make_membership(role=Role.MEMBER).user)

        with self.settings(OAUTH2_PROVIDER=with_fetcher("tests.oauth.test_client_names.SpoofingDocumentFetcher")):
            response = self.browser.get(AUTHORIZE, self.authorize_params(CLIENT_ID, pkce_pair()[1]))

        self.assertEqual(response.status_code, 400)
        self.assertIn(CimdFailure.HIDDEN_CHARACTERS.value, response.context["message"])
        self.assertFalse(Application.objects.exists())


class StoredNamesAreShownDisplaySafeTests(OAuthTestCase):
    """A client registered before the rule, its name written as it came."""

    def setUp(self) -> None:
        super().setUp()
        self.organization = make_organization(slug="acme", name="Acme")
        self.admin = make_membership(role=Role.ADMIN, organization=self.organization).user
        self.client_id = self.register(client_name="Placeholder")["client_id"]
        Application.objects.filter(client_id=self.client_id).update(name=SPOOFING_NAME)
        self.sign_in(self.admin)

    def assertShownSafely(self, content: str) -> None:
        self.assertNotIn("\u202e", content)
        self.assertIn(SHOWN_NAME, content)

    def page_as_staff(self, path: str) -> str:
        self.admin.is_staff = self.admin.is_superuser = True
        self.admin.save()
        page = Client()
        self.assertTrue(page.login(username=self.admin.email, password=PASSWORD))
        response = page.get(path)
        self.assertEqual(response.status_code, 200)
        return response.content.decode()

    def test_the_consent_page(self) -> None:
        response = self.browser.get(AUTHORIZE, self.authorize_params(self.client_id, pkce_pair()[1]))

        self.assertEqual(response.status_code, 200)
        self.assertShownSafely(response.content.decode())

    def test_the_connections_pages(self) -> None:
        self.tokens_for(self.client_id)

        for path in ("/account/connections/", "/organizations/acme/connections/"):
            with self.subTest(path=path):
                response = self.browser.get(path)

                self.assertEqual(response.status_code, 200)
                self.assertShownSafely(response.content.decode())

    def test_the_admin_of_clients(self) -> None:
        application = Application.objects.get(client_id=self.client_id)

        for path in ("/admin/oauth/application/", f"/admin/oauth/application/{application.pk}/change/"):
            with self.subTest(path=path):
                content = self.page_as_staff(path)

                # The change form's input holds the stored name for editing; the page around it does not.
                self.assertIn(SHOWN_NAME, content)
                if path.endswith("/change/"):
                    content = content.replace(f'value="{SPOOFING_NAME}"', "")
                self.assertNotIn("\u202e", content)

    def test_the_audit_trail_in_the_admin(self) -> None:
        self.tokens_for(self.client_id)
        event = AuditEvent.objects.filter(client_id=self.client_id).first()

        for path in ("/admin/audit/auditevent/", f"/admin/audit/auditevent/{event.pk}/change/"):
            with self.subTest(path=path):
                self.assertShownSafely(self.page_as_staff(path))

    def test_the_audit_export_in_both_formats(self) -> None:
        self.tokens_for(self.client_id)
        today = timezone.now().date().isoformat()

        for file_format in ("csv", "jsonl"):
            with self.subTest(file_format=file_format):
                out = io.StringIO()
                call_command(
                    "export_audit",
                    "--organization",
                    "acme",
                    "--from",
                    today,
                    "--to",
                    today,
                    "--format",
                    file_format,
                    stdout=out,
                )
                if file_format == "csv":
                    names = {row["client_name"] for row in csv.DictReader(io.StringIO(out.getvalue()))}
                else:
                    names = {json.loads(line)["client_name"] for line in out.getvalue().splitlines()}

                self.assertEqual(names, {SHOWN_NAME})
