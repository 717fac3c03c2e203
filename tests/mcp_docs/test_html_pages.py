"""`/docs/` and `/docs/<page>`: every page of docs/ as HTML, with the page list, anchors and working links."""

from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

from django.conf import settings
from django.test import TestCase

from mcp_docs.page_html import page_url
from mcp_docs.selectors import load_library

HTML_ACCEPT = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}


class _Page(HTMLParser):
    """The ids, the link targets and the page-list entries of one HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.nav: list[str] = []
        self.current: list[str] = []
        self.in_nav = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if attributes.get("id"):
            self.ids.add(attributes["id"] or "")
        if tag == "nav" and attributes.get("aria-label") == "Documentation pages":
            self.in_nav = True
        if tag == "a" and attributes.get("href"):
            href = attributes["href"] or ""
            (self.nav if self.in_nav else self.links).append(href)
            if self.in_nav and attributes.get("aria-current") == "page":
                self.current.append(href)

    def handle_endtag(self, tag: str) -> None:
        if tag == "nav":
            self.in_nav = False


def parsed(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


class DocsPagesTests(TestCase):
    def setUp(self) -> None:
        self.library = load_library(settings.OPERATOR["docs_dir"])

    def get(self, path: str):
        return self.client.get(path, headers=HTML_ACCEPT)

    def test_every_page_is_served_as_html_with_its_title(self) -> None:
        for page in self.library.pages:
            with self.subTest(page=page.path):
                response = self.get(page_url(page.path))

                self.assertEqual(response.status_code, 200)
                self.assertTrue(response["Content-Type"].startswith("text/html"))
                self.assertContains(response, f"<title>{page.title} · Service Operator</title>", html=False)

    def test_the_index_is_at_docs_and_docs_index_sends_there(self) -> None:
        self.assertEqual(page_url("index.md"), "/docs/")
        self.assertContains(self.get("/docs/"), "Service Operator documentation")
        self.assertRedirects(self.get("/docs/index"), "/docs/", status_code=301)

    def test_every_page_lists_every_page_and_marks_itself(self) -> None:
        expected = [page_url(page.path) for page in self.library.pages]
        for page in self.library.pages:
            with self.subTest(page=page.path):
                html = parsed(self.get(page_url(page.path)).content.decode())

                self.assertEqual(html.nav, expected)
                self.assertEqual(html.current, [page_url(page.path)])

    def test_every_section_of_the_docs_endpoint_is_an_anchor_of_the_page(self) -> None:
        for page in self.library.pages:
            with self.subTest(page=page.path):
                html = parsed(self.get(page_url(page.path)).content.decode())

                self.assertLessEqual({section.anchor for section in page.sections}, html.ids)

    def test_every_link_between_pages_and_to_the_service_resolves(self) -> None:
        pages: dict[str, _Page] = {}
        for page in self.library.pages:
            url = page_url(page.path)
            pages[url] = parsed(self.get(url).content.decode())
        for url, html in pages.items():
            for href in html.links:
                target = urlsplit(urljoin(url, href))
                if target.scheme or target.netloc:
                    continue  # another site: not ours to check
                with self.subTest(page=url, link=href):
                    self.assertEqual(self.get(target.path).status_code, 200)
                    if target.fragment:
                        self.assertIn(target.fragment, pages[target.path].ids)

    def test_markdown_is_served_on_request_as_the_docs_endpoint_serves_it(self) -> None:
        response = self.client.get("/docs/tools", headers={"Accept": "text/markdown"})

        self.assertEqual(response["Content-Type"], "text/markdown; charset=utf-8")
        self.assertEqual(response.content.decode(), self.library.page("tools.md").markdown)

    def test_a_link_to_another_page_points_at_its_html_page(self) -> None:
        html = parsed(self.get("/docs/tools").content.decode())

        self.assertIn("/docs/errors#tool-error-codes", html.links)
        self.assertNotIn("errors.md#tool-error-codes", html.links)

    def test_the_maintainers_guide_and_unknown_pages_are_404(self) -> None:
        for path in ("/docs/development", "/docs/development/architecture", "/docs/architecture", "/docs/nope"):
            with self.subTest(path=path):
                self.assertEqual(self.get(path).status_code, 404)

    def test_a_page_carries_no_inline_script_or_style(self) -> None:
        body = self.get("/docs/connecting").content.decode()

        self.assertNotIn("<script", body)
        self.assertNotIn("<style", body)
        self.assertNotIn(" style=", body)
