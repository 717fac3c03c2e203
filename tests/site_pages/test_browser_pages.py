"""The front page and three docs pages in a real headless Chromium, with screenshots in test-artifacts/.

Debian's chromium driven by Playwright (no browser download), against a live
server that also serves the static files, so the pages look as in production.
"""

import os
from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles.testing import StaticLiveServerTestCase

from tests.flows.support import live_base_url_settings
from tests.support import CHROMIUM_ARGS, require_chromium, sync_playwright

ARTIFACTS = Path(settings.BASE_DIR) / "test-artifacts"
DOCS_PAGES = {
    "/docs/": "docs-index",
    "/docs/connecting": "docs-connecting",
    "/docs/troubleshooting": "docs-troubleshooting",
}
# --bg of site.css in the light scheme: proof that the stylesheet was loaded and applied.
PAGE_BACKGROUND = "rgb(244, 245, 247)"


class BrowserPagesTests(StaticLiveServerTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        # Playwright's sync API runs an event loop in this thread; the test's own ORM use stays synchronous.
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
        super().setUpClass()

    def setUp(self) -> None:
        chromium = require_chromium()
        self.enterContext(live_base_url_settings(self.live_server_url))
        ARTIFACTS.mkdir(exist_ok=True)
        playwright = self.enterContext(sync_playwright())
        self.browser = playwright.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        self.addCleanup(self.browser.close)
        self.errors: list[str] = []

    def open(self, path: str, *, javascript: bool = True):
        context = self.browser.new_context(
            java_script_enabled=javascript, color_scheme="light", viewport={"width": 1280, "height": 900}
        )
        self.addCleanup(context.close)
        if javascript:
            context.grant_permissions(["clipboard-read", "clipboard-write"], origin=self.live_server_url)
        page = context.new_page()
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("response", lambda answer: answer.status >= 400 and self.errors.append(f"{answer.status} {answer.url}"))
        response = page.goto(self.live_server_url + path)
        self.assertEqual(response.status, 200, path)
        return page

    def assertStyled(self, page) -> None:
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        self.assertEqual(background, PAGE_BACKGROUND)

    def test_front_page_shows_the_url_and_copies_it(self) -> None:
        page = self.open("/")
        mcp_url = f"{self.live_server_url}/api/mcp/operator"

        self.assertEqual(page.inner_text("#mcp-url"), mcp_url)
        self.assertStyled(page)
        page.click("summary:has-text('Cursor')")
        self.assertIn(mcp_url, page.inner_text("#cursor pre"))
        page.screenshot(path=str(ARTIFACTS / "front-page.png"), full_page=True)
        copy = page.locator("button[data-copy=mcp-url]")
        self.assertTrue(copy.is_visible())
        copy.click()
        page.wait_for_function("document.querySelector('button[data-copy=mcp-url]').textContent === 'Copied'")
        self.assertEqual(page.evaluate("navigator.clipboard.readText()"), mcp_url)
        self.assertEqual(self.errors, [])
        self.assertTrue((ARTIFACTS / "front-page.png").exists())

    def test_front_page_works_without_javascript_but_the_copy_button(self) -> None:
        page = self.open("/", javascript=False)

        self.assertEqual(page.inner_text("#mcp-url"), f"{self.live_server_url}/api/mcp/operator")
        self.assertFalse(page.locator("button[data-copy=mcp-url]").is_visible())
        page.click("summary:has-text('MCP Inspector')")
        self.assertIn("--protocol-era modern", page.inner_text("#inspector"))
        self.assertStyled(page)

    def test_three_docs_pages_render_with_the_page_list(self) -> None:
        for path, name in DOCS_PAGES.items():
            with self.subTest(path=path):
                page = self.open(path)

                self.assertStyled(page)
                current = page.locator("nav[aria-label='Documentation pages'] a[aria-current=page]")
                self.assertEqual(current.get_attribute("href"), path)
                self.assertTrue(page.locator("article h1").is_visible())
                page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=False)
                self.assertTrue((ARTIFACTS / f"{name}.png").exists())
        self.assertEqual(self.errors, [])

    def test_a_link_between_pages_lands_on_its_anchor(self) -> None:
        page = self.open("/docs/connecting")

        page.click("article a[href='/docs/troubleshooting#localhost-and-127001']")
        page.wait_for_url("**/docs/troubleshooting#localhost-and-127001")

        heading = page.locator("#localhost-and-127001")
        self.assertEqual(heading.inner_text().rstrip("#").strip(), "localhost and 127.0.0.1")
        self.assertTrue(heading.is_visible())
        top = page.evaluate("document.getElementById('localhost-and-127001').getBoundingClientRect().top")
        self.assertLess(top, 100)
