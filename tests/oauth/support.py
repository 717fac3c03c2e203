"""Drive the authorization server through Django's test client, as a real client would.

Registration, PKCE, sign-in, consent and token calls all go through the real
views; nothing of ours is mocked.
"""

import base64
import hashlib
import json
import re
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from django.conf import settings
from django.test import Client, TestCase

from operator_core.conf import operator_settings
from tests.factories import PASSWORD

REDIRECT_URI = "http://127.0.0.1:8765/callback"
AUTHORIZE = "/api/auth/oauth2/authorize"
TOKEN = "/api/auth/oauth2/token"
REVOKE = "/api/auth/oauth2/revoke"
REGISTER = "/api/auth/oauth2/register"


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


@dataclass
class Authorization:
    code: str
    verifier: str
    redirect: str


class OAuthTestCase(TestCase):
    """Helpers for one public client and one browser (the test client's session)."""

    def setUp(self) -> None:
        super().setUp()
        self.browser = Client()
        self.api = Client()

    def register(self, **metadata: Any) -> dict[str, Any]:
        body = {"client_name": "Test Agent", "redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"}
        body.update(metadata)
        response = self.api.post(REGISTER, data=json.dumps(body), content_type="application/json")
        self.assertEqual(response.status_code, 201, response.content)
        return response.json()

    def sign_in(self, user: Any) -> None:
        self.assertTrue(self.browser.login(username=user.email, password=PASSWORD))

    def authorize_params(self, client_id: str, challenge: str, **extra: str) -> dict[str, str]:
        params = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": REDIRECT_URI,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": "state-123",
            "scope": "mcp:operator.read",
        }
        params.update(extra)
        return {key: value for key, value in params.items() if value is not None}

    def consent(self, client_id: str, *, organization: Any = None, allow: bool = True, **extra: str) -> tuple[Any, str]:
        """GET the consent page, then post the form back; return (POST response, verifier)."""
        verifier, challenge = pkce_pair()
        params = self.authorize_params(client_id, challenge, **extra)
        page = self.browser.get(AUTHORIZE, params)
        self.assertEqual(page.status_code, 200, page.content[:500])
        form = dict(page.context["form"].initial)
        form = {key: value for key, value in form.items() if value is not None}
        if organization is not None:
            form["organization"] = str(organization.pk)
        elif len(page.context["organizations"]) == 1:
            form["organization"] = str(page.context["organizations"][0].pk)
        if allow:
            form["allow"] = "true"
        return self.browser.post(AUTHORIZE, form), verifier

    def authorize(self, client_id: str, **kwargs: Any) -> Authorization:
        response, verifier = self.consent(client_id, **kwargs)
        self.assertEqual(response.status_code, 302, response.content[:500])
        query = parse_qs(urlsplit(response["Location"]).query)
        self.assertIn("code", query, response["Location"])
        return Authorization(code=query["code"][0], verifier=verifier, redirect=response["Location"])

    def exchange(self, client_id: str, authorization: Authorization, **overrides: str | None) -> Any:
        data = {
            "grant_type": "authorization_code",
            "code": authorization.code,
            "redirect_uri": REDIRECT_URI,
            "client_id": client_id,
            "code_verifier": authorization.verifier,
        }
        data.update(overrides)
        return self.api.post(TOKEN, {key: value for key, value in data.items() if value is not None})

    def refresh(self, client_id: str, refresh_token: str, **extra: str) -> Any:
        data = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id, **extra}
        return self.api.post(TOKEN, data)

    def tokens_for(self, client_id: str, **kwargs: Any) -> dict[str, Any]:
        response = self.exchange(client_id, self.authorize(client_id, **kwargs))
        self.assertEqual(response.status_code, 200, response.content)
        return response.json()

    @staticmethod
    def operator_endpoint() -> str:
        return operator_settings().operator_endpoint_url


def query_of(location: str) -> dict[str, list[str]]:
    """The query parameters of a redirect's `Location`."""
    return parse_qs(urlsplit(location).query)


def documented_errors(endpoint: str) -> frozenset[str]:
    """The `error` codes docs/authentication.md#errors lists for `endpoint` (`token`, `revoke`, ...).

    What a client is promised, read from the page itself, so that a test holds
    the answers to the public contract rather than to a copy of a list in the code.
    """
    page = (settings.BASE_DIR / "docs" / "authentication.md").read_text(encoding="utf-8")
    table = page.split("\n## Errors\n", 1)[1].split("\n## ", 1)[0]
    codes: set[str] = set()
    for row in table.splitlines():
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        if len(cells) == 3 and endpoint in (where.strip() for where in cells[0].split(",")):
            codes.update(re.findall(r"`([a-z_]+)`", cells[1]))
    return frozenset(codes)
