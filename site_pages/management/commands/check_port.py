"""`manage.py check_port --host HOST --port PORT`: `make run`'s first step, one line when the port is busy."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from site_pages.port_check import busy_port_message, port_is_free


class Command(BaseCommand):
    help = (
        "Exit with one line, and the `make run PORT=…` to use instead, when HOST:PORT is already in use. "
        "`make run` runs it before anything else."
    )
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", required=True)
        parser.add_argument("--port", required=True, type=int)

    def handle(self, *args: Any, **options: Any) -> None:
        if not port_is_free(options["host"], options["port"]):
            raise CommandError(busy_port_message(options["host"], options["port"]))
