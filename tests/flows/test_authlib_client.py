"""An independent OAuth client (Authlib) runs the whole flow against a live server.

registration → authorize (sign-in and consent posted like a browser, CSRF token
included) → token → refresh → revoke → refresh refused. Only discovery tells the
client where the endpoints are.
"""

from urllib.parse import parse_qs, urljoin, urlsplit

import requests
from authlib.common.security import generate_token
from authlib.integrations.base_client.errors import OAuthError
from authlib.integrations.requests_client import OAuth2Session
from django.test import LiveServerTestCase

from oauth.tokens import verify_access_token
from organizations.models import Role
from tests.factories import PASSWORD, make_membership, make_organization, make_user
from tests.flows.support import live_base_url_settings, parse_form

REDIRECT_URI = "http://127.0.0.1:8765/callback"


class AuthlibClientFlowTests(LiveServerTestCase):
    def setUp(self) -> None:
        self.overrides = live_base_url_settings(self.live_server_url)
        self.overrides.enable()
        self.addCleanup(self.overrides.disable)
        self.user = make_user(email="dana@multi.test")
        make_membership(user=self.user, organization=make_organization(slug="acme", name="Acme"), role=Role.MEMBER)
        self.globex = make_organization(slug="globex", name="Globex")
        make_membership(user=self.user, organization=self.globex, role=Role.ADMIN)

    def discover(self) -> tuple[dict, dict]:
        resource = requests.get(
            f"{self.live_server_url}/.well-known/oauth-protected-resource/api/mcp/operator", timeout=10
        ).json()
        issuer = resource["authorization_servers"][0]
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(issuer))
        metadata = requests.get(
            f"{origin}/.well-known/oauth-authorization-server{urlsplit(issuer).path}", timeout=10
        ).json()
        self.assertEqual(metadata["issuer"], issuer)
        return resource, metadata

    def sign_in_and_consent(self, authorization_url: str) -> str:
        """Play the browser: sign in, choose Globex, allow; return the redirect to the client."""
        browser = requests.Session()
        self.addCleanup(browser.close)
        sign_in = browser.get(authorization_url, timeout=10)
        self.assertIn("/api/auth/sign-in", sign_in.url)
        fields = parse_form(sign_in.text).fields
        consent = browser.post(
            sign_in.url,
            data={**fields, "email": self.user.email, "password": PASSWORD},
            headers={"Referer": sign_in.url},
            timeout=10,
        )
        self.assertEqual(consent.status_code, 200, consent.text[:500])
        form = parse_form(consent.text)
        self.assertIn(str(self.globex.pk), form.radios["organization"])
        answer = browser.post(
            urljoin(consent.url, form.action or ""),
            data={**form.fields, "organization": str(self.globex.pk), "allow": "true"},
            headers={"Referer": consent.url},
            allow_redirects=False,
            timeout=10,
        )
        self.assertEqual(answer.status_code, 302, answer.text[:500])
        return answer.headers["Location"]

    def test_registration_authorize_token_refresh_revoke(self) -> None:
        resource, metadata = self.discover()
        registration = requests.post(
            metadata["registration_endpoint"],
            json={
                "client_name": "Authlib Agent",
                "redirect_uris": [REDIRECT_URI],
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
            },
            timeout=10,
        )
        self.assertEqual(registration.status_code, 201)
        client = OAuth2Session(
            client_id=registration.json()["client_id"],
            redirect_uri=REDIRECT_URI,
            scope="mcp:operator.read",
            code_challenge_method="S256",
            token_endpoint_auth_method="none",
        )
        self.addCleanup(client.close)
        verifier = generate_token(64)
        authorization_url, _state = client.create_authorization_url(
            metadata["authorization_endpoint"], code_verifier=verifier, resource=resource["resource"]
        )

        callback = self.sign_in_and_consent(authorization_url)
        self.assertEqual(parse_qs(urlsplit(callback).query)["iss"], [metadata["issuer"]])
        token = client.fetch_token(
            metadata["token_endpoint"],
            authorization_response=callback,
            code_verifier=verifier,
            resource=resource["resource"],
        )
        claims = verify_access_token(token["access_token"])
        self.assertEqual(claims.organization_id, str(self.globex.pk))

        refreshed = client.refresh_token(metadata["token_endpoint"], refresh_token=token["refresh_token"])
        self.assertNotEqual(refreshed["refresh_token"], token["refresh_token"])
        self.assertEqual(verify_access_token(refreshed["access_token"]).organization_id, str(self.globex.pk))

        revoked = client.revoke_token(
            metadata["revocation_endpoint"], token=refreshed["refresh_token"], token_type_hint="refresh_token"
        )
        self.assertEqual(revoked.status_code, 200)

        with self.assertRaises(OAuthError) as refused:
            client.refresh_token(metadata["token_endpoint"], refresh_token=refreshed["refresh_token"])
        self.assertEqual(refused.exception.error, "invalid_grant")
