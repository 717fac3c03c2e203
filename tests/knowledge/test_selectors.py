import datetime

from django.test import TestCase
from django.utils import timezone

from knowledge.models import Module, ModuleStatus, SourceKind
from knowledge.selectors import (
    module_in_organization,
    modules_for_organization,
    processed_source_in_organization,
    processed_sources_for_organization,
)
from knowledge.services import create_module, mark_source_failed, register_source
from operator_core.errors import ErrorCode, NotFound
from tests.factories import make_module, make_organization, make_source

LONG_TEXT = "\n\n".join(f"Paragraph {n}. " + "Steel brackets are stamped on the presses. " * 20 for n in range(6))


class ModuleSelectorTests(TestCase):
    def setUp(self) -> None:
        self.organization = make_organization()
        self.other = make_organization()

    def test_modules_of_another_organization_are_never_listed(self) -> None:
        mine = make_module(organization=self.organization, title="Mine")
        make_module(organization=self.other, title="Theirs")

        self.assertEqual([row["id"] for row in modules_for_organization(self.organization, limit=10)], [mine.id])

    def test_filters_annotations_and_order(self) -> None:
        older = make_module(organization=self.organization, title="Safety basics", sections=[("a", "b"), ("c", "d")])
        newer = make_module(organization=self.organization, title="Quality", summary="Safety at the line")
        make_module(organization=self.organization, title="Safety archive", status=ModuleStatus.ARCHIVED)
        Module.objects.filter(pk=older.pk).update(updated_at=timezone.now() - datetime.timedelta(days=1))

        found = modules_for_organization(self.organization, limit=10, query="safety", status=ModuleStatus.PUBLISHED)

        self.assertEqual([row["id"] for row in found], [newer.id, older.id])
        self.assertEqual([row["section_count"] for row in found], [1, 2])

    def test_listed_sources_are_processed_ones_only(self) -> None:
        processed = make_source(organization=self.organization, title="B processed")
        pending = register_source(organization=self.organization, title="A pending", kind=SourceKind.TEXT, text="x")
        module = create_module(organization=self.organization, title="Mixed", sources=[processed, pending])

        [row] = modules_for_organization(self.organization, limit=10)

        self.assertEqual((row["id"], row["source_ids"]), (module.id, [processed.id]))

    def test_listing_modules_with_their_sources_takes_one_query(self) -> None:
        for number in range(3):
            create_module(
                organization=self.organization,
                title=f"Module {number}",
                sections=[("a", "b")],
                sources=[make_source(organization=self.organization), make_source(organization=self.organization)],
            )

        with self.assertNumQueries(1):
            rows = modules_for_organization(self.organization, limit=10)

        self.assertEqual([len(row["source_ids"]) for row in rows], [2, 2, 2])

    def test_module_of_another_organization_is_not_found(self) -> None:
        foreign = make_module(organization=self.other)

        with self.assertRaises(NotFound) as caught:
            module_in_organization(self.organization, module_id=str(foreign.id))

        self.assertEqual((caught.exception.code, caught.exception.message), (ErrorCode.NOT_FOUND, "Module not found."))

    def test_malformed_module_id_is_not_found(self) -> None:
        with self.assertRaises(NotFound):
            module_in_organization(self.organization, module_id="../../etc")

    def test_module_detail_orders_sections_and_sources(self) -> None:
        zulu = make_source(organization=self.organization, title="Zulu")
        alpha = make_source(organization=self.organization, title="Alpha")
        created = create_module(
            organization=self.organization, title="M", sections=[("First", "1"), ("Second", "2")], sources=[zulu, alpha]
        )

        with self.assertNumQueries(1):
            module = module_in_organization(self.organization, module_id=str(created.id))

        sections = [section["title"] for section in module["sections"]]
        sources = [source["title"] for source in module["sources"]]
        self.assertEqual((sections, sources), (["First", "Second"], ["Alpha", "Zulu"]))


class SourceSelectorTests(TestCase):
    def setUp(self) -> None:
        self.organization = make_organization()

    def test_only_processed_sources_of_the_organization_are_listed(self) -> None:
        mine = make_source(organization=self.organization, title="Mine", text=LONG_TEXT)
        make_source(title="Theirs")
        register_source(organization=self.organization, title="Pending", kind=SourceKind.TEXT, text="x")
        mark_source_failed(make_source(organization=self.organization, title="Failed"))

        found = processed_sources_for_organization(self.organization, limit=10)

        self.assertEqual([row["id"] for row in found], [mine.id])
        self.assertEqual(found[0]["chunk_count"], mine.chunks.count())
        self.assertEqual(found[0]["characters"], len(mine.text))

    def test_query_and_kind_filters(self) -> None:
        guide = make_source(organization=self.organization, title="Press guide", kind=SourceKind.FILE, origin="p.md")
        make_source(organization=self.organization, title="Press notes", kind=SourceKind.TEXT)
        make_source(organization=self.organization, title="Other", kind=SourceKind.FILE)

        found = processed_sources_for_organization(self.organization, limit=10, query="press", kind=SourceKind.FILE)

        self.assertEqual([row["id"] for row in found], [guide.id])

    def test_source_of_another_organization_is_not_found(self) -> None:
        foreign = make_source()

        with self.assertRaises(NotFound) as caught:
            processed_source_in_organization(self.organization, source_id=str(foreign.id), start=0, limit=10)

        self.assertEqual(caught.exception.message, "Source not found.")

    def test_unprocessed_and_malformed_ids_are_not_found(self) -> None:
        pending = register_source(organization=self.organization, title="Pending", kind=SourceKind.TEXT, text="x")

        for source_id in (str(pending.id), "zzz", ""):
            with self.subTest(source_id=source_id), self.assertRaises(NotFound):
                processed_source_in_organization(self.organization, source_id=source_id, start=0, limit=10)

    def test_chunks_come_a_run_at_a_time_in_index_order(self) -> None:
        source = make_source(organization=self.organization, text=LONG_TEXT)
        total = source.chunks.count()

        with self.assertNumQueries(1):
            found = processed_source_in_organization(self.organization, source_id=source.id, start=1, limit=2)

        self.assertGreaterEqual(total, 3)
        self.assertEqual((found["chunk_count"], [chunk["index"] for chunk in found["chunks"]]), (total, [1, 2]))

    def test_a_start_past_the_last_chunk_finds_the_source_and_no_chunk(self) -> None:
        source = make_source(organization=self.organization, text=LONG_TEXT)

        for start in (source.chunks.count(), 2**80):
            with self.subTest(start=start):
                found = processed_source_in_organization(self.organization, source_id=source.id, start=start, limit=5)

                self.assertEqual((found["id"], found["chunks"]), (source.id, []))
