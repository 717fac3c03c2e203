"""`manage.py import_sources --org SLUG PATH...`: import .md, .txt and .html files.

Folders are walked recursively (hidden entries skipped, files in name order).
Each file becomes one processed source of the organization; re-importing a file
updates its source instead of duplicating it. A missing, unreadable, binary or
empty file is reported and skipped, and never stops the others. Files are
written in batches of BATCH_FILES, each batch in one transaction: a batch of
new files costs a few INSERTs instead of a few per file.
"""

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO, cast

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from knowledge.extraction import SUPPORTED_SUFFIXES, read_document
from knowledge.services import DocumentRejected, TextDocument, import_text_sources
from operator_core.errors import InvalidArguments
from organizations.selectors import organization_by_slug_or_none

BATCH_FILES = 100


def _candidates(paths: list[str]) -> list[tuple[Path, str]]:
    """(file, origin) pairs: a named file keeps its name, a folder's files their relative path."""
    found: list[tuple[Path, str]] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for file in sorted(path.rglob("*")):
                relative = file.relative_to(path)
                if any(part.startswith(".") for part in relative.parts):
                    continue
                if file.is_file() and file.suffix.lower() in SUPPORTED_SUFFIXES:
                    found.append((file, relative.as_posix()))
        else:
            found.append((path, path.name))
    return found


class Command(BaseCommand):
    help = "Import .md, .txt and .html files (folders recursively) as processed sources of one organization."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--org", required=True, metavar="SLUG", help="slug of the organization")
        parser.add_argument("paths", nargs="+", metavar="PATH", help="files or folders to import")
        parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")

    def handle(self, *args: Any, **options: Any) -> None:
        organization = organization_by_slug_or_none(str(options["org"]))
        if organization is None:
            raise CommandError(f"No organization with slug {options['org']!r}.")
        created = updated = unchanged = skipped = 0
        candidates = _candidates(list(options["paths"]))
        # The stream OutputWrapper wraps; django-stubs leaves `_out` undeclared.
        stderr = cast(TextIO, self.stderr._out)
        progress = tqdm(
            candidates,
            desc="Importing",
            unit="file",
            disable=bool(options["no_progress"]) or not candidates,
            file=stderr,
        )
        for batch in _batches(progress):
            documents: list[TextDocument] = []
            paths: list[Path] = []
            for path, origin in batch:
                try:
                    document = read_document(path)
                except InvalidArguments as error:
                    skipped += 1
                    progress.write(f"Skipped {path}: {error.message}", file=stderr)
                    continue
                documents.append(TextDocument(title=document.title, origin=origin, text=document.text))
                paths.append(path)
            outcomes = import_text_sources(organization=organization, documents=documents)
            for path, outcome in zip(paths, outcomes, strict=True):
                if isinstance(outcome, DocumentRejected):
                    skipped += 1
                    progress.write(f"Skipped {path}: {outcome.error.message}", file=stderr)
                elif outcome.created:
                    created += 1
                elif outcome.changed:
                    updated += 1
                else:
                    unchanged += 1
        self.stdout.write(
            f"{organization.slug}: {created} created, {updated} updated, {unchanged} unchanged, {skipped} skipped."
        )


def _batches(candidates: Iterable[tuple[Path, str]]) -> Iterator[list[tuple[Path, str]]]:
    batch: list[tuple[Path, str]] = []
    for candidate in candidates:
        batch.append(candidate)
        if len(batch) == BATCH_FILES:
            yield batch
            batch = []
    if batch:
        yield batch
