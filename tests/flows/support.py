"""Shared plumbing for whole-flow tests against a live server."""

from html.parser import HTMLParser
from typing import Any

from django.conf import settings
from django.test import override_settings


class _FormParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.fields: dict[str, str] = {}
        self.radios: dict[str, list[str]] = {}
        self.action: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {key: value or "" for key, value in attrs}
        if tag == "form" and self.action is None:
            self.action = attributes.get("action", "")
        if tag != "input" or "name" not in attributes:
            return
        if attributes.get("type") == "radio":
            self.radios.setdefault(attributes["name"], []).append(attributes.get("value", ""))
        else:
            self.fields[attributes["name"]] = attributes.get("value", "")


def parse_form(html: str) -> _FormParser:
    """The named inputs (and radio choices) of the page's first form."""
    parser = _FormParser()
    parser.feed(html)
    return parser


def live_base_url_settings(base_url: str) -> override_settings:
    """Settings whose canonical base URL is the live server's, as OPERATOR_BASE_URL would set them."""
    issuer = f"{base_url}/api/auth"
    endpoint = f"{base_url}/api/mcp/operator"
    operator: dict[str, Any] = {
        **settings.OPERATOR,
        "base_url": base_url,
        "issuer": issuer,
        "operator_endpoint_url": endpoint,
    }
    provider: dict[str, Any] = {
        **settings.OAUTH2_PROVIDER,
        "OIDC_ISS_ENDPOINT": issuer,
        "OIDC_USERINFO_ENDPOINT": f"{issuer}/oauth2/userinfo",
        "OAUTH2_PROTECTED_RESOURCE_IDENTIFIER": endpoint,
        "OAUTH2_PROTECTED_RESOURCE_AUTHORIZATION_SERVERS": [issuer],
    }
    return override_settings(OPERATOR=operator, OAUTH2_PROVIDER=provider, CSRF_TRUSTED_ORIGINS=[base_url])
