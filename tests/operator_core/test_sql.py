"""The hand-written reads of operator_core.sql: prepared on PostgreSQL, counted like ORM queries everywhere."""

import unittest

from django.db import connection
from django.test import TestCase

from knowledge.search.schema import SEARCH_FUNCTION
from operator_core.sql import fetch
from operator_site.settings.storage import PREPARE_THRESHOLD
from organizations.models import Role
from tests.factories import make_membership, make_source
from tests.mcp_operator.base import OperatorEndpointTestCase

PROBE = "SELECT %s + 1 AS probe"


def prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [statement for (statement,) in cursor.fetchall()]


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
        # the person's access, the page of modules, the audit record; no ORM query
        self.assertEqual(len(new), 3, new)
        kinds = sorted(statement.split()[0] for statement in new)
        self.assertEqual(kinds, ["INSERT", "SELECT", "SELECT"], new)

    def test_a_search_is_prepared_too(self) -> None:
        member = make_membership(role=Role.MEMBER)
        make_source(organization=member.organization, text="Forklift drivers inspect the forklift each shift.")
        before = set(prepared_statements())

        for _ in range(PREPARE_THRESHOLD + 1):
            self.assertEqual(len(self.call_tool(member, "search_knowledge", query="forklift").structured["results"]), 1)

        new = set(prepared_statements()) - before
        # the person's access, the search (its function, the titles, the snippets), the audit record
        self.assertEqual(len(new), 3, new)
        self.assertEqual(len([statement for statement in new if SEARCH_FUNCTION in statement]), 1, new)

    def test_nothing_is_prepared_when_prepared_statements_are_off(self) -> None:
        connection.ensure_connection()
        threshold = connection.connection.prepare_threshold
        connection.connection.prepare_threshold = None
        self.addCleanup(setattr, connection.connection, "prepare_threshold", threshold)

        for number in range(PREPARE_THRESHOLD + 1):
            fetch(PROBE, [number])

        self.assertEqual([statement for statement in prepared_statements() if "probe" in statement], [])
