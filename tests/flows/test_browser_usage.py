"""An organization's usage, and why a connection stopped, in a real headless Chromium.

docs/managing-connections.md#usage-of-an-organization and #why-a-connection-stopped.
Two people connect two clients through the real consent page, make tool
calls against the live server over HTTP and are refused in three ways; the
admin then opens the usage page from the connections page, reads counts that
match the calls made, and downloads the CSV, which holds the same figures.
The person whose connection ended reads why on their own page. Every page
loads without a Content-Security-Policy violation (tearDown, as in
test_browser_connections.py).
"""

from __future__ import annotations

import csv
import io
from typing import Any

from organizations.models import Role
from organizations.services import record_role_change
from tests.factories import make_membership, make_user
from tests.flows.test_browser_connections import BrowserConnectionsTestCase


class BrowserUsageTests(BrowserConnectionsTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.carol = make_user(email="carol@acme.test")
        make_membership(user=self.carol, organization=self.acme, role=Role.MEMBER)

    def totals(self, page: Any, table: str) -> dict[str, int]:
        """A totals table of the page, {name: count}, read as a person reads it."""
        rows = page.locator(f"#{table}-totals tbody tr")
        return {
            row.locator("th").inner_text(): int(row.locator("td").inner_text())
            for row in (rows.nth(index) for index in range(rows.count()))
        }

    def scripted_mix(self, browser: Any) -> None:
        """Bob: 3 calls with his agent and 1 with the team's; Carol: 2 with the team's, then 1 refused
        as a learner, whose refresh ends her connection; the policy then refuses Bob's team connection."""
        agent, team = self.register("Bob's Agent"), self.register("Team Agent")
        page = self.new_page(browser)
        bob_agent = self.connect(page, agent, as_user=self.bob)
        bob_team = self.connect(page, team, as_user=self.bob)
        carol_page = self.new_page(browser)
        carol_team = self.connect(carol_page, team, as_user=self.carol)
        for tokens, calls in ((bob_agent, 3), (bob_team, 1), (carol_team, 2)):
            for _ in range(calls):
                self.assertIsNone(self.tool_call_error(tokens))
        record_role_change(membership=self.carol.memberships.get(), role=Role.LEARNER, changed_by=self.alice)
        self.assertEqual(self.tool_call_error(carol_team), "forbidden")
        self.assert_refused_refresh(team, carol_team)

        admin = self.new_page(browser)
        self.sign_in_at_front_page(admin, self.alice)
        admin.click("#manage-connections >> text=Connections of Acme")
        admin.check("#client-policy input[name=mode][value=listed]")
        admin.check(f"#client-policy input[name=clients][value='{agent}']")
        admin.click("#client-policy button[type=submit]")
        admin.wait_for_selector(".notice")
        self.assert_refused_refresh(team, bob_team)
        self.assertEqual(self.refresh(agent, bob_agent).status_code, 200)

    def test_an_admin_reads_the_usage_of_a_scripted_mix_and_the_csv_holds_the_same_figures(self) -> None:
        with self.chromium_browser() as browser:
            self.scripted_mix(browser)
            admin = self.new_page(browser)
            self.sign_in_at_front_page(admin, self.alice)
            admin.click("#manage-connections >> text=Connections of Acme")
            admin.click("text=Usage of Acme")
            admin.wait_for_selector("#usage-summary")

            self.assertEqual(self.totals(admin, "tool"), {"list_modules": 7})
            self.assertEqual(self.totals(admin, "client"), {"Team Agent": 4, "Bob's Agent": 3})
            self.assertEqual(self.totals(admin, "person"), {"bob@acme.test": 4, "carol@acme.test": 3})
            self.assertEqual(
                self.totals(admin, "refusal"),
                {"Blocked by the client policy": 1, "Forbidden (no admin or member role)": 1, "Token refused": 1},
            )
            self.assertEqual(admin.locator("svg.chart").count(), 8)
            self.assertIn("keeps events for", admin.inner_text("#retention"))
            admin.click("#tool summary")
            self.assertEqual(admin.locator("#tool-daily tbody tr").last.locator("td").all_inner_texts(), ["7", "7"])

            with admin.expect_download() as download:
                admin.click("#usage-csv")
            rows = list(csv.DictReader(io.StringIO(open(download.value.path(), encoding="utf-8").read())))  # noqa: SIM115
            for figure in ("tool", "client", "person", "refusal"):
                summed: dict[str, int] = {}
                for row in rows:
                    if row["figure"] == figure:
                        summed[row["name"]] = summed.get(row["name"], 0) + int(row["count"])
                with self.subTest(figure=figure):
                    self.assertEqual(summed, self.totals(admin, figure))

            # The people on the connections page the busiest lists link to.
            admin.click("#person-totals >> text=bob@acme.test")
            admin.wait_for_selector("#organization-connections")
            self.assertIn("Their role in Acme changed to learner", admin.inner_text("#organization-failures"))

    def test_the_person_whose_connection_ended_reads_why_and_what_to_do(self) -> None:
        with self.chromium_browser() as browser:
            self.scripted_mix(browser)
            carol = self.new_page(browser)
            self.sign_in_at_front_page(carol, self.carol)
            carol.click("#manage-connections >> text=Your connections")
            carol.wait_for_selector("#my-failures")

            reasons = carol.inner_text("#my-failures")
            self.assertIn("Connection ended. Your role in Acme changed to learner", reasons)
            self.assertIn("Ask an admin of Acme.", reasons)
            bob = self.new_page(browser)
            self.sign_in_at_front_page(bob, self.bob)
            bob.goto(f"{self.live_server_url}/account/connections/")
            self.assertIn(
                "Acme allows only approved clients, and this client is not one", bob.inner_text("#my-failures")
            )

    def test_a_member_gets_403_another_organization_404_and_a_visitor_the_sign_in_page(self) -> None:
        with self.chromium_browser() as browser:
            visitor = self.new_page(browser)
            visitor.goto(f"{self.live_server_url}/organizations/acme/usage/")
            self.assertIn("/api/auth/sign-in?next=", visitor.url)
            member = self.new_page(browser)
            self.sign_in_at_front_page(member, self.bob)
            self.assertEqual(member.goto(f"{self.live_server_url}/organizations/acme/usage/").status, 403)
            stranger = self.new_page(browser)
            self.sign_in_at_front_page(stranger, self.gina)
            self.assertEqual(stranger.goto(f"{self.live_server_url}/organizations/acme/usage/").status, 404)
            self.assertNotIn("Acme", stranger.inner_text("main"))
            bad = stranger.goto(f"{self.live_server_url}/organizations/globex/usage/?days=ninety")
            self.assertEqual(bad.status, 400)
