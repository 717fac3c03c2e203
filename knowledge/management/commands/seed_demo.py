"""`manage.py seed_demo`: the demo accounts, organizations, sources and modules.

Idempotent: running it again creates nothing new (docs/development/decisions.md#operating).
"""

from django.core.management.base import BaseCommand

from knowledge.demo import seed_demo_data


class Command(BaseCommand):
    help = "Create or complete the demo data (password operator-demo for every account)."

    def handle(self, *args: object, **options: object) -> None:
        summary = seed_demo_data()
        self.stdout.write(
            f"Demo data ready: {summary.users} accounts, {summary.organizations} organizations, "
            f"{summary.modules} modules, {summary.sources} sources ({summary.chunks} chunks)."
        )
