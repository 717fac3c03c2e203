"""An OAuth and MCP client speaking plain HTTP to a live server, as a real connector does.

Registration, sign-in and consent (posted like a browser, CSRF token included),
the code exchange with PKCE, refreshes, revocation, and tool calls on the
operator endpoint. Each call opens its own connection, so threads may share one
`LiveOAuthClient`.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import httpx

from tests.flows.support import parse_form
from tests.mcp_requests import envelope, routing_headers

REDIRECT_URI = "http://127.0.0.1:8765/callback"
TOKEN_PATH = "/api/auth/oauth2/token"
TIMEOUT_SECONDS = 60


@dataclass(frozen=True)
class Person:
    email: str
    password: str
    organization_id: str


class LiveOAuthClient:
    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    def _client(self, **options: Any) -> httpx.Client:
        return httpx.Client(base_url=self.base_url, timeout=TIMEOUT_SECONDS, **options)

    def register(self) -> str:
        """A new public client; its client_id."""
        body = {"client_name": "Live Agent", "redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"}
        with self._client() as http:
            response = http.post("/api/auth/oauth2/register", json=body)
        assert response.status_code == 201, response.text
        return response.json()["client_id"]

    def connect(self, client_id: str, person: Person) -> dict[str, Any]:
        """Sign in, consent for the person's organization, exchange the code: the first token answer."""
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        query = urlencode(
            {
                "response_type": "code",
                "client_id": client_id,
                "redirect_uri": REDIRECT_URI,
                "code_challenge": challenge,
                "code_challenge_method": "S256",
                "state": "live",
                "scope": "mcp:operator.read",
            }
        )
        with self._client(follow_redirects=True) as browser:
            sign_in = browser.get(f"/api/auth/oauth2/authorize?{query}")
            assert "/api/auth/sign-in" in str(sign_in.url), sign_in.url
            fields = parse_form(sign_in.text).fields
            consent = browser.post(
                str(sign_in.url),
                data={**fields, "email": person.email, "password": person.password},
                headers={"Referer": str(sign_in.url)},
            )
            assert consent.status_code == 200, consent.text[:500]
            form = parse_form(consent.text)
            answer = browser.post(
                urljoin(str(consent.url), form.action or ""),
                data={**form.fields, "organization": person.organization_id, "allow": "true"},
                headers={"Referer": str(consent.url)},
                follow_redirects=False,
            )
        assert answer.status_code == 302, answer.text[:500]
        code = parse_qs(urlsplit(answer.headers["Location"]).query)["code"][0]
        exchange = self.token(
            {
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": REDIRECT_URI,
                "client_id": client_id,
                "code_verifier": verifier,
            }
        )
        assert exchange.status_code == 200, exchange.text
        return exchange.json()

    def token(self, data: dict[str, str]) -> httpx.Response:
        with self._client() as http:
            return http.post(TOKEN_PATH, data=data)

    def refresh(self, client_id: str, refresh_token: str) -> httpx.Response:
        return self.token({"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id})

    def revoke(self, client_id: str, refresh_token: str) -> httpx.Response:
        data = {"token": refresh_token, "token_type_hint": "refresh_token", "client_id": client_id}
        with self._client() as http:
            return http.post("/api/auth/oauth2/revoke", data=data)

    def list_modules(self, access_token: str) -> httpx.Response:
        """One `tools/call` of list_modules on the operator endpoint with `access_token`."""
        message = envelope("tools/call", {"name": "list_modules", "arguments": {}})
        headers = {**routing_headers(message), "Authorization": f"Bearer {access_token}"}
        with self._client() as http:
            return http.post("/api/mcp/operator", json=message, headers=headers)

    def works(self, access_token: str) -> bool:
        """True when the operator endpoint accepts `access_token` and the tool call succeeds."""
        response = self.list_modules(access_token)
        return response.status_code == 200 and "isError" not in response.json().get("result", {})
