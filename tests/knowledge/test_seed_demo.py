from io import StringIO

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import TestCase, override_settings

from knowledge.models import Module, ModuleSection, Source, SourceChunk
from knowledge.selectors import processed_sources_for_organization, search_chunks
from organizations.models import Membership, Organization, Role

FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _row_counts() -> dict[str, int]:
    models = (get_user_model(), Organization, Membership, Module, ModuleSection, Source, SourceChunk)
    return {model.__name__: model.objects.count() for model in models}


@override_settings(PASSWORD_HASHERS=FAST_HASHERS)
class SeedDemoTests(TestCase):
    @classmethod
    def setUpTestData(cls) -> None:
        call_command("seed_demo", stdout=StringIO())

    def test_running_it_again_gives_the_same_row_counts(self) -> None:
        before = _row_counts()

        call_command("seed_demo", stdout=StringIO())

        self.assertEqual(_row_counts(), before)

    def test_accounts_and_roles_match_the_product_decisions(self) -> None:
        roles = {
            (m.user.email, m.organization.slug, m.role)
            for m in Membership.objects.select_related("user", "organization")
        }

        self.assertEqual(
            roles,
            {
                ("alice@acme.test", "acme", Role.ADMIN),
                ("bob@acme.test", "acme", Role.MEMBER),
                ("carol@acme.test", "acme", Role.LEARNER),
                ("dave@acme.test", "acme", Role.REQUESTER),
                ("erin@multi.test", "acme", Role.MEMBER),
                ("erin@multi.test", "globex", Role.ADMIN),
            },
        )
        staff = get_user_model().objects.get(username="staff@operator.test")
        self.assertTrue(staff.is_staff and staff.is_superuser)
        self.assertTrue(get_user_model().objects.get(username="frank@nowhere.test").check_password("operator-demo"))

    def test_each_organization_has_modules_and_processed_sources(self) -> None:
        for slug, name in (("acme", "Acme Corporation"), ("globex", "Globex Industries")):
            organization = Organization.objects.get(slug=slug)
            modules = Module.objects.filter(organization=organization)
            with self.subTest(slug=slug):
                self.assertEqual(organization.name, name)
                self.assertGreaterEqual(modules.count(), 5)
                self.assertEqual(set(modules.values_list("status", flat=True)), {"published", "draft", "archived"})
                self.assertGreaterEqual(len(processed_sources_for_organization(organization, limit=100)), 8)
                self.assertEqual(
                    set(organization.sources.exclude(status="processed").values_list("status", flat=True)),
                    {"pending", "failed"},
                )
                self.assertFalse(modules.filter(sources__isnull=True).exists())
                self.assertFalse(ModuleSection.objects.filter(module__organization=organization).count() < 5)

    def test_there_are_at_least_a_hundred_chunks(self) -> None:
        self.assertGreaterEqual(SourceChunk.objects.filter(source__status="processed").count(), 100)

    def test_the_two_organizations_texts_do_not_leak_into_each_other(self) -> None:
        acme, globex = Organization.objects.get(slug="acme"), Organization.objects.get(slug="globex")

        self.assertTrue(search_chunks(acme, query="release train"))
        self.assertEqual(search_chunks(globex, query="release train"), [])
        self.assertTrue(search_chunks(globex, query="lockout padlock"))
        self.assertEqual(search_chunks(acme, query="lockout padlock"), [])
        self.assertEqual(search_chunks(acme, query="Quasarwing"), [])
