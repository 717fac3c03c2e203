"""The refresh-token grace window against a live gunicorn with several workers and threads.

docs/authentication.md#refresh-tokens: within the window, a rotated refresh
token presented again by its client gets the rotation's answer; outside it, or
once the successor was used, it revokes the family. Real processes, real
threads, the test run's own database (SQLite or PostgreSQL, whichever the run
uses), and nothing mocked: a client that lost an answer, or several processes
sharing one credential store, keep their connection, and a stolen token is
still caught.
"""

from __future__ import annotations

import hashlib
import threading
import time
from typing import Any, ClassVar

import httpx
from django.db import connection
from django.test import TransactionTestCase

from oauth.models import AccessToken, RefreshRotation, RefreshToken
from oauth.refresh_grace import EVENT_GRACE_REPLAY, EVENT_REPLAY_REFUSED, EVENT_REUSE_FAMILY_REVOKED
from organizations.models import Membership, Role
from tests.factories import PASSWORD, make_membership, make_user
from tests.flows.live_gunicorn import LiveGunicorn
from tests.flows.live_oauth import LiveOAuthClient, Person

CONCURRENT_REFRESHES = 4
SHORT_WINDOW_SECONDS = 2


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def database_dump() -> bytes:
    """Every value of every table of the database, as bytes: what a stolen copy would hold."""
    values: list[bytes] = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            for row in cursor.fetchall():
                for value in row:
                    is_binary = isinstance(value, bytes | bytearray | memoryview)
                    values.append(bytes(value) if is_binary else str(value).encode())
    return b"\n".join(values)


class GunicornTestCase(TransactionTestCase):
    """One gunicorn per class, with the window set as `grace_seconds` says (None: the default)."""

    grace_seconds: ClassVar[int | None] = None
    server: ClassVar[LiveGunicorn]
    oauth: ClassVar[LiveOAuthClient]

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        environment = {"OPERATOR_SIGN_IN_ATTEMPTS_PER_MINUTE": "1000"}
        if cls.grace_seconds is not None:
            environment["OPERATOR_REFRESH_TOKEN_GRACE_SECONDS"] = str(cls.grace_seconds)
        cls.server = LiveGunicorn(workers=3, threads=4, environment=environment)
        cls.addClassCleanup(cls.server.stop)
        cls.oauth = LiveOAuthClient(cls.server.base_url)

    def setUp(self) -> None:
        self.membership = make_membership(user=make_user(password=PASSWORD), role=Role.MEMBER)
        self.person = Person(
            email=self.membership.user.email, password=PASSWORD, organization_id=str(self.membership.organization_id)
        )
        self.client_id = self.oauth.register()
        self.log_start = self.server.log_size()
        self.issued: list[str] = []

    def connect(self) -> dict[str, Any]:
        return self.keep(self.oauth.connect(self.client_id, self.person))

    def keep(self, answer: dict[str, Any]) -> dict[str, Any]:
        """Remember the tokens of an answer, for the dump test."""
        self.issued += [answer["access_token"], answer["refresh_token"]]
        return answer

    def refreshed(self, refresh_token: str, *, client_id: str | None = None) -> dict[str, Any]:
        response = self.oauth.refresh(client_id or self.client_id, refresh_token)
        self.assertEqual(response.status_code, 200, response.text)
        return self.keep(response.json())

    def assertRefused(self, refresh_token: str, *, client_id: str | None = None) -> None:
        response = self.oauth.refresh(client_id or self.client_id, refresh_token)
        self.assertEqual(response.status_code, 400, response.text)
        self.assertEqual(response.json()["error"], "invalid_grant")

    def refresh_at_once(self, refresh_token: str, count: int) -> list[httpx.Response]:
        """`count` refreshes with one token, released together from as many threads."""
        barrier = threading.Barrier(count)
        responses: list[httpx.Response] = []
        failures: list[BaseException] = []
        lock = threading.Lock()

        def one() -> None:
            try:
                barrier.wait(timeout=30)
                response = self.oauth.refresh(self.client_id, refresh_token)
                with lock:
                    responses.append(response)
            except BaseException as failure:  # re-raised in the test thread below
                with lock:
                    failures.append(failure)

        threads = [threading.Thread(target=one) for _ in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        if failures:
            raise failures[0]
        self.assertEqual(len(responses), count)
        return responses

    def family_of(self, refresh_token: str) -> Any:
        return RefreshToken.objects.get(token_checksum=_digest(refresh_token)).token_family

    def live_tokens_of_family(self, family: Any) -> int:
        return RefreshToken.objects.filter(token_family=family, revoked__isnull=True).count()

    def audit_events(self) -> list[dict[str, Any]]:
        return [
            record for record in self.server.log_records(since=self.log_start) if record["logger"] == "operator.audit"
        ]


class GraceWindowLiveTests(GunicornTestCase):
    """The default window, 60 seconds."""

    def test_a_retry_at_once_after_a_lost_response_keeps_the_connection(self) -> None:
        first = self.connect()
        lost = self.refreshed(first["refresh_token"])

        retry = self.refreshed(first["refresh_token"])

        self.assertEqual(retry["refresh_token"], lost["refresh_token"])
        self.assertTrue(self.oauth.works(lost["access_token"]))
        self.assertTrue(self.oauth.works(retry["access_token"]))
        onward = self.refreshed(retry["refresh_token"])
        self.assertTrue(self.oauth.works(onward["access_token"]))
        self.assertEqual(self.refreshed(onward["refresh_token"])["token_type"], "Bearer")

    def test_four_concurrent_refreshes_answer_one_refresh_token_which_refreshes_on(self) -> None:
        first = self.connect()
        family = self.family_of(first["refresh_token"])

        responses = self.refresh_at_once(first["refresh_token"], CONCURRENT_REFRESHES)

        self.assertEqual([response.status_code for response in responses], [200] * CONCURRENT_REFRESHES)
        answers = [self.keep(response.json()) for response in responses]
        self.assertEqual(len({answer["refresh_token"] for answer in answers}), 1)
        self.assertTrue(all(self.oauth.works(answer["access_token"]) for answer in answers))
        # exactly one rotation: one successor, one access token minted from R0, one kept answer
        self.assertEqual(RefreshToken.objects.filter(token_family=family).count(), 2)
        rotated = RefreshToken.objects.get(token_checksum=_digest(first["refresh_token"]))
        self.assertEqual(AccessToken.objects.filter(source_refresh_token=rotated).count(), 1)
        self.assertEqual(RefreshRotation.objects.filter(rotated=rotated).count(), 1)
        onward = self.refreshed(answers[0]["refresh_token"])
        self.assertTrue(self.oauth.works(onward["access_token"]))

    def test_r0_after_r1_was_used_is_refused_and_r2_is_revoked(self) -> None:
        first = self.connect()
        r1 = self.refreshed(first["refresh_token"])["refresh_token"]
        r2 = self.refreshed(r1)["refresh_token"]

        self.assertRefused(first["refresh_token"])

        self.assertRefused(r2)
        self.assertEqual(self.live_tokens_of_family(self.family_of(r2)), 0)

    def test_r0_from_another_client_within_the_window_is_refused(self) -> None:
        first = self.connect()
        r1 = self.refreshed(first["refresh_token"])["refresh_token"]

        self.assertRefused(first["refresh_token"], client_id=self.oauth.register())

        self.assertEqual(self.refreshed(first["refresh_token"])["refresh_token"], r1)

    def test_r0_after_r1_was_revoked_is_refused(self) -> None:
        first = self.connect()
        r1 = self.refreshed(first["refresh_token"])["refresh_token"]
        self.assertEqual(self.oauth.revoke(self.client_id, r1).status_code, 200)

        self.assertRefused(first["refresh_token"])

    def test_r0_after_the_person_left_the_organization_is_refused(self) -> None:
        first = self.connect()
        self.refreshed(first["refresh_token"])
        Membership.objects.filter(pk=self.membership.pk).delete()

        self.assertRefused(first["refresh_token"])

    def test_no_table_holds_an_issued_token_in_plaintext(self) -> None:
        retried = self.connect()
        self.refreshed(retried["refresh_token"])
        self.refreshed(retried["refresh_token"])
        concurrent = self.connect()
        for response in self.refresh_at_once(concurrent["refresh_token"], CONCURRENT_REFRESHES):
            self.keep(response.json())
        reused = self.connect()
        self.refreshed(self.refreshed(reused["refresh_token"])["refresh_token"])
        self.assertRefused(reused["refresh_token"])

        dump = database_dump()

        self.assertTrue(RefreshRotation.objects.exists())  # answers within their window are in the dump
        self.assertIn(_digest(retried["refresh_token"]).encode(), dump)
        for token in set(self.issued):
            self.assertNotIn(token.encode(), dump)

    def test_the_server_logs_a_replay_and_a_reuse_as_distinct_events_without_tokens(self) -> None:
        first = self.connect()
        r1 = self.refreshed(first["refresh_token"])["refresh_token"]
        self.refreshed(first["refresh_token"])
        self.assertRefused(first["refresh_token"], client_id=self.oauth.register())
        self.refreshed(r1)
        self.assertRefused(first["refresh_token"])

        events = self.audit_events()

        self.assertEqual(
            [event["event"] for event in events],
            [EVENT_GRACE_REPLAY, EVENT_REPLAY_REFUSED, EVENT_REUSE_FAMILY_REVOKED],
        )
        log = self.server.log_path.read_bytes()
        for token in set(self.issued):
            self.assertNotIn(token.encode(), log)


class ShortWindowLiveTests(GunicornTestCase):
    grace_seconds = SHORT_WINDOW_SECONDS

    def test_r0_after_the_window_is_refused_and_the_family_revoked(self) -> None:
        first = self.connect()
        r1 = self.refreshed(first["refresh_token"])["refresh_token"]
        time.sleep(SHORT_WINDOW_SECONDS + 0.5)

        self.assertRefused(first["refresh_token"])

        self.assertRefused(r1)
        self.assertEqual(self.live_tokens_of_family(self.family_of(r1)), 0)
        self.assertEqual(
            [(event["event"], event["reason"]) for event in self.audit_events()],
            [(EVENT_REUSE_FAMILY_REVOKED, "outside_window"), (EVENT_REPLAY_REFUSED, "family_revoked")],
        )


class StrictSingleUseLiveTests(GunicornTestCase):
    """The window at 0: every presentation of a rotated token revokes its family, as before the window."""

    grace_seconds = 0

    def test_a_retry_at_once_is_refused_and_the_family_revoked(self) -> None:
        first = self.connect()
        r1 = self.refreshed(first["refresh_token"])["refresh_token"]

        self.assertRefused(first["refresh_token"])

        self.assertRefused(r1)

    def test_of_four_concurrent_refreshes_one_wins_and_the_family_is_revoked(self) -> None:
        first = self.connect()

        responses = self.refresh_at_once(first["refresh_token"], CONCURRENT_REFRESHES)

        statuses = sorted(response.status_code for response in responses)
        self.assertEqual(statuses, [200] + [400] * (CONCURRENT_REFRESHES - 1))
        [winner] = [response.json() for response in responses if response.status_code == 200]
        self.assertRefused(winner["refresh_token"])
        self.assertFalse(RefreshRotation.objects.exists())
