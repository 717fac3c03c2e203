"""Writes of modules and sources (docs/development/code-style.md#layout).

Each function is one business operation and is atomic. Source text is processed
deterministically (knowledge/processing.py); the search index follows the
chunk rows automatically (triggers on SQLite, a generated column on PostgreSQL).
Every chunk row carries its source's organization, which the search index
holds; only this module writes chunks, and it always copies it from the source.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import cast

from django.db import connection, transaction
from django.utils import timezone

from knowledge.models import Module, ModuleSection, ModuleStatus, Source, SourceChunk, SourceKind, SourceStatus
from knowledge.processing import normalise_text, split_into_chunks
from knowledge.search.schema import fold_pending_entries
from operator_core.errors import InvalidArguments
from organizations.models import Organization


@dataclass(frozen=True)
class ImportOutcome:
    source: Source
    created: bool
    changed: bool


@dataclass(frozen=True)
class TextDocument:
    """A document to import as a source: `origin` (with `kind`) identifies it within the organization."""

    title: str
    origin: str
    text: str
    kind: str = SourceKind.FILE


@dataclass(frozen=True)
class DocumentRejected:
    document: TextDocument
    error: InvalidArguments


@dataclass(frozen=True)
class ReprocessOutcome:
    processed: int
    failed: int


@transaction.atomic
def create_module(
    *,
    organization: Organization,
    title: str,
    summary: str = "",
    status: ModuleStatus | str = ModuleStatus.DRAFT,
    sections: Iterable[tuple[str, str]] = (),
    sources: Iterable[Source] = (),
) -> Module:
    """A module with ordered sections (positions 0, 1, …) linked to sources of the same organization."""
    if not title.strip():
        raise InvalidArguments("A module needs a title.", field="title")
    if status not in ModuleStatus.values:
        raise InvalidArguments("Unknown module status.", field="status")
    sources = list(sources)
    if any(source.organization_id != organization.id for source in sources):
        raise InvalidArguments("Sources must belong to the module's organization.", field="sources")
    module = Module.objects.create(organization=organization, title=title.strip(), summary=summary, status=status)
    ModuleSection.objects.bulk_create(
        ModuleSection(module=module, position=position, title=section_title, body=body)
        for position, (section_title, body) in enumerate(sections)
    )
    module.sources.set(sources)
    return module


def process_source(source: Source) -> Source:
    """Normalise the text, replace the chunks and mark the source processed, atomically.

    Deterministic: the same text always gives the same chunks. The search index
    follows the chunk rows. Empty text (after normalisation) marks the source
    failed, removes any chunks and raises InvalidArguments(field="text"); when
    called inside an outer transaction that rolls back, nothing is kept.
    """
    text = normalise_text(source.text or "")
    if not text:
        mark_source_failed(source)
        raise _no_text()
    chunks = split_into_chunks(text)
    with transaction.atomic():
        SourceChunk.objects.filter(source=source).delete()
        SourceChunk.objects.bulk_create(_chunk_rows(source, chunks))
        source.text = text
        source.status = SourceStatus.PROCESSED
        source.processed_at = timezone.now()
        source.save(update_fields=["text", "status", "processed_at", "updated_at"])
    fold_pending_entries(connection)
    return source


def _chunk_rows(source: Source, chunks: list[str]) -> list[SourceChunk]:
    return [
        SourceChunk(source=source, organization_id=source.organization_id, index=index, text=chunk)
        for index, chunk in enumerate(chunks)
    ]


def register_source(
    *, organization: Organization, title: str, kind: SourceKind | str, origin: str = "", text: str = ""
) -> Source:
    """Record a source as pending (not yet processed, so invisible to tools)."""
    problem = _title_or_kind_problem(title, kind)
    if problem is not None:
        raise problem
    return Source.objects.create(
        organization=organization,
        title=title.strip(),
        kind=kind,
        origin=origin,
        text=text,
        status=SourceStatus.PENDING,
    )


@transaction.atomic
def create_source(*, organization: Organization, title: str, kind: SourceKind | str, origin: str, text: str) -> Source:
    """Create and process a source in one transaction: it exists processed, or not at all."""
    source = register_source(organization=organization, title=title, kind=kind, origin=origin, text=text)
    return process_source(source)


@transaction.atomic
def import_text_source(
    *, organization: Organization, title: str, origin: str, text: str, kind: SourceKind | str = SourceKind.FILE
) -> ImportOutcome:
    """Create, or update in place, the source of `organization` with this kind and origin.

    Re-importing unchanged text changes nothing; changed text is reprocessed.
    Atomic: on any failure (for example empty text) nothing is kept.
    """
    existing = (
        Source.objects.select_for_update()
        .filter(organization=organization, kind=kind, origin=origin)
        .order_by("created_at", "id")
        .first()
    )
    if existing is None:
        source = create_source(organization=organization, title=title, kind=kind, origin=origin, text=text)
        return ImportOutcome(source=source, created=True, changed=True)
    document = TextDocument(title=title, origin=origin, text=text, kind=kind)
    if _is_unchanged(existing, document, normalise_text(text)):
        return ImportOutcome(source=existing, created=False, changed=False)
    existing.title, existing.text = title.strip() or existing.title, text
    existing.save(update_fields=["title", "text", "updated_at"])
    return ImportOutcome(source=process_source(existing), created=False, changed=True)


@transaction.atomic
def import_text_sources(
    *, organization: Organization, documents: Sequence[TextDocument]
) -> list[ImportOutcome | DocumentRejected]:
    """`import_text_source` for many documents in one transaction, one outcome each, in order.

    A document without a title, of an unknown kind or with no text is rejected
    (DocumentRejected) and writes nothing; the others are imported. New sources
    and their chunks are written with one INSERT per table and batch, which is
    what makes importing and the search benchmark's corpus fast; they hold what
    `create_source` would write: the normalised text, its chunks, `processed`.
    """
    found = Source.objects.select_for_update().filter(
        organization=organization,
        kind__in={document.kind for document in documents},
        origin__in={document.origin for document in documents},
    )
    existing: dict[tuple[str, str], Source] = {}
    for source in found.order_by("-created_at", "-id"):
        existing[(source.kind, source.origin)] = source  # the oldest wins, as in import_text_source
    outcomes: list[ImportOutcome | DocumentRejected | None] = []
    new: list[tuple[int, Source, list[str]]] = []
    claimed: set[tuple[str, str]] = set()
    now = timezone.now()
    for position, document in enumerate(documents):
        key = (document.kind, document.origin)
        text = normalise_text(document.text)
        problem = _document_problem(document, text)
        if problem is not None:
            outcomes.append(DocumentRejected(document=document, error=problem))
        elif key in existing and _is_unchanged(existing[key], document, text):
            outcomes.append(ImportOutcome(source=existing[key], created=False, changed=False))
        elif key in existing or key in claimed:
            # Seen before (in the database or earlier in this batch): the one-by-one path.
            _create_new_sources(new, outcomes)
            new = []
            outcome = import_text_source(
                organization=organization,
                title=document.title,
                origin=document.origin,
                text=document.text,
                kind=document.kind,
            )
            existing[key] = outcome.source  # what the database now holds, for a later copy in this batch
            outcomes.append(outcome)
        else:
            claimed.add(key)
            source = Source(
                organization=organization,
                title=document.title.strip(),
                kind=document.kind,
                origin=document.origin,
                text=text,
                status=SourceStatus.PROCESSED,
                processed_at=now,
            )
            new.append((position, source, split_into_chunks(text)))
            outcomes.append(None)
    _create_new_sources(new, outcomes)
    return cast(list[ImportOutcome | DocumentRejected], outcomes)  # _create_new_sources filled every None


def _is_unchanged(source: Source, document: TextDocument, text: str) -> bool:
    return source.status == SourceStatus.PROCESSED and source.text == text and source.title == document.title.strip()


def _title_or_kind_problem(title: str, kind: str) -> InvalidArguments | None:
    """What `register_source` refuses in a source's title or kind, if anything."""
    if not title.strip():
        return InvalidArguments("A source needs a title.", field="title")
    if kind not in SourceKind.values:
        return InvalidArguments("Unknown source kind.", field="kind")
    return None


def _no_text() -> InvalidArguments:
    return InvalidArguments("The source has no text to process.", field="text")


def _document_problem(document: TextDocument, text: str) -> InvalidArguments | None:
    """What `create_source` would refuse in a document, if anything: its title, kind or (normalised) text."""
    problem = _title_or_kind_problem(document.title, document.kind)
    if problem is None and not text:
        problem = _no_text()
    return problem


def _create_new_sources(
    new: list[tuple[int, Source, list[str]]], outcomes: list[ImportOutcome | DocumentRejected | None]
) -> None:
    if not new:
        return
    sources = Source.objects.bulk_create([source for _, source, _ in new])
    SourceChunk.objects.bulk_create(
        [row for source, (_, _, chunks) in zip(sources, new, strict=True) for row in _chunk_rows(source, chunks)],
        batch_size=2000,
    )
    fold_pending_entries(connection)
    for source, (position, _, _) in zip(sources, new, strict=True):
        outcomes[position] = ImportOutcome(source=source, created=True, changed=True)


def reprocess_sources(sources: Iterable[Source]) -> ReprocessOutcome:
    """Process each source again, each in its own transaction; count successes and failures."""
    processed = failed = 0
    for source in sources:
        try:
            process_source(source)
        except InvalidArguments:
            failed += 1
        else:
            processed += 1
    return ReprocessOutcome(processed=processed, failed=failed)


def mark_source_failed(source: Source) -> Source:
    """Mark a source failed and drop its chunks (for example: extraction found no text)."""
    with transaction.atomic():
        SourceChunk.objects.filter(source=source).delete()
        source.status, source.processed_at = SourceStatus.FAILED, None
        source.save(update_fields=["status", "processed_at", "updated_at"])
    return source
