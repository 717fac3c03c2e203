"""Client ID Metadata Documents: an HTTPS client_id whose document DOT fetches.

The default fetcher refuses anything but public HTTPS addresses, so the positive
tests serve the document through a local fetcher (CIMD_METADATA_FETCHER,
docs/development/decisions.md#registration-and-discovery-views);
the SSRF test runs DOT's real SafeMetadataFetcher.
"""

from django.conf import settings
from django.core.cache import cache

from oauth.models import Application
from organizations.models import Role
from tests.factories import make_membership
from tests.oauth.support import AUTHORIZE, REDIRECT_URI, OAuthTestCase, pkce_pair

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
