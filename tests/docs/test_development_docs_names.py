"""docs/development/ names only code that exists: a rename or a move fails here until the page follows.

The user docs (docs/*.md) are held to their file paths and anchors, and the
code's citations of a docs anchor (`docs/development/decisions.md#cursors`) to
the heading they cite.
"""

from django.test import SimpleTestCase

from tests.docs.names import (
    ROOT,
    missing_anchors,
    missing_dotted_names,
    missing_names_in_modules,
    missing_own_anchors,
    missing_paths,
    missing_words,
)

DEVELOPMENT_PAGES = sorted((ROOT / "docs" / "development").glob("*.md"))
USER_PAGES = sorted((ROOT / "docs").glob("*.md"))
CODE_FOLDERS = [*sorted(path.parent for path in ROOT.glob("*/__init__.py")), ROOT / "bench", ROOT / "deploy"]


class DevelopmentDocsNamesTests(SimpleTestCase):
    def test_there_are_development_pages_to_check(self) -> None:
        self.assertIn("architecture.md", [page.name for page in DEVELOPMENT_PAGES])

    def test_every_path_a_development_page_names_exists(self) -> None:
        for page in DEVELOPMENT_PAGES:
            with self.subTest(page=page.name):
                self.assertEqual(missing_paths(page.read_text()), set())

    def test_every_dotted_name_a_development_page_names_exists(self) -> None:
        for page in DEVELOPMENT_PAGES:
            with self.subTest(page=page.name):
                self.assertEqual(missing_dotted_names(page.read_text()), set())

    def test_every_name_a_development_page_ties_to_a_module_is_defined_there(self) -> None:
        for page in DEVELOPMENT_PAGES:
            with self.subTest(page=page.name):
                self.assertEqual(missing_names_in_modules(page.read_text()), set())

    def test_every_snake_case_name_a_development_page_names_is_in_the_code(self) -> None:
        for page in DEVELOPMENT_PAGES:
            with self.subTest(page=page.name):
                self.assertEqual(missing_words(page.read_text()), set())

    def test_every_anchor_a_development_page_cites_exists(self) -> None:
        for page in DEVELOPMENT_PAGES:
            with self.subTest(page=page.name):
                self.assertEqual(missing_anchors(page.read_text(), relative_to=page.parent), set())
                self.assertEqual(missing_own_anchors(page), set())


class UserDocsNamesTests(SimpleTestCase):
    def test_every_path_a_user_page_names_exists(self) -> None:
        for page in USER_PAGES:
            with self.subTest(page=page.name):
                self.assertEqual(missing_paths(page.read_text()), set())

    def test_every_anchor_a_user_page_cites_exists(self) -> None:
        for page in USER_PAGES:
            with self.subTest(page=page.name):
                self.assertEqual(missing_anchors(page.read_text(), relative_to=page.parent), set())
                self.assertEqual(missing_own_anchors(page), set())


class CodeCitationsTests(SimpleTestCase):
    def test_every_docs_anchor_the_code_cites_exists(self) -> None:
        # This folder's own tests cite missing anchors on purpose.
        modules = [
            module
            for folder in CODE_FOLDERS
            for module in folder.rglob("*.py")
            if not module.is_relative_to(ROOT / "tests" / "docs")
        ]
        self.assertGreater(len(modules), 100)
        for module in modules:
            with self.subTest(module=str(module.relative_to(ROOT))):
                self.assertEqual(missing_anchors(module.read_text(), relative_to=module.parent), set())


class CheckerTests(SimpleTestCase):
    """The checker itself finds what is gone, so that the tests above cannot pass by finding nothing."""

    def test_a_path_that_is_gone_is_found(self) -> None:
        text = "See `organizations/search.py`, knowledge/nowhere/ and `knowledge/search/query.py`."
        self.assertEqual(missing_paths(text), {"organizations/search.py", "knowledge/nowhere/"})

    def test_a_bare_module_name_that_is_gone_is_found(self) -> None:
        self.assertEqual(missing_paths("`payloads.py` and `make_processed_source.py`"), {"make_processed_source.py"})

    def test_a_dotted_name_that_is_gone_is_found(self) -> None:
        text = "`operator_core.sql.fetch`, `knowledge.search.query`, `audit.AuditEvent`, `operator_core.sql.fetch_all`"
        self.assertEqual(missing_dotted_names(text), {"operator_core.sql.fetch_all"})

    def test_a_name_that_left_its_module_is_found(self) -> None:
        text = (
            "`fetch` (`operator_core/sql.py`), `ToolRegistry.call_tool` (`operator_core/mcp/tools.py`), "
            "`make_processed_source` in `tests/factories.py`, `ToolRegistry.nothing` (`operator_core/mcp/tools.py`)"
        )
        self.assertEqual(
            missing_names_in_modules(text),
            {"make_processed_source in tests/factories.py", "ToolRegistry.nothing in operator_core/mcp/tools.py"},
        )

    def test_a_snake_case_name_the_code_no_longer_holds_is_found(self) -> None:
        text = "`make_module`, `prepare_threshold`, `gin_pending_list_limit` and `make_processed_source`"
        self.assertEqual(missing_words(text), {"make_processed_source"})

    def test_an_anchor_that_is_gone_is_found(self) -> None:
        text = "[cursors](decisions.md#cursors) and docs/development/decisions.md#no-such-heading"
        self.assertEqual(
            missing_anchors(text, relative_to=ROOT / "docs" / "development"),
            {"docs/development/decisions.md#no-such-heading"},
        )
