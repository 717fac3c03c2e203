"""The tool calls' hand-written reads answer exactly what the ORM answers, on the database under test.

Each test builds awkward data (LIKE wildcards and case in titles, equal
timestamps, unprocessed and foreign rows, modules without sections or sources)
and compares a selector with the ORM query it replaced, for every filter and
every keyset position: the ORM is the reference for vendor adaptation.
"""

import datetime
import itertools
import uuid
from typing import Any

from django.db.models import Count, IntegerField, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce, Length
from django.test import TestCase
from django.utils import timezone

from knowledge.models import Module, ModuleSection, ModuleStatus, Source, SourceChunk, SourceKind, SourceStatus
from knowledge.selectors import (
    module_in_organization,
    modules_for_organization,
    processed_source_in_organization,
    processed_sources_for_organization,
)
from knowledge.services import create_module, mark_source_failed, register_source
from tests.factories import make_module, make_organization, make_source

QUERIES = [None, "safety", "SAFETY", "50%", "a_b", "\\", "o", "zzz"]
NOON = timezone.now().replace(hour=12, minute=0, second=0, microsecond=0)


def _after(orm_rows: QuerySet, moment: str, position: tuple[datetime.datetime, uuid.UUID] | None) -> QuerySet:
    if position is None:
        return orm_rows
    return orm_rows.filter(Q(**{f"{moment}__lt": position[0]}) | Q(**{moment: position[0], "id__lt": position[1]}))


def orm_modules(organization: object, *, query: str | None, status: str | None, after: Any) -> list[dict[str, Any]]:
    rows = _after(Module.objects.filter(organization=organization), "updated_at", after)
    if query:
        rows = rows.filter(Q(title__icontains=query) | Q(summary__icontains=query))
    if status:
        rows = rows.filter(status=status)
    fields = ("id", "title", "summary", "status", "updated_at", "section_count")
    found = list(rows.annotate(section_count=Count("sections")).order_by("-updated_at", "-id").values(*fields))
    links = (
        Module.sources.through.objects.filter(
            module_id__in=[row["id"] for row in found], source__status=SourceStatus.PROCESSED
        )
        .order_by("source__title", "source_id")
        .values_list("module_id", "source_id")
    )
    for row in found:
        row["source_ids"] = [source_id for module_id, source_id in links if module_id == row["id"]]
    return found


def orm_sources(organization: object, *, query: str | None, kind: str | None, after: Any) -> list[dict[str, Any]]:
    rows = _after(
        Source.objects.filter(organization=organization, status=SourceStatus.PROCESSED), "processed_at", after
    )
    if query:
        rows = rows.filter(Q(title__icontains=query) | Q(origin__icontains=query))
    if kind:
        rows = rows.filter(kind=kind)
    counts = SourceChunk.objects.filter(source=OuterRef("pk")).order_by().values("source").annotate(count=Count("id"))
    chunk_count = Coalesce(Subquery(counts.values("count"), output_field=IntegerField()), 0)
    fields = ("id", "title", "kind", "origin", "processed_at", "chunk_count", "characters")
    return list(
        rows.annotate(chunk_count=chunk_count, characters=Length("text"))
        .order_by("-processed_at", "-id")
        .values(*fields)
    )


def positions(rows: list[dict[str, Any]], moment: str) -> list[tuple[datetime.datetime, uuid.UUID] | None]:
    return [None, *((row[moment], row["id"]) for row in rows)]


class ListingsMatchTheOrmTests(TestCase):
    def setUp(self) -> None:
        self.organization = make_organization()
        other = make_organization()
        processed = [
            make_source(organization=self.organization, title=title, kind=kind, origin=origin)
            for title, kind, origin in [
                ("Safety handbook", SourceKind.FILE, "safety.md"),
                ("safety HANDBOOK", SourceKind.FILE, "Safety-2.md"),
                ("50% rule", SourceKind.URL, "https://example.test/50%25"),
                ("axb notes", SourceKind.TEXT, ""),
                ("a_b notes", SourceKind.TEXT, ""),
                ("back\\slash", SourceKind.TEXT, ""),
                ("Quality", SourceKind.URL, "https://example.test/quality"),
            ]
        ]
        pending = register_source(
            organization=self.organization, title="Safety pending", kind=SourceKind.TEXT, text="x"
        )
        failed = make_source(organization=self.organization, title="Safety failed")
        mark_source_failed(failed)
        make_source(organization=other, title="Safety elsewhere")
        # equal timestamps: the id decides, on both vendors
        Source.objects.filter(pk__in=[source.pk for source in processed[:4]]).update(processed_at=NOON)
        titles = ["Safety basics", "SAFETY at night", "50% done", "500 things", "a_b", "axb", "No match", "Plain"]
        for number, title in enumerate(titles):
            module = make_module(
                organization=self.organization,
                title=title,
                summary="Back\\slash summary" if number == 7 else f"Summary {number}",
                status=ModuleStatus.PUBLISHED if number % 2 else ModuleStatus.DRAFT,
                sections=[(f"S{position}", "body") for position in range(number % 3)] or None,
            )
            module.sources.add(*processed[number % 3 : number % 3 + number % 4], pending, failed)
        create_module(organization=self.organization, title="Bare module")
        make_module(organization=other, title="Safety elsewhere")
        Module.objects.filter(organization=self.organization, title__in=titles[:5]).update(updated_at=NOON)

    def test_modules_match_for_every_filter_and_position(self) -> None:
        for query, status in itertools.product(QUERIES, [None, ModuleStatus.PUBLISHED]):
            expected_all = orm_modules(self.organization, query=query, status=status, after=None)
            for after in positions(expected_all, "updated_at"):
                with self.subTest(query=query, status=status, after=after):
                    expected = orm_modules(self.organization, query=query, status=status, after=after)[:3]

                    found = modules_for_organization(
                        self.organization, limit=3, query=query, status=status, after=after
                    )

                    self.assertEqual(found, expected)

    def test_sources_match_for_every_filter_and_position(self) -> None:
        for query, kind in itertools.product(QUERIES, [None, SourceKind.FILE]):
            expected_all = orm_sources(self.organization, query=query, kind=kind, after=None)
            for after in positions(expected_all, "processed_at"):
                with self.subTest(query=query, kind=kind, after=after):
                    expected = orm_sources(self.organization, query=query, kind=kind, after=after)[:3]

                    found = processed_sources_for_organization(
                        self.organization, limit=3, query=query, kind=kind, after=after
                    )

                    self.assertEqual(found, expected)

    def test_the_filters_select_something_to_compare(self) -> None:
        counts = {query: len(orm_modules(self.organization, query=query, status=None, after=None)) for query in QUERIES}

        self.assertEqual(counts, {None: 9, "safety": 2, "SAFETY": 2, "50%": 1, "a_b": 1, "\\": 1, "o": 3, "zzz": 0})


class DetailsMatchTheOrmTests(TestCase):
    def setUp(self) -> None:
        self.organization = make_organization()

    def test_a_module_matches_its_orm_reading(self) -> None:
        zulu, alpha = (make_source(organization=self.organization, title=title) for title in ("Zulu", "Alpha"))
        pending = register_source(organization=self.organization, title="Pending", kind=SourceKind.TEXT, text="x")
        created = create_module(
            organization=self.organization,
            title="M",
            sections=[("Second", "2"), ("First", "1")],
            sources=[zulu, pending, alpha],
        )
        bare = create_module(organization=self.organization, title="Bare")

        for module_id in (created.id, bare.id):
            with self.subTest(module_id=module_id):
                orm = Module.objects.prefetch_related(
                    Prefetch("sections", queryset=ModuleSection.objects.order_by("position")),
                    Prefetch(
                        "sources", queryset=Source.objects.filter(status=SourceStatus.PROCESSED).order_by("title", "id")
                    ),
                ).get(pk=module_id)

                found = module_in_organization(self.organization, module_id=module_id)

                self.assertEqual(
                    found,
                    {
                        "id": orm.id,
                        "title": orm.title,
                        "summary": orm.summary,
                        "status": orm.status,
                        "created_at": orm.created_at,
                        "updated_at": orm.updated_at,
                        "sections": [
                            {"position": s.position, "title": s.title, "body": s.body} for s in orm.sections.all()
                        ],
                        "sources": [{"id": s.id, "title": s.title} for s in orm.sources.all()],
                    },
                )

    def test_a_source_matches_its_orm_reading(self) -> None:
        source = make_source(
            organization=self.organization, text="\n\n".join(f"Paragraph {n}. " * 120 for n in range(8))
        )
        chunks = list(SourceChunk.objects.filter(source=source).order_by("index").values("index", "text"))

        for start, limit in [(0, 10), (2, 3), (len(chunks) - 1, 50), (len(chunks), 5)]:
            with self.subTest(start=start, limit=limit):
                found = processed_source_in_organization(
                    self.organization, source_id=source.id, start=start, limit=limit
                )

                self.assertEqual(
                    found,
                    {
                        "id": source.id,
                        "title": source.title,
                        "kind": source.kind,
                        "origin": source.origin,
                        "processed_at": Source.objects.get(pk=source.pk).processed_at,
                        "chunk_count": len(chunks),
                        "chunks": chunks[start : start + limit],
                    },
                )
