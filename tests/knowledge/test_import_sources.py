import shutil
import tempfile
from io import StringIO
from pathlib import Path
from unittest import mock

from django.core.management import CommandError, call_command
from django.test import TestCase

from knowledge.management.commands import import_sources
from knowledge.models import Source, SourceKind, SourceStatus
from tests.factories import make_organization


class ImportSourcesCommandTests(TestCase):
    def setUp(self) -> None:
        self.organization = make_organization(slug="acme-import")
        self.folder = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.folder)

    def _write(self, name: str, content: str | bytes) -> Path:
        path = self.folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    def _import(self, *paths: Path | str) -> tuple[str, str]:
        stdout, stderr = StringIO(), StringIO()
        call_command("import_sources", "--org", "acme-import", *map(str, paths), stdout=stdout, stderr=stderr)
        return stdout.getvalue(), stderr.getvalue()

    def test_imports_markdown_text_and_html_files_as_processed_sources(self) -> None:
        markdown = self._write("guide.md", "# Onboarding guide\n\nWelcome to the team.")
        text = self._write("notes.txt", "Plain notes about the release train.")
        html = self._write("page.html", "<title>Expenses</title><script>x()</script><p>Claim within 30 days.</p>")

        stdout, _ = self._import(markdown, text, html)

        self.assertIn("3 created, 0 updated, 0 unchanged, 0 skipped", stdout)
        sources = {s.origin: s for s in Source.objects.filter(organization=self.organization)}
        self.assertEqual(set(sources), {"guide.md", "notes.txt", "page.html"})
        self.assertEqual(sources["guide.md"].title, "Onboarding guide")
        self.assertEqual(sources["page.html"].title, "Expenses")
        self.assertEqual(sources["page.html"].text, "Claim within 30 days.")
        for source in sources.values():
            self.assertEqual((source.status, source.kind), (SourceStatus.PROCESSED, SourceKind.FILE))
            self.assertGreater(source.chunks.count(), 0)

    def test_files_in_several_batches_are_all_imported_and_counted(self) -> None:
        for number in range(5):
            self._write(f"doc-{number}.md", f"Document number {number}.")
        self._write("doc-2.md", "  \n\n ")
        self._import(self.folder / "doc-0.md")

        with mock.patch.object(import_sources, "BATCH_FILES", 2):
            stdout, stderr = self._import(self.folder)

        self.assertIn("3 created, 0 updated, 1 unchanged, 1 skipped", stdout)
        self.assertIn("doc-2.md: File has no text.", stderr)
        self.assertEqual(
            sorted(Source.objects.values_list("origin", flat=True)), ["doc-0.md", "doc-1.md", "doc-3.md", "doc-4.md"]
        )

    def test_empty_file_is_reported_and_skipped(self) -> None:
        empty = self._write("empty.md", "  \n\n ")

        stdout, stderr = self._import(empty)

        self.assertIn("0 created, 0 updated, 0 unchanged, 1 skipped", stdout)
        self.assertIn("empty.md: File has no text.", stderr)
        self.assertEqual(Source.objects.count(), 0)

    def test_binary_file_is_reported_and_skipped(self) -> None:
        binary = self._write("logo.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

        stdout, stderr = self._import(binary)

        self.assertIn("1 skipped", stdout)
        self.assertIn("not a UTF-8 text file", stderr)
        self.assertEqual(Source.objects.count(), 0)

    def test_missing_file_is_reported_and_the_others_still_import(self) -> None:
        good = self._write("good.md", "Good text.")

        stdout, stderr = self._import(self.folder / "missing.md", good)

        self.assertIn("1 created, 0 updated, 0 unchanged, 1 skipped", stdout)
        self.assertIn("missing.md: File not found.", stderr)
        self.assertEqual(list(Source.objects.values_list("origin", flat=True)), ["good.md"])

    def test_a_folder_is_walked_recursively_skipping_hidden_and_other_files(self) -> None:
        self._write("policies/security.md", "Security policy text.")
        self._write("policies/deep/expenses.txt", "Expense policy text.")
        self._write(".git/notes.md", "Never imported.")
        self._write("scan.pdf", "%PDF-1.4")

        stdout, _ = self._import(self.folder)

        self.assertIn("2 created", stdout)
        origins = sorted(Source.objects.values_list("origin", flat=True))
        self.assertEqual(origins, ["policies/deep/expenses.txt", "policies/security.md"])

    def test_importing_again_updates_instead_of_duplicating(self) -> None:
        path = self._write("guide.md", "First version.")
        self._import(path)
        path.write_text("Second version.", encoding="utf-8")

        stdout, _ = self._import(path)

        self.assertIn("0 created, 1 updated", stdout)
        self.assertEqual(list(Source.objects.values_list("text", flat=True)), ["Second version."])

    def test_unknown_organization_is_an_error(self) -> None:
        path = self._write("guide.md", "Text.")

        with self.assertRaises(CommandError):
            call_command("import_sources", "--org", "nobody", str(path), stdout=StringIO(), stderr=StringIO())

        self.assertEqual(Source.objects.count(), 0)
