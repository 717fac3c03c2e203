"""The audit trail's writes: one row per event, append-only, pruned by age."""

import contextlib
import unittest
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.test import TestCase, TransactionTestCase, override_settings
from django.utils import timezone

from audit.models import OUTCOME_OK, AuditAction, AuditEvent
from audit.services import (
    SUPPRESSED_EMAIL_DETAIL,
    purge_audit_events,
    record_event,
    record_tool_call,
    tool_call_statement,
)
from operator_core.sql import Guard, Rider, fetch, guarded_by, sent_with_settling_read
from tests.factories import make_membership


class RecordEventTests(TestCase):
    def test_a_tool_call_is_one_insert_with_every_field(self) -> None:
        membership = make_membership()

        with self.assertNumQueries(1):
            record_tool_call(
                outcome="not_found",
                person_id=membership.user_id,
                organization_id=membership.organization_id,
                client_id="client-1",
                tool="get_module",
                duration_ms=1.25,
            )

        event = AuditEvent.objects.get()
        self.assertEqual(event.action, AuditAction.TOOL_CALL)
        self.assertEqual(event.outcome, "not_found")
        self.assertEqual(event.person, membership.user)
        self.assertEqual(event.organization, membership.organization)
        self.assertEqual((event.client_id, event.tool, event.duration_ms), ("client-1", "get_module", 1.25))
        self.assertEqual(event.request_id, "")
        self.assertEqual(event.detail, {})
        self.assertLess(abs(event.occurred_at - timezone.now()), timedelta(minutes=1))

    def test_an_event_outlives_the_person_and_organization_it_names(self) -> None:
        membership = make_membership()
        record_event(AuditAction.ROLE_CHANGE, person_id=membership.user_id, organization_id=membership.organization_id)

        membership.organization.delete()
        membership.user.delete()

        event = AuditEvent.objects.get()
        self.assertEqual(event.outcome, OUTCOME_OK)
        self.assertIsNotNone(event.person_id)
        self.assertIsNotNone(event.organization_id)

    def test_the_database_refuses_to_change_an_event(self) -> None:
        record_event(AuditAction.CLAIM_START)

        with self.assertRaises(DatabaseError), transaction.atomic():
            AuditEvent.objects.update(outcome="tampered")

        self.assertEqual(AuditEvent.objects.get().outcome, OUTCOME_OK)


class ToolCallOutsideATransactionTests(TransactionTestCase):
    def test_a_tool_call_outside_a_transaction_is_stored_and_durability_comes_back_after_it(self) -> None:
        self.assertFalse(connection.in_atomic_block)

        record_tool_call(
            person_id=1, organization_id=None, client_id="c", tool="list_modules", outcome=OUTCOME_OK, duration_ms=1.0
        )

        self.assertEqual(AuditEvent.objects.get().tool, "list_modules")
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT current_setting('synchronous_commit')")
                self.assertEqual(cursor.fetchone()[0], "on")

    @unittest.skipUnless(connection.vendor == "postgresql", "synchronous_commit is PostgreSQL's")
    def test_a_tool_calls_insert_commits_without_waiting_for_the_disk_and_an_events_does(self) -> None:
        self._create_probe()

        record_tool_call(
            person_id=1, organization_id=None, client_id="c", tool="list_modules", outcome=OUTCOME_OK, duration_ms=1.0
        )
        record_event(AuditAction.CLAIM_START)

        with connection.cursor() as cursor:
            cursor.execute("SELECT setting FROM durability_probe")
            self.assertEqual([setting for (setting,) in cursor.fetchall()], ["off", "on"])

    @unittest.skipUnless(connection.vendor == "postgresql", "a data-modifying CTE is PostgreSQL's")
    def test_a_tool_calls_record_sent_with_its_read_commits_with_it_without_waiting_for_the_disk(self) -> None:
        self._create_probe()
        rider = Rider(
            lambda db: tool_call_statement(
                db, person_id=1, organization_id=None, client_id="c", tool="list_modules", outcome="ok", duration_ms=1.0
            )
        )

        with sent_with_settling_read(rider):
            rows = fetch("SELECT %s + 1 AS answer", [41], settles_call=True)

        self.assertEqual((rows, rider.written), ([(42,)], True))
        self.assertEqual(AuditEvent.objects.get().tool, "list_modules")
        with connection.cursor() as cursor:
            cursor.execute("SELECT setting FROM durability_probe")
            self.assertEqual([setting for (setting,) in cursor.fetchall()], ["off"])
            cursor.execute("SELECT current_setting('synchronous_commit')")
            self.assertEqual(cursor.fetchone()[0], "on")

    @unittest.skipUnless(connection.vendor == "postgresql", "a data-modifying CTE is PostgreSQL's")
    def test_a_tool_calls_record_sent_with_a_guarded_read_is_written_only_when_the_guard_grants(self) -> None:
        self._create_probe()

        for granted in (False, True):
            rider = Rider(
                lambda db: tool_call_statement(
                    db,
                    person_id=1,
                    organization_id=None,
                    client_id="c",
                    tool="list_modules",
                    outcome="ok",
                    duration_ms=1,
                )
            )
            guard = Guard(
                statement=lambda granted=granted: ("SELECT %s AS granted", [granted]),
                columns=("granted",),
                granted="guard.granted",
                settle=lambda row: None if row and row[0] else _refuse(),
            )
            with guarded_by(guard), sent_with_settling_read(rider), contextlib.suppress(PermissionError):
                self.assertEqual(fetch("SELECT %s + 1 AS answer", [41], settles_call=True), [(42,)])
            self.assertEqual(rider.written, granted)

        self.assertEqual(AuditEvent.objects.filter(tool="list_modules").count(), 1)
        with connection.cursor() as cursor:
            cursor.execute("SELECT setting FROM durability_probe")
            self.assertEqual([setting for (setting,) in cursor.fetchall()], ["off"])

    def _create_probe(self) -> None:
        # A trigger notes the setting each INSERT runs under: the one its commit obeys.
        with connection.cursor() as cursor:
            cursor.execute("CREATE TEMPORARY TABLE durability_probe (setting text)")
            cursor.execute(
                "CREATE FUNCTION pg_temp.note_durability() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                "INSERT INTO durability_probe VALUES (current_setting('synchronous_commit')); RETURN NEW; END $$"
            )
            cursor.execute(
                "CREATE TRIGGER durability_probe AFTER INSERT ON audit_auditevent "
                "FOR EACH ROW EXECUTE FUNCTION pg_temp.note_durability()"
            )
        self.addCleanup(self._drop_probe)

    def _drop_probe(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute("DROP TRIGGER durability_probe ON audit_auditevent")
            cursor.execute("DROP TABLE durability_probe")


def _event_aged(
    days: float,
    *,
    action: AuditAction = AuditAction.REFRESH,
    person_id: int | None = None,
    detail: dict[str, str] | None = None,
) -> AuditEvent:
    # The service always stamps the present, and rows are never updated: an old event is inserted as old.
    event = AuditEvent(action=action, outcome=OUTCOME_OK, person_id=person_id, detail=detail or {})
    event.occurred_at = timezone.now() - timedelta(days=days)
    AuditEvent.objects.bulk_create([event])
    return AuditEvent.objects.latest("id")


class PurgeAuditEventsTests(TestCase):
    def test_events_older_than_180_days_go_and_younger_ones_stay(self) -> None:
        old, recent = _event_aged(181), _event_aged(179)

        deleted = purge_audit_events(now=timezone.now())

        self.assertEqual(deleted, 1)
        self.assertEqual(list(AuditEvent.objects.values_list("pk", flat=True)), [recent.pk])
        self.assertFalse(AuditEvent.objects.filter(pk=old.pk).exists())

    def test_claims_for_no_person_go_after_a_day_and_a_person_s_stay(self) -> None:
        person_id = make_membership().user_id
        anonymous_start = _event_aged(1.1, action=AuditAction.CLAIM_START)
        anonymous_end = _event_aged(1.1, action=AuditAction.CLAIM_END)
        recent_anonymous = _event_aged(0.9, action=AuditAction.CLAIM_START)
        persons_start = _event_aged(1.1, action=AuditAction.CLAIM_START, person_id=person_id)

        deleted = purge_audit_events(now=timezone.now())

        self.assertEqual(deleted, 2)
        remaining = set(AuditEvent.objects.values_list("pk", flat=True))
        self.assertEqual(remaining, {recent_anonymous.pk, persons_start.pk})
        self.assertNotIn(anonymous_start.pk, remaining)
        self.assertNotIn(anonymous_end.pk, remaining)

    def test_a_person_s_suppressed_starts_go_after_a_day_and_the_rest_of_their_claims_stay(self) -> None:
        person_id = make_membership().user_id
        suppressed = _event_aged(
            1.1, action=AuditAction.CLAIM_START, person_id=person_id, detail=SUPPRESSED_EMAIL_DETAIL
        )
        recent_suppressed = _event_aged(
            0.9, action=AuditAction.CLAIM_START, person_id=person_id, detail=SUPPRESSED_EMAIL_DETAIL
        )
        sent = _event_aged(1.1, action=AuditAction.CLAIM_START, person_id=person_id)
        ended = _event_aged(1.1, action=AuditAction.CLAIM_END, person_id=person_id)

        deleted = purge_audit_events(now=timezone.now())

        self.assertEqual(deleted, 1)
        remaining = set(AuditEvent.objects.values_list("pk", flat=True))
        self.assertEqual(remaining, {recent_suppressed.pk, sent.pk, ended.pk})
        self.assertNotIn(suppressed.pk, remaining)

    @override_settings(OPERATOR={**settings.OPERATOR, "audit_retention_days": 30})
    def test_the_retention_is_a_setting(self) -> None:
        _event_aged(31)
        _event_aged(29)

        self.assertEqual(purge_audit_events(now=timezone.now()), 1)


def _refuse() -> None:
    raise PermissionError("the guard refuses")
