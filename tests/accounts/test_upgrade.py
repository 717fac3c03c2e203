"""Accounts created before the email became the identity keep their sign-in through `migrate` (issue 32).

accounts/migrations/0001_email_is_the_identity.py normalises each email and
makes it the username; two accounts whose emails differ only in case stop it,
with their ids and no email in the message.
"""

from django.contrib.auth.hashers import make_password
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client, TransactionTestCase

from tests.factories import PASSWORD

BEFORE = [("accounts", None)]


class UpgradeTests(TransactionTestCase):
    def setUp(self) -> None:
        executor = MigrationExecutor(connection)
        executor.migrate(BEFORE)
        self.old_user = executor.loader.project_state(("auth", "0012_alter_user_first_name_max_length")).apps.get_model(
            "auth", "User"
        )

    def tearDown(self) -> None:
        self.old_user.objects.all().delete()
        self.migrate_to_latest()

    def migrate_to_latest(self) -> None:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())

    def old_account(self, *, username: str, email: str, **fields: object) -> object:
        return self.old_user.objects.create(username=username, email=email, password=make_password(PASSWORD), **fields)

    def test_a_person_created_the_old_way_signs_in_with_their_email_after_the_upgrade(self) -> None:
        self.old_account(username="bob", email="Bob@Acme.Test")

        self.migrate_to_latest()

        response = Client().post("/api/auth/sign-in", {"email": "bob@acme.test", "password": PASSWORD})
        self.assertTrue(response.context["signed_in"])
        self.assertEqual(
            list(self.old_user.objects.values_list("username", "email")), [("bob@acme.test", "bob@acme.test")]
        )

    def test_an_old_superuser_with_no_email_keeps_the_admin_sign_in(self) -> None:
        self.old_account(username="root", email="", is_staff=True, is_superuser=True)

        self.migrate_to_latest()

        response = Client().post("/admin/login/", {"username": "root", "password": PASSWORD})
        self.assertEqual(response.status_code, 302)

    def test_two_accounts_with_one_email_in_two_cases_stop_the_upgrade_naming_their_ids(self) -> None:
        first = self.old_account(username="carol", email="Carol@acme.test")
        second = self.old_account(username="carol2", email="carol@ACME.test")

        with self.assertRaises(Exception) as stopped:
            self.migrate_to_latest()

        message = str(stopped.exception)
        self.assertIn(f"accounts {first.pk}, {second.pk}", message)
        self.assertNotIn("@", message)
        self.assertEqual(
            sorted(self.old_user.objects.values_list("username", flat=True)), ["carol", "carol2"]
        )  # nothing changed
