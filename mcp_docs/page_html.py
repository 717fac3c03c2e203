"""The documentation pages as HTML, for `/docs/` and `/docs/<page>`: reads, no writes.

The HTML comes from the very Markdown the docs MCP endpoint serves
(`selectors.docs_library`), so a person and an agent read the same words.
Rendering adds what a browser needs and the Markdown cannot say:

- every heading gets an `id`, the GitHub-style anchor `selectors.slugify` gives
  the docs endpoint's sections (`## Refresh tokens` is `#refresh-tokens`, a
  repeat is `-1`, `-2`), and a `#` link to itself;
- a link to another page (`tools.md#pagination`) points at that page here
  (`/docs/tools#pagination`); `index.md` is `/docs/`. Other links are left as
  written: a page that links outside the served pages is a bug in the docs,
  which tests/mcp_docs catches.
"""

import functools
import xml.etree.ElementTree as etree
from collections import Counter
from dataclasses import dataclass
from urllib.parse import urlsplit

import markdown
from django.urls import reverse
from markdown.extensions import Extension
from markdown.treeprocessors import Treeprocessor

from mcp_docs.selectors import INDEX_PAGE, docs_library, load_library, slugify
from operator_core.conf import operator_settings

HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# After Python-Markdown's inline processor (priority 20), so headings hold their final text.
TREEPROCESSOR_PRIORITY = 5


@dataclass(frozen=True)
class PageLink:
    path: str
    title: str
    url: str


def page_url(path: str) -> str:
    """The address of the page whose file is `path` (`tools.md` -> `/docs/tools`, `index.md` -> `/docs/`)."""
    if path == INDEX_PAGE:
        return reverse("mcp_docs:docs-index")
    return reverse("mcp_docs:page", kwargs={"page": path.removesuffix(".md")})


def page_links() -> list[PageLink]:
    """Every page, in the docs endpoint's order (index first, then by file name)."""
    return [PageLink(path=page.path, title=page.title, url=page_url(page.path)) for page in docs_library().pages]


def page_html(path: str) -> str:
    """The HTML of the page whose file is `path`, rendered once per process and docs directory.

    Raises `NotFound` (from the library) when there is no such page.
    """
    return _rendered(operator_settings().docs_dir, path)


@functools.cache
def _rendered(docs_dir: str, path: str) -> str:
    library = load_library(docs_dir)
    page = library.page(path)
    urls = {item.path: page_url(item.path) for item in library.pages}
    renderer = markdown.Markdown(extensions=["tables", "fenced_code", _DocsPages(urls)])
    return renderer.convert(page.markdown)


class _DocsPages(Extension):
    def __init__(self, urls: dict[str, str]) -> None:
        super().__init__()
        self.urls = urls

    def extendMarkdown(self, md: markdown.Markdown) -> None:
        md.treeprocessors.register(_AnchorsAndLinks(md, self.urls), "docs_pages", TREEPROCESSOR_PRIORITY)


class _AnchorsAndLinks(Treeprocessor):
    def __init__(self, md: markdown.Markdown, urls: dict[str, str]) -> None:
        super().__init__(md)
        self.urls = urls

    def run(self, root: etree.Element) -> None:
        used: Counter[str] = Counter()
        for element in list(root.iter()):
            if element.tag in HEADINGS:
                base = slugify("".join(element.itertext()).strip())
                anchor = base if not used[base] else f"{base}-{used[base]}"
                used[base] += 1
                element.set("id", anchor)
                link = etree.SubElement(element, "a", {"class": "anchor", "href": f"#{anchor}"})
                link.set("aria-label", "Link to this section")
                link.text = "#"
            elif element.tag == "a" and element.get("href"):
                element.set("href", self._address(element.get("href", "")))

    def _address(self, href: str) -> str:
        parts = urlsplit(href)
        if parts.scheme or parts.netloc or not parts.path:
            return href
        target = self.urls.get(parts.path)
        if target is None:
            return href
        return f"{target}#{parts.fragment}" if parts.fragment else target
