"""Identity provider tests' plumbing.

A key to seal client secrets under; the test provider's process (provider_server.py);
the steps of a sign-in through it.
"""

from __future__ import annotations

import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from django.test import Client, override_settings

from identity_providers.client_secrets import seal_client_secret
from identity_providers.models import IdentityProvider, ProviderDomain
from operator_core.signing_keys import generate_fernet_key
from organizations.models import Organization
from tests.live_servers import free_port, start_process_on

PROVIDER_KEY = generate_fernet_key()

SERVER = Path(__file__).resolve().parent / "provider_server.py"
CLIENT_ID = "service-operator"
CLIENT_SECRET = "provider-test-secret"
SIGN_IN = "/api/auth/sign-in"


def provider_key(current: str = PROVIDER_KEY, *fallbacks: str) -> override_settings:
    """Settings that seal under `current` and also unseal under `fallbacks`."""
    return override_settings(
        OPERATOR_IDENTITY_PROVIDER_KEY=current, OPERATOR_IDENTITY_PROVIDER_KEY_FALLBACKS=[*fallbacks]
    )


class LiveProvider:
    """The test provider, listening on a free loopback port until the test class ends."""

    def __init__(self, test_class: Any) -> None:
        port = free_port()
        self.issuer = f"http://127.0.0.1:{port}"
        workdir = Path(tempfile.mkdtemp(prefix="operator-provider-"))
        start_process_on(
            test_class,
            [sys.executable, str(SERVER), str(port), CLIENT_ID, CLIENT_SECRET],
            port=port,
            log=workdir / "provider.log",
        )

    def steer(self, **control: Any) -> None:
        """What the provider does next (provider_server.py's docstring lists the keys)."""
        response = httpx.post(f"{self.issuer}/control", json=control, timeout=10)
        response.raise_for_status()

    def person(self, *, sub: str, email: str, verified: bool = True, **control: Any) -> None:
        self.steer(identity={"sub": sub, "email": email, "email_verified": verified}, **control)


def configure_provider(
    organization: Organization,
    issuer: str,
    *,
    domains: tuple[str, ...] = ("acme.test",),
    required: bool = False,
    create_requesters: bool = False,
) -> IdentityProvider:
    provider = IdentityProvider.objects.create(
        organization=organization,
        issuer=issuer,
        client_id=CLIENT_ID,
        client_secret_sealed=seal_client_secret(CLIENT_SECRET),
        required=required,
        create_requesters=create_requesters,
    )
    for domain in domains:
        ProviderDomain.objects.create(provider=provider, domain=domain)
    return provider


class _ContinueLink(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.href = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "a" and attributes.get("id") == "continue":
            self.href = attributes.get("href") or ""


def provider_url_of(page: str) -> str:
    """The provider's authorization URL on the page that sends the person there."""
    parser = _ContinueLink()
    parser.feed(page)
    return parser.href


def callback_from_provider(authorization_url: str) -> str:
    """Follow the provider's answer as a browser would: the path and query of our callback it redirects to."""
    response = httpx.get(authorization_url, follow_redirects=False, timeout=10)
    assert response.status_code == 302, response.text
    location = urlsplit(response.headers["Location"])
    return f"{location.path}?{location.query}"


def sign_in_through_provider(client: Client, email: str, *, next_url: str = "") -> tuple[str, Any]:
    """Email step, the provider, the callback: the callback path used and our answer to it."""
    page = client.post(SIGN_IN, {"email": email, "next": next_url})
    assert page.status_code == 200, page.content[:500]
    callback = callback_from_provider(provider_url_of(page.content.decode()))
    return callback, client.get(callback)
