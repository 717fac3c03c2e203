"""The connections pages read a fixed number of queries, however many connections and calls there are.

Each connection's last tool call is one indexed lookup inside one statement
(audit.selectors.last_tool_calls), and its 30 days of calls come from the
daily roll-up and the days since (audit.usage.connection_tool_calls), so
neither page grows a query per connection (docs/development/decisions.md#connection-health-reads).
"""

from datetime import timedelta

from django.utils import timezone

from audit.services import record_tool_call, roll_up_usage
from tests.connections.test_pages import MINE, ConnectionsTestCase, organization_page


class PageQueryTests(ConnectionsTestCase):
    def call_tools(self, client_id: str, times: int) -> None:
        for _ in range(times):
            record_tool_call(
                person_id=self.member.pk,
                organization_id=self.organization.pk,
                client_id=client_id,
                tool="list_modules",
                outcome="ok",
                duration_ms=0.1,
            )

    def connect_another_client(self, name: str) -> str:
        client_id = self.register(client_name=name)["client_id"]
        self.tokens_for(client_id)
        return client_id

    def test_the_persons_page_reads_eight_queries_with_one_connection_or_three(self) -> None:
        self.call_tools(self.client_id, 2)
        browser = self.as_person(self.member)
        # session, person, failures, roles, OAuth connections (provider-granted, consented), headless connections,
        # last calls (no failure: no organizations to name)
        with self.assertNumQueries(8):
            browser.get(MINE)

        for name in ("Second Agent", "Third Agent"):
            self.call_tools(self.connect_another_client(name), 1)
        browser = self.as_person(self.member)
        with self.assertNumQueries(8):
            rows = browser.get(MINE).context["rows"]
        self.assertEqual(len(rows), 3)
        self.assertTrue(all(row.last_call_at for row in rows))

    def test_the_organizations_page_reads_a_fixed_number_of_queries_and_counts_rolled_up_calls(self) -> None:
        self.call_tools(self.client_id, 2)
        browser = self.as_person(self.admin)
        with self.assertNumQueries(14):
            (row,) = browser.get(organization_page(self.organization)).context["rows"]
        self.assertEqual(row.tool_calls, 2)

        for name in ("Second Agent", "Third Agent"):
            self.call_tools(self.connect_another_client(name), 1)
        # Calls of days already rolled up are read from the roll-up: none is counted twice, none lost.
        roll_up_usage(now=timezone.now() + timedelta(days=1), time_zones={self.organization.pk: "UTC"})
        browser = self.as_person(self.admin)
        with self.assertNumQueries(14):
            rows = browser.get(organization_page(self.organization)).context["rows"]
        calls = {row.client_name: row.tool_calls for row in rows}
        self.assertEqual(calls, {"Member Agent": 2, "Second Agent": 1, "Third Agent": 1})
