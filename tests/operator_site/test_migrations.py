"""Every model change ships with its migration."""

import io

from django.core.management import call_command
from django.test import TestCase


class MigrationsTests(TestCase):
    def test_models_and_migrations_agree(self) -> None:
        out = io.StringIO()
        try:
            call_command("makemigrations", "--check", "--dry-run", stdout=out, stderr=out)
        except SystemExit:
            self.fail(f"a model change has no migration:\n{out.getvalue()}")
