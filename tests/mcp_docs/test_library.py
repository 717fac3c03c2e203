"""The docs library: sections, anchors and deterministic ranked search (mcp_docs.selectors)."""

import re
import tempfile
from pathlib import Path

from django.conf import settings
from django.test import SimpleTestCase

from mcp_docs.selectors import load_library, parse_page, slugify, tokenize
from operator_core.errors import ErrorCode, NotFound

PAGE = """# Authentication

How clients sign in.

## Refresh tokens

A refresh token lives 30 days. Each refresh issues a new pair.

### Rotation

The old refresh token is retired.

## Access tokens

An access token lives one hour.

```sh
# not a heading: inside a fence
```

## Access tokens
"""


class ParsePageTests(SimpleTestCase):
    def test_page_is_split_at_first_second_and_third_level_headings(self) -> None:
        page = parse_page("authentication.md", PAGE)

        self.assertEqual(
            [(section.anchor, section.level) for section in page.sections],
            [
                ("authentication", 1),
                ("refresh-tokens", 2),
                ("rotation", 3),
                ("access-tokens", 2),
                ("access-tokens-1", 2),
            ],
        )

    def test_heading_inside_a_code_fence_is_text(self) -> None:
        page = parse_page("authentication.md", PAGE)

        self.assertIn("# not a heading", page.sections[3].markdown)

    def test_section_markdown_includes_its_subsections(self) -> None:
        page = parse_page("authentication.md", PAGE)

        section, markdown = page.section_markdown("refresh-tokens")

        self.assertEqual(section.title, "Refresh tokens")
        self.assertIn("### Rotation", markdown)
        self.assertNotIn("## Access tokens", markdown)

    def test_unknown_section_raises_not_found(self) -> None:
        page = parse_page("authentication.md", PAGE)

        with self.assertRaises(NotFound) as raised:
            page.section_markdown("nope")

        self.assertEqual(raised.exception.code, ErrorCode.NOT_FOUND)

    def test_anchors_follow_the_github_style(self) -> None:
        self.assertEqual(slugify("Refresh tokens (30 days)"), "refresh-tokens-30-days")
        self.assertEqual(slugify("`search_docs`"), "search_docs")

    def test_tokens_are_lowercase_words_with_plural_s_dropped(self) -> None:
        self.assertEqual(
            tokenize("Refresh TOKENS, access-token; status"), ["refresh", "token", "access", "token", "status"]
        )


class SearchTests(SimpleTestCase):
    def setUp(self) -> None:
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        root = Path(directory.name)
        (root / "authentication.md").write_text(PAGE)
        (root / "limits.md").write_text(
            "# Limits\n\n## Lifetimes\n\nAccess token: one hour. Refresh token: 30 days.\n\n"
            "## Rates\n\nTool calls: 120 per minute.\n"
        )
        (root / "index.md").write_text("# Index\n\nEvery page.\n")
        self.library = load_library(str(root))

    def test_section_whose_heading_holds_the_phrase_ranks_first(self) -> None:
        hits = self.library.search("refresh token", limit=5)

        self.assertEqual((hits[0].path, hits[0].section), ("authentication.md", "refresh-tokens"))

    def test_results_are_ordered_by_descending_score(self) -> None:
        scores = [hit.score for hit in self.library.search("token", limit=20)]

        self.assertEqual(scores, sorted(scores, reverse=True))

    def test_same_query_gives_the_same_list_every_time(self) -> None:
        first = self.library.search("access token hour", limit=20)

        second = self.library.search("access token hour", limit=20)

        self.assertEqual(first, second)

    def test_equal_scores_are_ordered_by_path_then_position(self) -> None:
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        root = Path(directory.name)
        for name in ("b.md", "a.md"):
            (root / name).write_text("# One\n\nsame words\n\n# Two\n\nsame words\n")
        library = load_library(str(root))

        hits = library.search("same words", limit=10)

        self.assertEqual(
            [(hit.path, hit.section) for hit in hits],
            [("a.md", "one"), ("a.md", "two"), ("b.md", "one"), ("b.md", "two")],
        )

    def test_limit_caps_the_number_of_results(self) -> None:
        self.assertEqual(len(self.library.search("token", limit=1)), 1)

    def test_query_without_words_finds_nothing(self) -> None:
        self.assertEqual(self.library.search("?!", limit=5), [])

    def test_hit_carries_a_docs_uri_with_the_anchor(self) -> None:
        hit = self.library.search("refresh token", limit=1)[0]

        self.assertEqual(hit.uri, "docs://authentication.md#refresh-tokens")

    def test_index_page_is_listed_first(self) -> None:
        self.assertEqual([page.path for page in self.library.pages], ["index.md", "authentication.md", "limits.md"])


class ProjectDocsTests(SimpleTestCase):
    """The real `docs/` of the repository (issue 6, "Done when")."""

    def test_refresh_token_finds_the_refresh_section_of_authentication_md_first(self) -> None:
        library = load_library(settings.OPERATOR["docs_dir"])

        best = library.search("refresh token", limit=1)[0]

        self.assertEqual(best.path, "authentication.md")
        self.assertIn("refresh", best.title.lower())

    def test_every_page_linked_from_the_index_exists(self) -> None:
        library = load_library(settings.OPERATOR["docs_dir"])
        paths = {page.path for page in library.pages}

        linked = {target.split("#")[0] for target in _page_links(library.page("index.md").markdown)}

        self.assertEqual(linked - paths, set())

    def test_links_between_existing_pages_name_existing_sections(self) -> None:
        library = load_library(settings.OPERATOR["docs_dir"])
        anchors = {page.path: {section.anchor for section in page.sections} for page in library.pages}

        broken = [
            f"{page.path} -> {target}"
            for page in library.pages
            for target in _page_links(page.markdown)
            if "#" in target
            and target.split("#")[0] in anchors
            and target.split("#")[1] not in anchors[target.split("#")[0]]
        ]

        self.assertEqual(broken, [])


def _page_links(markdown: str) -> list[str]:
    """Targets of relative Markdown links to other pages: `limits.md`, `docs-server.md#rate-limit`."""
    return [target for target in re.findall(r"\]\(([^)\s]+)\)", markdown) if re.match(r"^[\w-]+\.md(#|$)", target)]
