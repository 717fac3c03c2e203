"""`GET /metrics` (docs/operations.md#metrics): 404 without a token, 401 without the right one, else the exposition."""

from __future__ import annotations

from datetime import timedelta
from unittest import mock

from django.conf import settings
from django.test import TestCase, override_settings
from django.utils import timezone
from django_tasks.base import TaskResultStatus
from django_tasks_db.models import DBTaskResult, get_date_max

from agent_auth.services import start_claim
from operator_core.telemetry import prometheus
from operator_site.metrics_endpoint import REFUSALS_GROUP, REFUSALS_PER_MINUTE
from operator_site.settings.production import production_problems
from tests.agent_auth.support import run_email_worker
from tests.factories import make_user
from tests.support import pinned_clock

TOKEN = "metrics-token-for-tests-0123456789abcdef"
PATH = "/metrics"


def _operator(**changes: object) -> dict[str, object]:
    return {**settings.OPERATOR, "metrics_token": TOKEN, **changes}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


class WithoutATokenTests(TestCase):
    def test_the_endpoint_does_not_exist(self) -> None:
        response = self.client.get(PATH, headers=bearer(""))

        self.assertEqual(response.status_code, 404)
        self.assertEqual(response["Content-Type"], "text/plain; charset=utf-8")


@override_settings(OPERATOR=_operator())
class WithATokenTests(TestCase):
    def test_the_token_gets_the_exposition(self) -> None:
        response = self.client.get(PATH, headers=bearer(TOKEN))

        self.assertEqual(response.status_code, 200)
        self.assertTrue(response["Content-Type"].startswith("text/plain; version="), response["Content-Type"])
        self.assertEqual(response["Cache-Control"], "no-store")
        self.assertIn(b"# TYPE mcp_server_operation_duration_seconds histogram", response.content)
        self.assertIn(b'operator_dependency_up{dependency="database"} 1.0', response.content)

    def test_a_scraper_naming_the_server_by_address_is_answered(self) -> None:
        response = self.client.get(PATH, headers=bearer(TOKEN), HTTP_HOST="10.0.0.7:8000")

        self.assertEqual(response.status_code, 200)

    def test_no_token_is_401_with_a_bearer_challenge(self) -> None:
        response = self.client.get(PATH)

        self.assertEqual(response.status_code, 401)
        self.assertEqual(response["WWW-Authenticate"], 'Bearer realm="metrics"')
        self.assertNotIn(b"mcp_server", response.content)

    def test_a_wrong_token_is_401(self) -> None:
        for presented in (TOKEN[:-1] + "0", TOKEN[:-1], TOKEN + "0", TOKEN.upper(), f"Basic {TOKEN}"):
            with self.subTest(presented=presented):
                headers = {"Authorization": presented} if " " in presented else bearer(presented)
                self.assertEqual(self.client.get(PATH, headers=headers).status_code, 401)

    def test_the_token_is_compared_in_constant_time_over_digests_of_one_length(self) -> None:
        with mock.patch.object(prometheus, "constant_time_compare", wraps=prometheus.constant_time_compare) as compare:
            self.client.get(PATH, headers=bearer("short"))

        (presented, expected), _ = compare.call_args
        self.assertEqual(len(presented), len(expected))
        self.assertNotIn(b"short", presented)

    def test_refusals_past_the_limit_are_429_and_counted(self) -> None:
        with pinned_clock():
            answers = [self.client.get(PATH, headers=bearer("guess")).status_code for _ in range(REFUSALS_PER_MINUTE)]
            over = self.client.get(PATH, headers=bearer("guess"))
            still_served = self.client.get(PATH, headers=bearer(TOKEN))

        self.assertEqual(set(answers), {401})
        self.assertEqual(over.status_code, 429)
        self.assertIn("Retry-After", over)
        self.assertEqual(still_served.status_code, 200)
        self.assertIn(f'operator_limit_refusals_total{{limit="{REFUSALS_GROUP}"}}'.encode(), still_served.content)

    def test_other_methods_are_405(self) -> None:
        self.assertEqual(self.client.post(PATH, headers=bearer(TOKEN)).status_code, 405)

    def test_the_token_is_never_logged(self) -> None:
        with self.assertLogs("operator.requests", "INFO") as logs:
            self.client.get(PATH, headers=bearer(TOKEN))
            self.client.get(PATH, headers=bearer(TOKEN + "x"))

        self.assertNotIn(TOKEN, "\n".join(logs.output) + repr([record.__dict__ for record in logs.records]))

    def outbox_gauges(self) -> tuple[str, float]:
        content = self.client.get(PATH, headers=bearer(TOKEN)).content.decode()
        depth = content.split("\noperator_email_outbox_depth ")[1].split()[0]
        return depth, float(content.split("\noperator_email_outbox_age_seconds ")[1].split()[0])

    def test_the_outbox_depth_and_the_age_of_its_oldest_email_are_read_at_the_scrape(self) -> None:
        start_claim(email=make_user().email)
        DBTaskResult.objects.update(enqueued_at=timezone.now() - timedelta(seconds=90))

        depth, age = self.outbox_gauges()

        self.assertEqual(depth, "1.0")
        self.assertGreaterEqual(age, 90)

    def test_an_email_sent_counts_neither_in_the_depth_nor_in_the_age_beside_one_still_to_send(self) -> None:
        start_claim(email=make_user().email)
        run_email_worker()  # sent; its attempt is done, and the next one it queued has nothing to do
        behind = timezone.now() - timedelta(seconds=120)
        DBTaskResult.objects.filter(status=TaskResultStatus.READY).update(enqueued_at=behind, run_after=behind)
        start_claim(email=make_user().email)
        DBTaskResult.objects.filter(run_after=get_date_max()).update(enqueued_at=timezone.now() - timedelta(seconds=90))

        depth, age = self.outbox_gauges()

        self.assertEqual(depth, "1.0")
        self.assertGreaterEqual(age, 90)
        self.assertLess(age, 120)
        self.assertEqual(DBTaskResult.objects.filter(status=TaskResultStatus.SUCCESSFUL).count(), 1)
        self.assertEqual(DBTaskResult.objects.filter(status=TaskResultStatus.READY).count(), 2)


class ProductionRuleTests(TestCase):
    def problems(self, token: str) -> list[str]:
        found = production_problems(
            secrets=[],
            secret_files=[],
            base_url="https://operator.example.com",
            database_engine="django.db.backends.postgresql",
            redis_url="redis://redis:6379/0",
            debug=False,
            email_host="smtp.example.com",
            metrics_token=token,
        )
        return [problem.check_id for problem in found]

    def test_a_short_token_is_refused_in_production(self) -> None:
        self.assertEqual(self.problems("too-short"), ["operator.E016"])

    def test_a_long_token_or_none_is_accepted(self) -> None:
        self.assertEqual(self.problems(TOKEN), [])
        self.assertEqual(self.problems(""), [])
