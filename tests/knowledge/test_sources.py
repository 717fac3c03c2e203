from django.db import connection, models
from django.test import TestCase

from knowledge.models import Module, ModuleStatus, Source, SourceChunk, SourceKind, SourceStatus
from knowledge.processing import split_into_chunks
from knowledge.services import (
    DocumentRejected,
    ImportOutcome,
    TextDocument,
    create_module,
    create_source,
    import_text_source,
    import_text_sources,
    process_source,
    register_source,
    reprocess_sources,
)
from operator_core.errors import ErrorCode, InvalidArguments
from tests.factories import make_organization, make_source

LONG_TEXT = "\n\n".join(
    f"Paragraph {n}. Every expense claim needs a receipt and a business purpose. " * 4 for n in range(20)
)


def _chunk_texts(source: Source) -> list[str]:
    return list(source.chunks.order_by("index").values_list("text", flat=True))


class ProcessSourceTests(TestCase):
    def test_processing_stores_the_deterministic_chunks_and_marks_processed(self) -> None:
        source = register_source(organization=make_organization(), title="Policy", kind=SourceKind.TEXT, text=LONG_TEXT)

        process_source(source)

        source.refresh_from_db()
        self.assertEqual(source.status, SourceStatus.PROCESSED)
        self.assertIsNotNone(source.processed_at)
        self.assertEqual(_chunk_texts(source), split_into_chunks(source.text))
        self.assertGreater(len(_chunk_texts(source)), 1)

    def test_processing_twice_gives_the_same_chunks(self) -> None:
        source = make_source(text=LONG_TEXT)
        before = _chunk_texts(source)

        process_source(source)

        self.assertEqual(_chunk_texts(source), before)
        self.assertEqual(
            list(source.chunks.values_list("index", flat=True).order_by("index")), list(range(len(before)))
        )

    def test_empty_text_marks_the_source_failed_and_drops_its_chunks(self) -> None:
        source = make_source(text="Some text that will be removed.")
        source.text = "  \n\n  "

        with self.assertRaises(InvalidArguments) as caught:
            process_source(source)

        self.assertEqual(caught.exception.data, {"field": "text"})
        source.refresh_from_db()
        self.assertEqual(source.status, SourceStatus.FAILED)
        self.assertIsNone(source.processed_at)
        self.assertEqual(SourceChunk.objects.filter(source=source).count(), 0)


class CreateSourceTests(TestCase):
    def test_creates_a_processed_source(self) -> None:
        source = create_source(
            organization=make_organization(), title="Guide", kind=SourceKind.FILE, origin="guide.md", text="Hello."
        )

        self.assertEqual((source.status, source.chunks.count()), (SourceStatus.PROCESSED, 1))

    def test_empty_text_leaves_nothing_behind(self) -> None:
        organization = make_organization()

        with self.assertRaises(InvalidArguments) as caught:
            create_source(organization=organization, title="Empty", kind=SourceKind.FILE, origin="e.md", text=" ")

        self.assertEqual(caught.exception.code, ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(Source.objects.count(), 0)

    def test_unknown_kind_is_invalid(self) -> None:
        with self.assertRaises(InvalidArguments) as caught:
            create_source(organization=make_organization(), title="X", kind="pdf", origin="", text="Text.")

        self.assertEqual(caught.exception.data, {"field": "kind"})
        self.assertEqual(Source.objects.count(), 0)


class ImportTextSourceTests(TestCase):
    def test_reimporting_the_same_text_changes_nothing(self) -> None:
        organization = make_organization()
        first = import_text_source(organization=organization, title="Guide", origin="guide.md", text="Version one.")

        again = import_text_source(organization=organization, title="Guide", origin="guide.md", text="Version one.")

        self.assertEqual((again.created, again.changed, again.source.pk), (False, False, first.source.pk))
        self.assertEqual(Source.objects.count(), 1)

    def test_reimporting_new_text_updates_the_source_in_place(self) -> None:
        organization = make_organization()
        first = import_text_source(organization=organization, title="Guide", origin="guide.md", text="Version one.")

        again = import_text_source(organization=organization, title="Guide", origin="guide.md", text="Version two.")

        self.assertEqual((again.created, again.changed, again.source.pk), (False, True, first.source.pk))
        self.assertEqual(_chunk_texts(again.source), ["Version two."])

    def test_failed_update_keeps_the_previous_version(self) -> None:
        organization = make_organization()
        first = import_text_source(organization=organization, title="Guide", origin="guide.md", text="Version one.")

        with self.assertRaises(InvalidArguments):
            import_text_source(organization=organization, title="Guide", origin="guide.md", text="")

        source = Source.objects.get(pk=first.source.pk)
        self.assertEqual(
            (source.status, source.text, _chunk_texts(source)), ("processed", "Version one.", ["Version one."])
        )


class ImportTextSourcesTests(TestCase):
    def test_new_documents_become_what_create_source_makes(self) -> None:
        organization = make_organization()
        document = TextDocument(title="  Guide ", origin="guide.md", text=LONG_TEXT + "  \n")

        (outcome,) = import_text_sources(organization=organization, documents=[document])

        source = Source.objects.get(pk=outcome.source.pk)
        reference = create_source(organization=organization, title="Guide", kind="file", origin="x.md", text=LONG_TEXT)
        self.assertEqual((outcome.created, outcome.changed), (True, True))
        self.assertEqual(
            (source.title, source.kind, source.status, source.text),
            ("Guide", reference.kind, SourceStatus.PROCESSED, reference.text),
        )
        self.assertIsNotNone(source.processed_at)
        self.assertEqual(_chunk_texts(source), _chunk_texts(reference))

    def test_every_chunk_carries_its_source_organization(self) -> None:
        organization = make_organization()

        import_text_sources(
            organization=organization,
            documents=[TextDocument(title=f"Doc {n}", origin=f"{n}.md", text=LONG_TEXT) for n in range(3)],
        )
        make_source(organization=organization, text=LONG_TEXT)

        self.assertEqual(set(SourceChunk.objects.values_list("organization_id", flat=True)), {organization.id})
        self.assertFalse(SourceChunk.objects.exclude(organization_id=models.F("source__organization_id")).exists())

    def test_new_documents_cost_the_same_queries_however_many(self) -> None:
        organization = make_organization()
        documents = [TextDocument(title=f"Doc {n}", origin=f"{n}.md", text=LONG_TEXT) for n in range(25)]

        # savepoint, lookup, sources, chunks (up to the driver's batch size), on PostgreSQL
        # folding the search index's pending entries, release
        queries = 6 if connection.vendor == "postgresql" else 5
        with self.assertNumQueries(queries):
            import_text_sources(organization=organization, documents=documents[:5])
        with self.assertNumQueries(queries):
            import_text_sources(organization=organization, documents=documents[5:])

        self.assertEqual(Source.objects.filter(organization=organization).count(), 25)

    def test_a_document_without_text_is_rejected_and_the_others_imported(self) -> None:
        organization = make_organization()
        documents = [
            TextDocument(title="One", origin="1.md", text="First."),
            TextDocument(title="Empty", origin="2.md", text=" \n "),
            TextDocument(title=" ", origin="3.md", text="No title."),
            TextDocument(title="Four", origin="4.md", text="Fourth.", kind="pdf"),
            TextDocument(title="Five", origin="5.md", text="Fifth."),
        ]

        outcomes = import_text_sources(organization=organization, documents=documents)

        self.assertEqual(
            [outcome.error.data["field"] for outcome in outcomes if isinstance(outcome, DocumentRejected)],
            ["text", "title", "kind"],
        )
        self.assertEqual(
            sorted(Source.objects.filter(organization=organization).values_list("origin", flat=True)), ["1.md", "5.md"]
        )

    def test_known_documents_are_left_alone_or_updated_in_place(self) -> None:
        organization = make_organization()
        first = import_text_source(organization=organization, title="Same", origin="same.md", text="Kept.")
        second = import_text_source(organization=organization, title="Changed", origin="changed.md", text="Old.")

        outcomes = import_text_sources(
            organization=organization,
            documents=[
                TextDocument(title="Same", origin="same.md", text="Kept."),
                TextDocument(title="Changed", origin="changed.md", text="New."),
            ],
        )

        self.assertEqual(
            [(o.source.pk, o.created, o.changed) for o in outcomes],
            [(first.source.pk, False, False), (second.source.pk, False, True)],
        )
        self.assertEqual(_chunk_texts(Source.objects.get(pk=second.source.pk)), ["New."])

    def test_an_origin_twice_in_one_batch_ends_as_one_source_with_the_last_text(self) -> None:
        organization = make_organization()

        outcomes = import_text_sources(
            organization=organization,
            documents=[
                TextDocument(title="Memo", origin="memo.md", text="Draft."),
                TextDocument(title="Memo", origin="memo.md", text="Final."),
            ],
        )

        self.assertTrue(all(isinstance(outcome, ImportOutcome) for outcome in outcomes))
        (source,) = Source.objects.filter(organization=organization)
        self.assertEqual(_chunk_texts(source), ["Final."])

    def test_an_origin_changed_then_changed_back_in_one_batch_keeps_the_last_text(self) -> None:
        organization = make_organization()
        known = import_text_source(organization=organization, title="Memo", origin="memo.md", text="Draft.")

        outcomes = import_text_sources(
            organization=organization,
            documents=[
                TextDocument(title="Memo", origin="memo.md", text="Final."),
                TextDocument(title="Memo", origin="memo.md", text="Draft."),
            ],
        )

        self.assertEqual([(o.source.pk, o.changed) for o in outcomes], [(known.source.pk, True)] * 2)
        self.assertEqual(_chunk_texts(Source.objects.get(pk=known.source.pk)), ["Draft."])


class ReprocessSourcesTests(TestCase):
    def test_counts_processed_and_failed_sources(self) -> None:
        good = make_source(text="Still here.")
        bad = register_source(organization=make_organization(), title="Empty", kind=SourceKind.TEXT, text="")

        outcome = reprocess_sources([good, bad])

        self.assertEqual((outcome.processed, outcome.failed), (1, 1))
        bad.refresh_from_db()
        self.assertEqual(bad.status, SourceStatus.FAILED)


class CreateModuleTests(TestCase):
    def test_sections_are_numbered_in_order(self) -> None:
        organization = make_organization()

        module = create_module(
            organization=organization, title="Intro", sections=[("One", "a"), ("Two", "b")], sources=[]
        )

        self.assertEqual(list(module.sections.values_list("position", "title")), [(0, "One"), (1, "Two")])
        self.assertEqual(module.status, ModuleStatus.DRAFT)

    def test_a_source_of_another_organization_is_refused(self) -> None:
        foreign = make_source()

        with self.assertRaises(InvalidArguments) as caught:
            create_module(organization=make_organization(), title="Intro", sources=[foreign])

        self.assertEqual(caught.exception.data, {"field": "sources"})
        self.assertEqual(Module.objects.count(), 0)
