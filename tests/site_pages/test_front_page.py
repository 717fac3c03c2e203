"""`/`: what the service is, the MCP URL to paste, each client's settings, who is signed in."""

import re
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.test import TestCase, override_settings

from tests.factories import make_user

CLIENT_SECTIONS = ["claude-code", "claude", "chatgpt", "vscode", "cursor", "inspector", "mcp-remote"]
CLIENT_SECTIONS += ["codex", "gemini-cli", "opencode", "typescript-sdk", "python-sdk"]
# The non-default settings docs/connecting.md gives for 2026-07-28, by section.
SETTINGS_FOR_2026 = {
    "inspector": "--protocol-era modern --transport http",
    "mcp-remote": '"--protocol", "auto"',
    "codex": "mcp_2026_07_28 = true",
    "gemini-cli": '"--protocol", "auto"',
    "opencode": '"--protocol", "auto"',
    "typescript-sdk": 'versionNegotiation: { mode: { pin: "2026-07-28" } }',
}


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.details: dict[str, str] = {}
        self._open: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "a" and attributes.get("href"):
            self.hrefs.append(attributes["href"] or "")
        if tag == "details":
            self._open = attributes.get("id")
            self.details[self._open or ""] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "details":
            self._open = None

    def handle_data(self, data: str) -> None:
        if self._open:
            self.details[self._open] += data


def with_base_url(base_url: str) -> override_settings:
    return override_settings(
        OPERATOR={**settings.OPERATOR, "base_url": base_url, "operator_endpoint_url": f"{base_url}/api/mcp/operator"}
    )


class FrontPageTests(TestCase):
    def page(self) -> Any:
        response = self.client.get("/")
        self.assertEqual(response.status_code, 200)
        return response

    def parsed(self) -> _Links:
        links = _Links()
        links.feed(self.page().content.decode())
        return links

    def test_shows_the_mcp_url_from_settings_ready_to_copy(self) -> None:
        with with_base_url("https://operator.example.com"):
            response = self.page()

        self.assertContains(response, '<code id="mcp-url">https://operator.example.com/api/mcp/operator</code>')
        self.assertContains(response, '<button type="button" data-copy="mcp-url" hidden>Copy</button>')

    def test_says_what_the_service_is(self) -> None:
        self.assertContains(self.page(), "A remote MCP server for your organization")

    def test_every_client_has_its_section_with_the_url(self) -> None:
        details = self.parsed().details

        self.assertEqual(list(details), CLIENT_SECTIONS)
        for section in (
            "claude-code",
            "vscode",
            "cursor",
            "inspector",
            "mcp-remote",
            "codex",
            "gemini-cli",
            "opencode",
        ):
            self.assertIn(settings.OPERATOR["operator_endpoint_url"], details[section], section)

    def test_clients_that_need_a_setting_for_2026_07_28_show_it(self) -> None:
        details = self.parsed().details

        for section, setting in SETTINGS_FOR_2026.items():
            self.assertIn(setting, details[section], section)

    def test_a_loopback_service_says_which_clients_can_reach_it(self) -> None:
        with with_base_url("http://127.0.0.1:8000"):
            loopback = self.page()
        with with_base_url("https://operator.example.com"):
            public = self.page()

        self.assertContains(loopback, "only clients on this machine reach it")
        self.assertNotContains(public, "only clients on this machine reach it")

    def test_nobody_signed_in(self) -> None:
        response = self.page()

        self.assertContains(response, "Not signed in.")
        self.assertNotContains(response, "Sign out")

    def test_shows_who_is_signed_in_and_signs_out(self) -> None:
        user = make_user(email="bob@acme.test")
        self.client.force_login(user)

        self.assertContains(self.page(), "Signed in as <strong>bob@acme.test</strong>.")
        response = self.client.post("/sign-out")

        self.assertRedirects(response, "/")
        self.assertContains(self.page(), "Not signed in.")

    def test_every_link_resolves(self) -> None:
        for href in self.parsed().hrefs:
            target = urlsplit(href)
            if target.scheme or target.netloc:
                continue
            with self.subTest(href=href):
                self.assertEqual(self.client.get(target.path).status_code, 200)

    def test_loads_only_its_own_script_and_stylesheet(self) -> None:
        body = self.page().content.decode()

        self.assertEqual(re.findall(r'<script[^>]*src="([^"]*)"', body), ["/static/site_pages/copy.js"])
        self.assertEqual(body.count("<script"), 1)
        self.assertEqual(
            re.findall(r'<link[^>]*href="([^"]*)"', body),
            ["/static/site_pages/site.css", "/static/site_pages/favicon.svg"],
        )
        self.assertNotIn("<style", body)
        self.assertNotIn(" style=", body)
