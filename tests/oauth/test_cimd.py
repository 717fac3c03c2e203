"""Client ID Metadata Documents: an HTTPS client_id whose document DOT fetches.

The default fetcher refuses anything but public HTTPS addresses, so the positive
tests serve the document through a local fetcher (CIMD_METADATA_FETCHER,
docs/development/decisions.md#registration);
the SSRF test runs DOT's real SafeMetadataFetcher.
"""

import json

from django.conf import settings
from django.core.cache import cache
from oauth2_provider.cimd import SafeMetadataFetcher

from oauth.cimd import CimdFailure, ExplainingMetadataFetcher
from oauth.models import Application
from organizations.models import Role
from tests.factories import make_membership
from tests.oauth.support import AUTHORIZE, REDIRECT_URI, OAuthTestCase, pkce_pair
from tests.support import CIMD_LOGGER, quiet_loggers

CLIENT_ID = "https://agent.example/oauth/client.json"


class LocalDocumentFetcher:
    """Serves one client metadata document from memory instead of the network."""

    document: dict[str, object] = {
        "client_id": CLIENT_ID,
        "client_name": "Metadata Agent",
        "redirect_uris": [REDIRECT_URI],
        "grant_types": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_method": "none",
    }

    def fetch(self, client_id: str) -> tuple[dict[str, object], int]:
        return dict(self.document), 3600


def with_fetcher(path: str) -> dict[str, object]:
    return {**settings.OAUTH2_PROVIDER, "CIMD_METADATA_FETCHER": path}


class ClientIdMetadataDocumentTests(OAuthTestCase):
    def setUp(self) -> None:
        super().setUp()
        cache.clear()
        self.membership = make_membership(role=Role.MEMBER)
        self.sign_in(self.membership.user)

    def test_https_client_id_is_resolved_and_shown_on_the_consent_page(self) -> None:
        with self.settings(OAUTH2_PROVIDER=with_fetcher("tests.oauth.test_cimd.LocalDocumentFetcher")):
            response = self.browser.get(AUTHORIZE, self.authorize_params(CLIENT_ID, pkce_pair()[1]))

        self.assertEqual(response.status_code, 200)
        self.assertContains(response, "Metadata Agent")
        application = Application.objects.get(client_id=CLIENT_ID)
        self.assertEqual(application.registration_source, Application.RegistrationSource.CIMD)
        self.assertEqual(application.client_type, Application.CLIENT_PUBLIC)

    def test_metadata_client_completes_the_code_flow(self) -> None:
        with self.settings(OAUTH2_PROVIDER=with_fetcher("tests.oauth.test_cimd.LocalDocumentFetcher")):
            body = self.tokens_for(CLIENT_ID)

        self.assertIn("access_token", body)

    def test_loopback_client_id_is_never_fetched(self) -> None:
        loopback_id = "https://127.0.0.1/oauth/client.json"

        response = self.browser.get(AUTHORIZE, self.authorize_params(loopback_id, pkce_pair()[1]))

        self.assertEqual(response.status_code, 400)
        self.assertFalse(response.has_header("Location"))
        self.assertFalse(Application.objects.filter(client_id=loopback_id).exists())


class ServedResponse:
    """What a document address answered, as DOT's fetcher reads it (status, headers, body)."""

    def __init__(self, *, status: int = 200, content_type: str = "application/json", body: bytes = b"{}") -> None:
        self.status = status
        self.headers = {"Content-Type": content_type}
        self.body = body

    def read(self, amount: int) -> bytes:
        return self.body[:amount]


def served(response: ServedResponse) -> type:
    """An ExplainingMetadataFetcher whose network answers `response`, read by DOT's own code."""

    class Answering(SafeMetadataFetcher):
        def fetch(self, client_id: str) -> tuple[dict[str, object], int]:
            return self._read_document(response)

    return type("Served", (ExplainingMetadataFetcher,), {"fetcher_class": Answering})


NotFoundFetcher = served(ServedResponse(status=404, content_type="text/html", body=b"<h1>Not Found</h1>"))
HtmlPageFetcher = served(ServedResponse(content_type="text/html", body=b"<html></html>"))
OtherClientFetcher = served(
    ServedResponse(body=json.dumps({**LocalDocumentFetcher.document, "client_id": "x"}).encode())
)
SecretHoldingFetcher = served(
    ServedResponse(body=json.dumps({**LocalDocumentFetcher.document, "client_secret": "s"}).encode())
)
NoRedirectUrisFetcher = served(
    ServedResponse(body=json.dumps({**LocalDocumentFetcher.document, "redirect_uris": []}).encode())
)
InvalidJsonFetcher = served(ServedResponse(body=b'{"client_id": "https://agent.example/oauth/client.json",'))
OversizedFetcher = served(
    ServedResponse(body=json.dumps({**LocalDocumentFetcher.document, "padding": "x" * 20_000}).encode())
)
ServedDocumentFetcher = served(ServedResponse(body=json.dumps(LocalDocumentFetcher.document).encode()))


class MetadataDocumentFailureTests(OAuthTestCase):
    """The error page names why a document address could not be used (docs/authentication.md)."""

    def setUp(self) -> None:
        super().setUp()
        cache.clear()
        quiet_loggers(self.addCleanup, CIMD_LOGGER)
        self.sign_in(make_membership(role=Role.MEMBER).user)

    def authorize(self, client_id: str = CLIENT_ID, *, fetcher: str | None = None):
        overrides = with_fetcher(f"tests.oauth.test_cimd.{fetcher}") if fetcher else settings.OAUTH2_PROVIDER
        with self.settings(OAUTH2_PROVIDER=overrides):
            return self.browser.get(AUTHORIZE, self.authorize_params(client_id, pkce_pair()[1]))

    def assertRefusedBecause(self, response, failure: CimdFailure) -> None:
        self.assertEqual(response.status_code, 400)
        self.assertFalse(response.has_header("Location"))
        self.assertIn(failure.value, response.context["message"])
        self.assertFalse(Application.objects.exists())

    def test_a_private_address_reads_as_unreachable(self) -> None:
        response = self.authorize("https://127.0.0.1/oauth/client.json")

        self.assertRefusedBecause(response, CimdFailure.UNREACHABLE)

    def test_an_address_answering_404_reads_as_unreachable(self) -> None:
        self.assertRefusedBecause(self.authorize(fetcher="NotFoundFetcher"), CimdFailure.UNREACHABLE)

    def test_an_http_address_reads_as_not_https(self) -> None:
        self.assertRefusedBecause(self.authorize("http://agent.example/oauth/client.json"), CimdFailure.NOT_HTTPS)

    def test_an_html_page_reads_as_not_json(self) -> None:
        self.assertRefusedBecause(self.authorize(fetcher="HtmlPageFetcher"), CimdFailure.NOT_JSON)

    def test_a_document_for_another_client_id_reads_as_not_matching(self) -> None:
        self.assertRefusedBecause(self.authorize(fetcher="OtherClientFetcher"), CimdFailure.MISMATCH)

    def test_a_document_holding_a_secret_reads_as_confidential(self) -> None:
        self.assertRefusedBecause(self.authorize(fetcher="SecretHoldingFetcher"), CimdFailure.CONFIDENTIAL)

    def test_a_document_without_redirect_uris_says_so(self) -> None:
        self.assertRefusedBecause(self.authorize(fetcher="NoRedirectUrisFetcher"), CimdFailure.NO_REDIRECT_URIS)

    def test_an_address_without_a_path_cannot_be_a_client_id(self) -> None:
        self.assertRefusedBecause(self.authorize("https://agent.example"), CimdFailure.BAD_ADDRESS)

    def test_the_reason_is_still_named_while_dot_waits_to_fetch_again(self) -> None:
        self.authorize(fetcher="HtmlPageFetcher")

        again = self.authorize(fetcher="LocalDocumentFetcher")

        self.assertRefusedBecause(again, CimdFailure.NOT_JSON)

    def test_an_unknown_plain_client_id_keeps_the_oauth_wording(self) -> None:
        response = self.authorize("not-registered-here")

        self.assertEqual(response.status_code, 400)
        self.assertEqual(response.context["message"], "Invalid client_id parameter value.")


class RefusedBeforeSignInTests(OAuthTestCase):
    """A document that cannot be used is named before the sign-in page, never after a password."""

    def setUp(self) -> None:
        super().setUp()
        cache.clear()
        quiet_loggers(self.addCleanup, CIMD_LOGGER)

    def authorize(self, client_id: str = CLIENT_ID, *, fetcher: str | None = None, **extra: str):
        overrides = with_fetcher(f"tests.oauth.test_cimd.{fetcher}") if fetcher else settings.OAUTH2_PROVIDER
        with self.settings(OAUTH2_PROVIDER=overrides):
            return self.browser.get(AUTHORIZE, self.authorize_params(client_id, pkce_pair()[1], **extra))

    def assertRefusedBeforeSignIn(self, response, reason: str) -> None:
        self.assertEqual(response.status_code, 400)
        self.assertFalse(response.has_header("Location"))  # no redirect to the sign-in page, nor to the client
        self.assertTemplateUsed(response, "oauth/error.html")
        self.assertTemplateNotUsed(response, "oauth/sign_in.html")
        self.assertNotContains(response, 'name="password"', status_code=400)
        self.assertIn(reason, response.context["message"])

    def test_an_unreachable_document_is_named_before_sign_in(self) -> None:
        for client_id, fetcher in (("https://127.0.0.1/oauth/client.json", None), (CLIENT_ID, "NotFoundFetcher")):
            with self.subTest(client_id=client_id, fetcher=fetcher):
                response = self.authorize(client_id, fetcher=fetcher)

                self.assertRefusedBeforeSignIn(response, CimdFailure.UNREACHABLE)
        self.assertFalse(Application.objects.exists())

    def test_an_invalid_document_is_named_before_sign_in(self) -> None:
        cases = {
            "InvalidJsonFetcher": CimdFailure.NOT_JSON,
            "HtmlPageFetcher": CimdFailure.NOT_JSON,
            "OtherClientFetcher": CimdFailure.MISMATCH,
            "OversizedFetcher": CimdFailure.TOO_LARGE.format(max_kilobytes=16),
            "SecretHoldingFetcher": CimdFailure.CONFIDENTIAL,
            "NoRedirectUrisFetcher": CimdFailure.NO_REDIRECT_URIS,
        }
        for fetcher, reason in cases.items():
            with self.subTest(fetcher=fetcher):
                cache.clear()  # each document at the same address, past DOT's failure backoff

                self.assertRefusedBeforeSignIn(self.authorize(fetcher=fetcher), reason)
        self.assertFalse(Application.objects.exists())

    def test_a_redirect_uri_the_document_does_not_list_is_named_before_sign_in(self) -> None:
        response = self.authorize(fetcher="ServedDocumentFetcher", redirect_uri="https://elsewhere.example/callback")

        self.assertRefusedBeforeSignIn(
            response, f"which its metadata document, {CLIENT_ID}, does not list among its redirect_uris"
        )

    def test_a_usable_document_is_fetched_once_and_leads_to_sign_in(self) -> None:
        response = self.authorize(fetcher="ServedDocumentFetcher")

        self.assertEqual(response.status_code, 302)
        self.assertTrue(response["Location"].startswith("/api/auth/sign-in?next="), response["Location"])
        application = Application.objects.get(client_id=CLIENT_ID)
        self.assertEqual(application.registration_source, Application.RegistrationSource.CIMD)

    def test_a_registered_client_with_an_unregistered_redirect_uri_is_refused_before_sign_in(self) -> None:
        client_id = self.register()["client_id"]

        response = self.authorize(client_id, redirect_uri="https://elsewhere.example/callback")

        self.assertRefusedBeforeSignIn(response, "which is not a redirect URI it registered")
