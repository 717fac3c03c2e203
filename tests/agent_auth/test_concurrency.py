"""Concurrent duplicates with one Idempotency-Key: exactly one claim and one email.

Each answer is a token of that one claim (a repeat gets a new one), and the
last one handed out is the claim's token.

Real threads and real database connections (TransactionTestCase), so the unique
constraint of the idempotency table, not a lock in the test, decides the race.
Each thread behaves like an agent: on 409 `request_in_progress` it retries the
same request until the stored answer is replayed.
Only 202 and 409 may appear, on SQLite (a file database with a busy timeout, as
in production) and PostgreSQL alike: never a 500.
"""

import logging
import threading
import time

from django.db import connection
from django.test import Client, TransactionTestCase

from agent_auth.idempotency import IN_FLIGHT_TIMEOUT_SECONDS
from agent_auth.models import Claim, IdempotencyRecord, IdempotencyState
from agent_auth.selectors import claim_token_hash
from tests.agent_auth.support import START_URL, SmtpMixin, post_json
from tests.factories import make_membership

THREADS = 8
DEADLINE_SECONDS = IN_FLIGHT_TIMEOUT_SECONDS + 30
_QUIET_LOGGERS = ("agent_auth.views", "django.request")


class ConcurrentDuplicateTests(SmtpMixin, TransactionTestCase):
    def setUp(self) -> None:
        super().setUp()
        for name in _QUIET_LOGGERS:
            logger = logging.getLogger(name)
            self.addCleanup(logger.setLevel, logger.level)
            logger.setLevel(logging.CRITICAL)

    def test_concurrent_duplicates_make_one_claim_and_one_email(self) -> None:
        user = make_membership().user
        barrier = threading.Barrier(THREADS)
        answers: list[list[int]] = [[] for _ in range(THREADS)]
        tokens: list[str | None] = [None] * THREADS

        def send(slot: int) -> None:
            client = Client()
            deadline = time.monotonic() + DEADLINE_SECONDS
            barrier.wait()
            try:
                while time.monotonic() < deadline:
                    response = post_json(
                        client, START_URL, {"email": user.email}, address=self.address, idempotency_key="same-key"
                    )
                    answers[slot].append(response.status_code)
                    if response.status_code == 202:
                        tokens[slot] = response.json()["claim_token"]
                        return
                    time.sleep(0.01)
            finally:
                connection.close()

        threads = [threading.Thread(target=send, args=(slot,)) for slot in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        self.assertNotIn(None, tokens, answers)
        self.assertEqual(Claim.objects.count(), 1)
        self.assertIn(Claim.objects.get().token_hash, {claim_token_hash(token) for token in tokens if token})
        self.assertEqual(len(self.mails()), 1)
        self.assertEqual(IdempotencyRecord.objects.get().state, IdempotencyState.DONE)
        self.assertLessEqual({status for slot_answers in answers for status in slot_answers}, {202, 409}, answers)
