"""The hand-written reads of operator_core.sql: prepared on PostgreSQL, counted like ORM queries everywhere."""

import unittest

from django.db import connection
from django.test import TestCase

from audit.models import AuditEvent
from audit.services import tool_call_statement
from knowledge.search.schema import SEARCH_FUNCTION
from operator_core.sql import Guard, Rider, SucceedsIf, fetch, guarded_by, sent_with_settling_read
from operator_site.settings.storage import PREPARE_THRESHOLD
from organizations.models import Role
from tests.factories import make_membership, make_source
from tests.mcp_operator.base import OperatorEndpointTestCase

PROBE = "SELECT %s + 1 AS probe"


def prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [statement for (statement,) in cursor.fetchall()]


def audit_rider(tool: str) -> Rider:
    return Rider(
        lambda db: tool_call_statement(
            db, person_id=1, organization_id=None, client_id="c", tool=tool, outcome="ok", duration_ms=1.0
        )
    )


class SettlingReadTests(TestCase):
    """A tool call's record rides on its settling read: on PostgreSQL a CTE of it, elsewhere not at all."""

    def test_the_record_goes_with_a_settling_read_on_postgresql_only(self) -> None:
        rider = audit_rider("list_modules")

        with sent_with_settling_read(rider), self.assertNumQueries(1):
            rows = fetch("SELECT %s + 1 AS answer", [41], settles_call=True)

        self.assertEqual(rows, [(42,)])
        on_postgresql = connection.vendor == "postgresql"
        self.assertEqual((rider.written, AuditEvent.objects.filter(tool="list_modules").count()), (on_postgresql,) * 2)

    def test_a_read_that_does_not_settle_the_call_goes_alone(self) -> None:
        rider = audit_rider("get_module")

        with sent_with_settling_read(rider):
            fetch("SELECT 1", [])

        self.assertEqual((rider.written, AuditEvent.objects.count()), (False, 0))

    @unittest.skipUnless(connection.vendor == "postgresql", "a data-modifying CTE is PostgreSQL's")
    def test_the_record_joins_a_read_of_its_own_ctes_and_named_parameters_once(self) -> None:
        rider = audit_rider("search_knowledge")

        with sent_with_settling_read(rider):
            first = fetch("WITH x AS (SELECT %(v)s::int AS v) SELECT v FROM x", {"v": 7}, settles_call=True)
            second = fetch("SELECT %s::int", [8], settles_call=True)

        self.assertEqual((first, second), ([(7,)], [(8,)]))
        self.assertEqual(AuditEvent.objects.filter(tool="search_knowledge").count(), 1)

    @unittest.skipUnless(connection.vendor == "postgresql", "a data-modifying CTE is PostgreSQL's")
    def test_a_record_conditioned_on_success_is_written_only_when_a_row_meets_the_condition(self) -> None:
        read = "SELECT n FROM (VALUES (%(a)s::int), (%(b)s::int)) AS numbers(n) ORDER BY n"
        for wanted, written in ((2, True), (3, False)):
            with self.subTest(wanted=wanted):
                rider = audit_rider(f"wanted_{wanted}")

                with sent_with_settling_read(rider), self.assertNumQueries(1):
                    rows = fetch(read, {"a": 2, "b": 1}, settles_call=SucceedsIf("reading.n = %s", (wanted,)))

                self.assertEqual((rows, rider.written), ([(1,), (2,)], written))
                self.assertEqual(AuditEvent.objects.filter(tool=f"wanted_{wanted}").count(), int(written))


class Refused(Exception):
    pass


def refusing_guard(granted: bool, heard: list[object]) -> Guard:
    """A guard whose one row says whether it grants; `heard` collects what it was told."""

    def settle(row: object) -> None:
        heard.append(row)
        if not granted:
            raise Refused

    return Guard(
        statement=lambda: ("SELECT %s AS granted", [granted]),
        columns=("granted",),
        granted="guard.granted",
        settle=settle,
    )


class GuardedReadTests(TestCase):
    """A guard (a tool call's access check) rides the call's first read: one statement on PostgreSQL."""

    statements = 1 if connection.vendor == "postgresql" else 2

    def test_a_granting_guard_is_settled_by_the_first_read_which_keeps_its_rows_in_order(self) -> None:
        heard: list[object] = []
        guard = refusing_guard(True, heard)

        with guarded_by(guard), self.assertNumQueries(self.statements):
            rows = fetch("SELECT 3 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 ORDER BY n DESC", [])
        with guarded_by(guard), self.assertNumQueries(1):
            empty = fetch("SELECT 1 WHERE %s", [False])  # settled: the guard does not ride again

        self.assertEqual((rows, empty, guard.settled), ([(3,), (2,), (1,)], [], True))
        self.assertEqual([bool(row[0]) for row in heard], [True])  # type: ignore[index]

    def test_a_refusing_guard_withholds_the_rows_and_the_record_of_its_read(self) -> None:
        rider = audit_rider("list_modules")

        with (
            guarded_by(refusing_guard(False, [])),
            sent_with_settling_read(rider),
            self.assertRaises(Refused),
            self.assertNumQueries(self.statements),
        ):
            fetch("SELECT %s + 1 AS answer", [41], settles_call=True)

        self.assertEqual((rider.written, AuditEvent.objects.count()), (False, 0))

    @unittest.skipUnless(connection.vendor == "postgresql", "a data-modifying CTE is PostgreSQL's")
    def test_a_granting_guard_sends_the_record_with_a_read_of_its_own_ctes_and_named_parameters(self) -> None:
        rider = audit_rider("search_knowledge")

        with guarded_by(refusing_guard(True, [])), sent_with_settling_read(rider), self.assertNumQueries(1):
            rows = fetch("WITH x AS (SELECT %(v)s::int AS v) SELECT v FROM x", {"v": 7}, settles_call=True)

        self.assertEqual((rows, rider.written), ([(7,)], True))
        self.assertEqual(AuditEvent.objects.filter(tool="search_knowledge").count(), 1)

    @unittest.skipUnless(connection.vendor == "postgresql", "a data-modifying CTE is PostgreSQL's")
    def test_a_granting_guard_writes_a_conditioned_record_only_when_the_read_succeeds(self) -> None:
        for found, written in (([5], True), ([], False)):
            with self.subTest(found=found):
                rider = audit_rider(f"found_{len(found)}")

                with guarded_by(refusing_guard(True, [])), sent_with_settling_read(rider), self.assertNumQueries(1):
                    rows = fetch("SELECT %s::int AS n WHERE %s", [5, bool(found)], settles_call=SucceedsIf("TRUE"))

                self.assertEqual(([row[0] for row in rows], rider.written), (found, written))
                self.assertEqual(AuditEvent.objects.filter(tool=f"found_{len(found)}").count(), int(written))


class FetchTests(TestCase):
    def test_a_read_is_one_counted_query(self) -> None:
        with self.assertNumQueries(1):
            rows = fetch(PROBE, [41])

        self.assertEqual(rows, [(42,)])


@unittest.skipUnless(connection.vendor == "postgresql", "prepared statements are PostgreSQL's")
class PreparedStatementTests(OperatorEndpointTestCase):
    def setUp(self) -> None:
        # This connection may have prepared them in an earlier test; psycopg forgets them with it.
        with connection.cursor() as cursor:
            cursor.execute("DEALLOCATE ALL")

    def test_a_read_is_prepared_once_a_connection_has_run_it_often_enough(self) -> None:
        for number in range(PREPARE_THRESHOLD):
            fetch(PROBE, [number])
        unprepared = [statement for statement in prepared_statements() if "probe" in statement]

        fetch(PROBE, [PREPARE_THRESHOLD])

        prepared = [statement for statement in prepared_statements() if "probe" in statement]
        self.assertEqual((unprepared, prepared), ([], ["SELECT $1 + 1 AS probe"]))

    def test_a_tool_calls_statements_are_prepared_and_the_orms_are_not(self) -> None:
        member = make_membership(role=Role.MEMBER)
        before = set(prepared_statements())

        for _ in range(PREPARE_THRESHOLD + 1):
            self.call_tool(member, "list_modules")

        new = set(prepared_statements()) - before
        # the page of modules with the person's access and the audit record as its CTEs; no ORM query
        self.assertEqual(len(new), 1, new)
        self.assertEqual([statement.split()[0] for statement in new], ["WITH"], new)
        self.assertEqual(len([statement for statement in new if "INSERT INTO" in statement]), 1, new)

    def test_a_search_is_prepared_too(self) -> None:
        member = make_membership(role=Role.MEMBER)
        make_source(organization=member.organization, text="Forklift drivers inspect the forklift each shift.")
        before = set(prepared_statements())

        for _ in range(PREPARE_THRESHOLD + 1):
            self.assertEqual(len(self.call_tool(member, "search_knowledge", query="forklift").structured["results"]), 1)

        new = set(prepared_statements()) - before
        # the search (its function, the titles, the snippets) with the person's access and the audit record
        self.assertEqual(len(new), 1, new)
        self.assertEqual(len([statement for statement in new if SEARCH_FUNCTION in statement]), 1, new)

    def test_nothing_is_prepared_when_prepared_statements_are_off(self) -> None:
        connection.ensure_connection()
        threshold = connection.connection.prepare_threshold
        connection.connection.prepare_threshold = None
        self.addCleanup(setattr, connection.connection, "prepare_threshold", threshold)

        for number in range(PREPARE_THRESHOLD + 1):
            fetch(PROBE, [number])

        self.assertEqual([statement for statement in prepared_statements() if "probe" in statement], [])
