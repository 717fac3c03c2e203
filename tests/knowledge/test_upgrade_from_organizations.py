"""A database migrated before the knowledge app existed upgrades with `migrate` alone, rows and search intact.

The models moved from organizations to knowledge in state only
(knowledge/migrations/0001_models_from_organizations.py): the tables, their rows
and the search structures stay, and the content types move, so permissions follow.
"""

from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import TransactionTestCase
from django.utils import timezone

from knowledge.models import Module, Source, SourceChunk, SourceStatus
from knowledge.selectors import search_chunks
from organizations.models import Organization

# Today's main before the knowledge app: organizations at its last migration, knowledge not installed.
BEFORE = [("organizations", "0007_sqlite_snippets_from_plain_text"), ("knowledge", None)]
MOVED_MODELS = ("module", "modulesection", "source", "sourcechunk")


class UpgradeFromOrganizationsTests(TransactionTestCase):
    def setUp(self) -> None:
        executor = MigrationExecutor(connection)
        executor.migrate(BEFORE)
        self.old = executor.loader.project_state([BEFORE[0]]).apps

    def tearDown(self) -> None:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())

    def migrate_to_latest(self) -> None:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
        ContentType.objects.clear_cache()

    def test_rows_written_before_are_read_and_searched_through_the_knowledge_models(self) -> None:
        organization = self.old.get_model("organizations", "Organization").objects.create(slug="acme", name="Acme")
        source = self.old.get_model("organizations", "Source").objects.create(
            organization=organization,
            title="Hinges",
            kind="text",
            status="processed",
            text="Lanolin keeps the hinges supple.",
            processed_at=timezone.now(),
        )
        self.old.get_model("organizations", "SourceChunk").objects.create(
            source=source, organization=organization, index=0, text="Lanolin keeps the hinges supple."
        )
        module = self.old.get_model("organizations", "Module").objects.create(
            organization=organization, title="Maintenance", status="published"
        )
        module.sources.add(source)
        self.old.get_model("organizations", "ModuleSection").objects.create(
            module=module, position=0, title="Oiling", body="Oil the hinges."
        )

        self.migrate_to_latest()

        acme = Organization.objects.get(slug="acme")
        moved_source = Source.objects.get(pk=source.pk)
        self.assertEqual((moved_source.organization, moved_source.status), (acme, SourceStatus.PROCESSED))
        self.assertEqual(
            list(SourceChunk.objects.filter(source=moved_source).values_list("organization_id", "index", "text")),
            [(acme.pk, 0, "Lanolin keeps the hinges supple.")],
        )
        moved_module = Module.objects.get(pk=module.pk)
        self.assertEqual(list(moved_module.sources.all()), [moved_source])
        self.assertEqual([section.title for section in moved_module.sections.all()], ["Oiling"])
        hits = search_chunks(acme, query="lanolin")
        self.assertEqual([(hit.source_id, hit.chunk_index) for hit in hits], [(str(source.pk), 0)])
        self.assertIn("«Lanolin»", hits[0].snippet)

    def test_content_types_and_their_permissions_move_to_the_knowledge_app(self) -> None:
        # django_content_type itself is at its latest migration throughout.
        before = {model: ContentType.objects.get(app_label="organizations", model=model).pk for model in MOVED_MODELS}

        self.migrate_to_latest()

        for model in MOVED_MODELS:
            with self.subTest(model=model):
                content_type = ContentType.objects.get(pk=before[model])
                self.assertEqual(content_type.app_label, "knowledge")
                self.assertTrue(Permission.objects.filter(content_type=content_type, codename=f"view_{model}").exists())
        self.assertEqual(ContentType.objects.get_for_model(Source).pk, before["source"])
        self.assertFalse(ContentType.objects.filter(app_label="organizations", model__in=MOVED_MODELS).exists())
