"""Every page with a person's data, and every OAuth page, answers `Cache-Control: no-store`.

The walk starts from the root URLconf: each route is either a page, requested
below in each state a browser meets it in (signed out, signed in, refused, in
error), or one of the routes that never answer an HTML page of a person's
data, each with the reason. A new route is in neither list, so
`test_every_route_is_classified` fails until someone decides which it is.
"""

from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlencode

from django.contrib import admin
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from oauth.client_policy import set_client_policy
from organizations.models import Role
from tests.factories import make_membership, make_user
from tests.oauth.support import AUTHORIZE, OAuthTestCase, pkce_pair

ADMIN_PREFIX = "admin/"
SIGN_IN = "/api/auth/sign-in"
SIGN_OUT = "/sign-out"
RESET = "/account/password-reset/"

# Routes that answer no HTML page of a person's data: JSON or Markdown for programs, or
# public pages that are the same for everyone.
NOT_PAGES = {
    "api/mcp/operator": "the operator MCP endpoint: JSON-RPC with no-store (docs/transport.md)",
    "api/mcp/docs": "the docs MCP endpoint: public documentation as JSON-RPC",
    "^api/mcp(?:/(?!(?:operator|docs)$).*)?$": "a JSON 404 for unknown MCP paths",
    ".well-known/mcp": "public discovery JSON",
    ".well-known/mcp/server-card.json": "public discovery JSON",
    ".well-known/oauth-authorization-server": "public OAuth metadata",
    ".well-known/oauth-authorization-server/api/auth": "public OAuth metadata",
    "api/auth/.well-known/oauth-authorization-server": "public OAuth metadata",
    ".well-known/openid-configuration": "public OpenID metadata",
    ".well-known/openid-configuration/api/auth": "public OpenID metadata",
    "api/auth/.well-known/openid-configuration": "public OpenID metadata",
    ".well-known/oauth-protected-resource/api/mcp/operator": "public resource metadata",
    ".well-known/oauth-protected-resource": "public resource metadata",
    ".well-known/jwks.json": "public keys",
    "api/auth/jwks": "public keys",
    "api/auth/oauth2/register": "JSON for programs (RFC 7591); the registration answer sends no-store",
    "api/auth/oauth2/token": "JSON for programs; token answers send no-store (RFC 6749 §5.1)",
    "api/auth/oauth2/revoke": "JSON for programs (RFC 7009)",
    "api/auth/oauth2/userinfo": "JSON for programs, behind a bearer token",
    "api/agent/auth": "the headless path: JSON with no-store",
    "api/agent/auth/claim/complete": "the headless path: JSON with no-store",
    "auth.md": "public Markdown for agents",
    "docs/": "public documentation, the same for everyone (it varies by Accept: DocsVaryTests)",
    "docs/<slug:page>": "public documentation, the same for everyone (it varies by Accept: DocsVaryTests)",
}


def routes(patterns: list[Any], prefix: str = "") -> Iterator[str]:
    """Every route of the URLconf `patterns`, as its pattern text from the root."""
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from routes(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern)


def browser_of(user: Any) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


class PageCachingTests(OAuthTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.client_id = self.register(client_name="Cached Agent")["client_id"]
        self.admin_membership = make_membership(role=Role.ADMIN)
        self.organization = self.admin_membership.organization
        self.member = make_membership(role=Role.MEMBER, organization=self.organization).user
        self.admin = self.admin_membership.user

    def authorize_url(self, *, client_id: str | None = None) -> str:
        params = self.authorize_params(client_id or self.client_id, pkce_pair()[1])
        return f"{AUTHORIZE}?{urlencode(params)}"

    def consent_post(self, **edits: str) -> Any:
        browser = browser_of(self.member)
        page = browser.get(self.authorize_url())
        form = {key: value for key, value in page.context["form"].initial.items() if value is not None}
        form.update({"organization": str(self.organization.pk), "allow": "true", **edits})
        return browser.post(AUTHORIZE, form)

    def refused_by_policy(self) -> Any:
        set_client_policy(
            organization=self.organization,
            actor=self.admin,
            only_listed=True,
            dynamic_clients=False,
            metadata_hosts=[],
            applications=[],
        )
        return self.consent_post()

    def page_samples(self) -> dict[str, list[tuple[str, Callable[[], Any]]]]:
        """For each page's route, the requests that show it in each of its states."""
        organization_page = reverse("connections:organization", kwargs={"slug": self.organization.slug})
        usage_page = reverse("connections:usage", kwargs={"slug": self.organization.slug})
        return {
            "": [
                ("front page signed out", lambda: Client().get("/")),
                ("front page signed in", lambda: browser_of(self.admin).get("/")),
            ],
            "sign-out": [("sign-out", lambda: browser_of(self.member).post(SIGN_OUT))],
            "api/auth/sign-in": [
                ("sign-in", lambda: Client().get(SIGN_IN)),
                ("sign-in refused", lambda: Client().post(SIGN_IN, {"email": self.member.email, "password": "no"})),
                ("sign-in password step", lambda: Client().post(SIGN_IN, {"email": self.member.email})),
            ],
            "api/auth/sso/callback": [
                ("single sign-on refused", lambda: Client().get("/api/auth/sso/callback?state=unknown&code=x")),
            ],
            "api/auth/oauth2/authorize": [
                ("authorize signed out", lambda: Client().get(self.authorize_url())),
                ("consent page", lambda: browser_of(self.member).get(self.authorize_url())),
                ("403 page", lambda: browser_of(make_user()).get(self.authorize_url())),
                ("error page", lambda: browser_of(self.member).get(self.authorize_url(client_id="no-such-client"))),
                ("consent answered", lambda: self.consent_post()),
                ("consent form tampered", lambda: self.consent_post(redirect_uri="https://evil.example/cb")),
                ("client policy refusal", self.refused_by_policy),
            ],
            "account/password-reset/": [
                ("reset request", lambda: Client().get(RESET)),
                ("reset requested", lambda: Client().post(RESET, {"email": self.member.email})),
                ("reset request refused", lambda: Client().post(RESET, {"email": ""})),
            ],
            "account/password-reset/sent/": [("reset sent", lambda: Client().get(f"{RESET}sent/"))],
            "account/password-reset/<uidb64>/<token>/": [
                ("reset link altered", lambda: Client().get(f"{RESET}MQ/not-a-token/")),
            ],
            "account/password-reset/done/": [("reset done", lambda: Client().get(f"{RESET}done/"))],
            "account/connections/": [
                ("your connections", lambda: browser_of(self.member).get(reverse("connections:mine"))),
            ],
            "organizations/<slug:slug>/connections/": [
                ("organization connections", lambda: browser_of(self.admin).get(organization_page)),
                ("organization connections refused", lambda: browser_of(self.member).get(organization_page)),
            ],
            "organizations/<slug:slug>/usage/": [
                ("organization usage", lambda: browser_of(self.admin).get(usage_page)),
                ("organization usage refused", lambda: browser_of(self.member).get(usage_page)),
                ("organization usage bad input", lambda: browser_of(self.admin).get(f"{usage_page}?days=x")),
            ],
            "organizations/<slug:slug>/usage/export.csv": [
                ("organization usage export", lambda: browser_of(self.admin).get(f"{usage_page}export.csv")),
            ],
            "organizations/<slug:slug>/connections/policy": [
                (
                    "policy form refused",
                    lambda: browser_of(self.admin).post(f"{organization_page}policy", {"mode": "nonsense"}),
                ),
            ],
        }

    def admin_samples(self) -> list[tuple[str, Callable[[], Any]]]:
        """Django's admin wraps each view in `AdminSite.admin_view` (never_cache): checked on a sample of them."""
        staff = make_user(is_staff=True, is_superuser=True)
        samples = [
            ("admin sign-in", lambda: Client().get(reverse("admin:login"))),
            ("admin index", lambda: browser_of(staff).get(reverse("admin:index"))),
        ]
        for model in admin.site._registry:
            name = f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist"
            samples.append((name, lambda name=name: browser_of(staff).get(reverse(name))))
        return samples

    def test_every_route_is_classified(self) -> None:
        found = {route for route in routes(get_resolver().url_patterns) if not route.startswith(ADMIN_PREFIX)}

        self.assertEqual(found, set(NOT_PAGES) | set(self.page_samples()))

    def test_every_page_sends_no_store(self) -> None:
        samples = [sample for states in self.page_samples().values() for sample in states] + self.admin_samples()
        for label, request in samples:
            with self.subTest(label):
                response = request()
                self.assertLess(response.status_code, 500, label)
                self.assertIn("no-store", response.get("Cache-Control", ""), label)


class DocsVaryTests(OAuthTestCase):
    def test_a_docs_page_says_it_varies_by_accept(self) -> None:
        for accept in ("text/html", "text/markdown"):
            with self.subTest(accept):
                response = Client().get("/docs/limits", HTTP_ACCEPT=accept)

                self.assertEqual(response.status_code, 200)
                self.assertTrue(response["Content-Type"].startswith(accept))
                self.assertIn("Accept", [name.strip() for name in response.get("Vary", "").split(",")])
