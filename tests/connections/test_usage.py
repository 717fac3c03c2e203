"""An organization's usage page and its CSV through the test client.

docs/managing-connections.md#usage-of-an-organization says what it shows.

Who may see it, what it counts, in which days, from the roll-up and from the
events alike, and what it answers to bad input. The browser run is in
tests/flows/test_browser_usage.py.
"""

import csv
import io
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings
from django.core.exceptions import ValidationError
from django.test import Client, TestCase, override_settings
from django.utils import timezone
from oauth2_provider.models import get_application_model

from audit.failures import RefusalKind
from audit.models import AuditAction, AuditEvent, DailyUsage, UsageFigure
from audit.services import roll_up_usage
from organizations.models import Role
from tests.factories import PASSWORD, make_membership, make_organization


def usage_page(organization) -> str:
    return f"/organizations/{organization.slug}/usage/"


def event(organization, *, at: datetime, person=None, action=AuditAction.TOOL_CALL, outcome="ok", **fields) -> None:
    AuditEvent.objects.create(
        occurred_at=at,
        action=action,
        outcome=outcome,
        person_id=person.pk if person else None,
        organization_id=organization.pk,
        **fields,
    )


class UsageTestCase(TestCase):
    def setUp(self) -> None:
        self.organization = make_organization(slug="acme", name="Acme")
        self.admin = make_membership(role=Role.ADMIN, organization=self.organization).user
        self.ann = make_membership(role=Role.MEMBER, organization=self.organization).user
        self.ben = make_membership(role=Role.MEMBER, organization=self.organization).user
        self.browser = Client()
        self.now = timezone.now()

    def as_person(self, user) -> Client:
        self.assertTrue(self.browser.login(username=user.email, password=PASSWORD))
        return self.browser

    def figure(self, response, name: str):
        return next(figure for figure in response.context["page"].figures if figure.figure == name)

    def totals(self, response, name: str) -> dict[str, int]:
        figure = self.figure(response, name)
        found = {series.label: series.total for series in figure.series}
        if figure.other:
            found["Other"] = figure.other.total
        return found


class UsageAccessTests(UsageTestCase):
    def test_an_admin_sees_the_page(self) -> None:
        response = self.as_person(self.admin).get(usage_page(self.organization))

        self.assertEqual(response.status_code, 200)
        self.assertContains(response, "Usage of Acme")

    def test_a_member_gets_403(self) -> None:
        page = self.as_person(self.ann).get(usage_page(self.organization))
        export = self.browser.get(f"{usage_page(self.organization)}export.csv")

        self.assertEqual((page.status_code, export.status_code), (403, 403))

    def test_an_admin_of_another_organization_gets_404_as_for_none(self) -> None:
        stranger = make_membership(role=Role.ADMIN).user

        response = self.as_person(stranger).get(usage_page(self.organization))
        export = self.browser.get(f"{usage_page(self.organization)}export.csv")
        missing = self.browser.get("/organizations/no-such-org/usage/")

        self.assertEqual([response.status_code, export.status_code, missing.status_code], [404, 404, 404])
        self.assertNotContains(response, "Acme", status_code=404)

    def test_a_visitor_who_is_not_signed_in_is_sent_to_sign_in(self) -> None:
        for path in (usage_page(self.organization), f"{usage_page(self.organization)}export.csv"):
            with self.subTest(path=path):
                response = self.browser.get(path)

                self.assertEqual(response.status_code, 302)
                self.assertTrue(response["Location"].startswith("/api/auth/sign-in?next="))


class UsageInputTests(UsageTestCase):
    def test_a_span_that_is_no_number_is_a_400_page(self) -> None:
        browser = self.as_person(self.admin)
        for days in ("abc", "-5", "3.5", "1e3", "٣٠", "9" * 50, "30\x00"):
            with self.subTest(days=days):
                page = browser.get(usage_page(self.organization), {"days": days})
                export = browser.get(f"{usage_page(self.organization)}export.csv", {"days": days})

                self.assertEqual((page.status_code, export.status_code), (400, 400))
                self.assertContains(page, "days must be a whole number", status_code=400)

    def test_a_span_out_of_range_is_clamped(self) -> None:
        browser = self.as_person(self.admin)

        spans = [
            browser.get(usage_page(self.organization), {"days": days}).context["page"].days
            for days in ("0", "1", "90", "365", "999999")
        ]

        self.assertEqual(spans, [1, 1, 90, 90, 90])

    @override_settings(OPERATOR={**settings.OPERATOR, "audit_retention_days": 14})
    def test_the_span_never_passes_the_audit_retention_and_the_page_says_so(self) -> None:
        response = self.as_person(self.admin).get(usage_page(self.organization), {"days": "90"})

        self.assertEqual(response.context["page"].days, 14)
        self.assertContains(response, "which keeps events for\n    14 days")


class UsageFigureTests(UsageTestCase):
    def record_mix(self) -> None:
        at = self.now - timedelta(minutes=5)
        for person, client_id, tool, count in [
            (self.ann, "client-a", "list_modules", 3),
            (self.ann, "client-b", "search_knowledge", 2),
            (self.ben, "client-a", "search_knowledge", 4),
        ]:
            for _ in range(count):
                event(self.organization, at=at, person=person, client_id=client_id, tool=tool)
        event(self.organization, at=at, person=self.ben, client_id="client-a", tool="get_module", outcome="forbidden")
        event(
            self.organization, at=at, person=self.ben, client_id="client-a", tool="get_module", outcome="rate_limited"
        )
        event(
            self.organization,
            at=at,
            person=self.ann,
            action=AuditAction.REFRESH,
            outcome="invalid_grant",
            client_id="client-b",
            detail={"reason": "client_policy"},
        )
        event(
            self.organization,
            at=at,
            person=self.ann,
            action=AuditAction.REFRESH_REUSE,
            outcome="invalid_grant",
            client_id="client-b",
            detail={"reason": "outside_window"},
        )
        # not refusals: a tool error, a consent the person declined, a revocation
        event(self.organization, at=at, person=self.ann, client_id="client-a", tool="get_module", outcome="not_found")
        event(self.organization, at=at, person=self.ann, action=AuditAction.AUTHORIZATION, outcome="access_denied")
        event(
            self.organization,
            at=at,
            person=self.ann,
            action=AuditAction.REVOCATION,
            detail={"token_type": "refresh_token"},
        )
        # another organization's calls
        event(make_organization(), at=at, person=self.ann, client_id="client-a", tool="list_modules")

    def test_tool_calls_are_counted_by_tool_client_and_person(self) -> None:
        self.record_mix()

        response = self.as_person(self.admin).get(usage_page(self.organization))

        self.assertEqual(
            self.totals(response, UsageFigure.TOOL),
            {"search_knowledge": 6, "list_modules": 3, "get_module": 3},
        )
        self.assertEqual(self.totals(response, UsageFigure.CLIENT), {"client-a": 10, "client-b": 2})
        self.assertEqual(self.totals(response, UsageFigure.PERSON), {self.ben.email: 6, self.ann.email: 6})

    def test_a_client_name_that_hides_or_reorders_text_is_shown_display_safe(self) -> None:
        application = get_application_model().objects.create(
            name="Trusted\u202eevil",
            client_type="public",
            authorization_grant_type="authorization-code",
            redirect_uris="https://client.example.test/callback",
        )
        event(
            self.organization,
            at=self.now - timedelta(minutes=5),
            person=self.ann,
            client_id=application.client_id,
            tool="list_modules",
        )

        response = self.as_person(self.admin).get(usage_page(self.organization))

        self.assertEqual(self.totals(response, UsageFigure.CLIENT), {"Trusted\ufffdevil": 1})

    def test_refusals_are_counted_by_reason(self) -> None:
        self.record_mix()

        response = self.as_person(self.admin).get(usage_page(self.organization))

        self.assertEqual(
            self.totals(response, UsageFigure.REFUSAL),
            {
                "Blocked by the client policy": 1,
                "Forbidden (no admin or member role)": 1,
                "Rate-limited or concurrency-limited": 1,
                "Token refused": 1,
            },
        )

    def test_the_csv_holds_the_figures_of_the_page_and_is_safe_for_spreadsheets(self) -> None:
        self.record_mix()
        event(self.organization, at=self.now, person=self.ann, client_id="=HYPERLINK(1)", tool="list_modules")
        browser = self.as_person(self.admin)

        page = browser.get(usage_page(self.organization))
        export = browser.get(f"{usage_page(self.organization)}export.csv")

        self.assertEqual(export["Content-Type"], "text/csv; charset=utf-8")
        self.assertIn('attachment; filename="acme-usage-30-days.csv"', export["Content-Disposition"])
        rows = list(csv.DictReader(io.StringIO(export.content.decode())))
        for figure in (UsageFigure.TOOL, UsageFigure.CLIENT, UsageFigure.PERSON, UsageFigure.REFUSAL):
            summed: dict[str, int] = {}
            for row in rows:
                if row["figure"] == figure:
                    summed[row["name"].removeprefix("'")] = summed.get(row["name"].removeprefix("'"), 0) + int(
                        row["count"]
                    )
            with self.subTest(figure=figure):
                self.assertEqual(summed, self.totals(page, figure))
        self.assertIn("'=HYPERLINK(1)", export.content.decode())

    def test_days_are_the_organizations_own(self) -> None:
        self.organization.time_zone = "Pacific/Auckland"
        self.organization.save()
        zone = ZoneInfo("Pacific/Auckland")
        yesterday = self.now.astimezone(zone).date() - timedelta(days=1)
        local_midnight = datetime.combine(yesterday, datetime.min.time(), tzinfo=zone)
        event(self.organization, at=local_midnight + timedelta(minutes=1), person=self.ann, tool="list_modules")
        event(self.organization, at=local_midnight - timedelta(minutes=1), person=self.ann, tool="list_modules")

        response = self.as_person(self.admin).get(usage_page(self.organization))

        page = response.context["page"]
        self.assertEqual(page.zone, "Pacific/Auckland")
        self.assertEqual(page.dates[-1], self.now.astimezone(zone).date())
        self.assertEqual(self.figure(response, UsageFigure.TOOL).totals[-3:], [1, 1, 0])
        self.assertContains(response, "by day\n    in Pacific/Auckland")

    def test_rolled_up_days_and_live_days_add_up_to_the_same_figures(self) -> None:
        self.record_mix()
        for days_ago in (1, 2, 40):
            event(self.organization, at=self.now - timedelta(days=days_ago), person=self.ann, client_id="c", tool="t")
        browser = self.as_person(self.admin)
        live = browser.get(usage_page(self.organization), {"days": "90"})

        written = roll_up_usage(now=self.now, time_zones={self.organization.pk: "UTC"})
        rolled = browser.get(usage_page(self.organization), {"days": "90"})

        self.assertGreater(written, 0)
        self.assertTrue(DailyUsage.objects.filter(figure=UsageFigure.TOOL, key="t").exists())
        for figure in (UsageFigure.TOOL, UsageFigure.CLIENT, UsageFigure.PERSON, UsageFigure.REFUSAL):
            with self.subTest(figure=figure):
                self.assertEqual(self.figure(rolled, figure).totals, self.figure(live, figure).totals)

    def test_the_page_reads_a_fixed_number_of_queries(self) -> None:
        self.record_mix()
        roll_up_usage(now=self.now - timedelta(days=1), time_zones={self.organization.pk: "UTC"})
        browser = self.as_person(self.admin)

        # session, person, membership; the roll-up, the events since; client names, emails
        with self.assertNumQueries(7):
            response = browser.get(usage_page(self.organization), {"days": "90"})
        self.assertEqual(response.status_code, 200)

    def test_the_charts_need_no_inline_style_or_script(self) -> None:
        self.record_mix()

        response = self.as_person(self.admin).get(usage_page(self.organization))

        html = response.content.decode()
        self.assertIn('<svg class="chart"', html)
        self.assertNotIn("style=", html)
        self.assertNotIn("<script", html)
        self.assertIn("style-src 'self';", response["Content-Security-Policy"])


class RollUpTests(UsageTestCase):
    def test_a_day_is_rolled_up_once(self) -> None:
        event(self.organization, at=self.now - timedelta(days=2), person=self.ann, tool="t")
        zones = {self.organization.pk: "UTC"}

        roll_up_usage(now=self.now, time_zones=zones)
        first = DailyUsage.objects.count()
        again = roll_up_usage(now=self.now, time_zones=zones)

        self.assertEqual((again, DailyUsage.objects.count()), (0, first))

    def test_a_changed_time_zone_is_rolled_up_afresh(self) -> None:
        event(self.organization, at=self.now - timedelta(days=2), person=self.ann, tool="t")
        roll_up_usage(now=self.now, time_zones={self.organization.pk: "UTC"})

        roll_up_usage(now=self.now, time_zones={self.organization.pk: "Asia/Tokyo"})

        self.assertEqual(set(DailyUsage.objects.values_list("time_zone", flat=True)), {"Asia/Tokyo"})

    def test_counts_older_than_the_retention_go(self) -> None:
        DailyUsage.objects.create(
            organization_id=self.organization.pk,
            time_zone="UTC",
            day=(self.now - timedelta(days=400)).date(),
            figure=UsageFigure.TOOL,
            key="t",
            count=1,
        )

        roll_up_usage(now=self.now, time_zones={})

        self.assertFalse(DailyUsage.objects.exists())

    def test_refusals_are_rolled_up_by_reason(self) -> None:
        event(self.organization, at=self.now - timedelta(days=2), person=self.ann, tool="t", outcome="forbidden")

        roll_up_usage(now=self.now, time_zones={self.organization.pk: "UTC"})

        refusal = DailyUsage.objects.get(figure=UsageFigure.REFUSAL)
        self.assertEqual((refusal.key, refusal.count), (RefusalKind.FORBIDDEN, 1))


class OrganizationTimeZoneTests(TestCase):
    def test_an_unknown_time_zone_is_refused(self) -> None:
        organization = make_organization()
        organization.time_zone = "Mars/Olympus"

        with self.assertRaises(ValidationError):
            organization.full_clean()

    def test_an_organization_shows_utc_by_default(self) -> None:
        self.assertEqual(make_organization().time_zone, "UTC")
