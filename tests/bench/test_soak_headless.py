"""The soak's headless client counts a start sent twice at once by the answer of the one that ran.

The finding (issue 34, run 1 of the 10-minute soak): an address got 5 mails
for 4 accepted starts. Of two starts sent at once under one key, the first
ran (its email owed) while the second, answered "still running", met the
Redis outage on every retry and ended on a 503. The client kept whichever
answer came first in its list, so it counted the start as refused, and paired
every later mail to that address with the wrong start (`invalid_code`).
"""

from __future__ import annotations

import httpx
from django.test import SimpleTestCase

from bench.soak_harness.headless import the_current_answer
from tests.agent_auth.support import START_URL

REQUEST = httpx.Request("POST", f"http://soak.test{START_URL}")


def answer(status: int, body: dict[str, object], **headers: str) -> httpx.Response:
    return httpx.Response(status, json=body, headers=headers, request=REQUEST)


ACCEPTED = answer(202, {"claim_token": "first", "expires_in": 600})
REPLAYED = answer(202, {"claim_token": "second", "expires_in": 600}, **{"Idempotent-Replayed": "true"})
OUTAGE = answer(503, {"error": {"code": "temporarily_unavailable"}}, **{"Retry-After": "5"})
IN_PROGRESS = answer(409, {"error": {"code": "request_in_progress"}}, **{"Retry-After": "1"})


class CurrentAnswerTests(SimpleTestCase):
    def test_a_start_that_ran_counts_when_its_twin_ended_on_an_outage(self) -> None:
        self.assertIs(the_current_answer([OUTAGE, ACCEPTED]), ACCEPTED)

    def test_a_start_that_ran_counts_when_its_twin_was_still_waiting(self) -> None:
        self.assertIs(the_current_answer([IN_PROGRESS, ACCEPTED]), ACCEPTED)

    def test_a_start_that_ran_counts_when_its_twin_got_no_answer(self) -> None:
        self.assertIs(the_current_answer([None, ACCEPTED]), ACCEPTED)

    def test_the_repeat_holds_the_current_token_whichever_came_first(self) -> None:
        self.assertIs(the_current_answer([ACCEPTED, REPLAYED]), REPLAYED)
        self.assertIs(the_current_answer([REPLAYED, ACCEPTED]), REPLAYED)

    def test_two_refusals_stay_a_refusal(self) -> None:
        self.assertIs(the_current_answer([OUTAGE, OUTAGE]), OUTAGE)
