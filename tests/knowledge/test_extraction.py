import tempfile
from pathlib import Path

from django.test import SimpleTestCase

from knowledge.extraction import html_to_document, read_document
from operator_core.errors import ErrorCode, InvalidArguments


class HtmlToDocumentTests(SimpleTestCase):
    def test_drops_script_and_style_and_keeps_paragraphs(self) -> None:
        html = (
            "<html><head><title>Expense rules</title><style>p{color:red}</style></head>"
            "<body><script>alert('x')</script><h1>Expenses</h1><p>Claim within <b>thirty</b> days.</p>"
            "<ul><li>Receipts</li><li>Purpose</li></ul></body></html>"
        )

        document = html_to_document(html)

        self.assertEqual(document.title, "Expense rules")
        self.assertEqual(document.text, "Expenses\n\nClaim within thirty days.\n\n- Receipts\n\n- Purpose")

    def test_title_falls_back_to_the_first_heading(self) -> None:
        self.assertEqual(html_to_document("<h1>Safety &amp; you</h1><p>Text.</p>").title, "Safety & you")


class ReadDocumentTests(SimpleTestCase):
    def setUp(self) -> None:
        self.folder = Path(tempfile.mkdtemp())

    def test_markdown_title_comes_from_the_first_heading(self) -> None:
        path = self.folder / "guide.md"
        path.write_text("# Onboarding guide\n\nWelcome aboard.\n", encoding="utf-8")

        document = read_document(path)

        self.assertEqual((document.title, document.text), ("Onboarding guide", "# Onboarding guide\n\nWelcome aboard."))

    def test_binary_file_is_refused(self) -> None:
        path = self.folder / "image.txt"
        path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")

        with self.assertRaises(InvalidArguments) as caught:
            read_document(path)

        self.assertEqual(caught.exception.code, ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(caught.exception.data, {"field": "path"})
