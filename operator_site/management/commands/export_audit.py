"""`manage.py export_audit`: one organization's audit trail over a date range, as CSV or JSON lines.

    manage.py export_audit --organization acme --from 2026-11-16 --to 2026-11-22 [--format jsonl] [--output FILE]

Both dates are included, as whole days in UTC. Only the organization's own
events are written (docs/operations.md#audit-trail).
"""

from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from audit.export import FORMAT_CSV, FORMATS, write_events
from audit.selectors import events_for_organization
from organizations.selectors import organization_by_id_or_none, organization_by_slug_or_none


def _day(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise CommandError(f"{value!r} is not a date (YYYY-MM-DD)") from None


class Command(BaseCommand):
    help = "Write one organization's audit events between two dates (both included, UTC) as CSV or JSON lines."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--organization", required=True, help="The organization's slug or id.")
        parser.add_argument("--from", dest="first_day", required=True, help="First day, YYYY-MM-DD (UTC).")
        parser.add_argument("--to", dest="last_day", required=True, help="Last day, YYYY-MM-DD (UTC), included.")
        parser.add_argument("--format", dest="file_format", choices=FORMATS, default=FORMAT_CSV)
        parser.add_argument("--output", help="A file to write; standard output by default.")

    def handle(self, *args: Any, **options: Any) -> None:
        selector = options["organization"]
        organization = organization_by_slug_or_none(selector) or organization_by_id_or_none(selector)
        if organization is None:
            raise CommandError(f"No organization {selector!r}.")
        first_day, last_day = _day(options["first_day"]), _day(options["last_day"])
        if last_day < first_day:
            raise CommandError("--to is before --from.")
        since = datetime.combine(first_day, time.min, tzinfo=UTC)
        until = datetime.combine(last_day + timedelta(days=1), time.min, tzinfo=UTC)
        events = events_for_organization(organization.pk, since=since, until=until)
        if options["output"]:
            with open(options["output"], "w", encoding="utf-8", newline="") as stream:
                count = write_events(events, stream, file_format=options["file_format"])
            self.stderr.write(f"Wrote {count} audit events of {organization.slug} to {options['output']}.")
        else:
            write_events(events, self.stdout, file_format=options["file_format"])
