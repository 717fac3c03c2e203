"""`manage.py print_banner`: the addresses, demo accounts and example command `make run` shows."""

from typing import Any

from django.core.management.base import BaseCommand

from site_pages.banner import start_up_banner
from site_pages.selectors import site_addresses


class Command(BaseCommand):
    help = (
        "Print where the service answers (front page, MCP endpoint, docs, admin), the demo accounts "
        "and the example client's command. `make run` prints it just before the server starts."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(start_up_banner(site_addresses()), ending="")
