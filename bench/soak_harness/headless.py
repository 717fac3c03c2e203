"""The headless client: registrations with their emails, completions, every request under an Idempotency-Key.

Each registration is for a person with an account, each address asked at most
five times an hour (the per-recipient limit would otherwise keep its email, as
documented), so every 202 owes exactly one email. Requests are repeated under
the same key, one after the other and two at once, as agents retrying do; every
answer is kept per key for the idempotency invariant.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import httpx

from bench.soak_harness.answers import Recorder
from bench.soak_harness.clients import RETRIES, Context, http_client, new_address, retry_after, transient
from tests.agent_auth.support import COMPLETE_URL, START_URL, SmtpServer

EMAILS_PER_RECIPIENT = 5  # OPERATOR_HEADLESS_EMAILS_PER_RECIPIENT_PER_HOUR's default
MAIL_WAIT_SECONDS = 30
# Statuses whose body the key must replay: every final answer (not an outage, a limit or "still running").
_FINAL = {200, 201, 202, 400, 404, 409, 410, 422}


def _in_progress(response: httpx.Response) -> bool:
    try:
        return response.status_code == 409 and response.json()["error"]["code"] == "request_in_progress"
    except (ValueError, KeyError, TypeError):
        return False


def _canonical(response: httpx.Response) -> str:
    """The body as a JSON value (key order and spacing do not count, as for requests), else as text."""
    try:
        return json.dumps(response.json(), sort_keys=True)
    except ValueError:
        return response.text


def the_current_answer(answers: list[httpx.Response | None]) -> httpx.Response | None:
    """Of two answers to one request sent twice at once, the one that holds what the request made now.

    The repeat (marked Idempotent-Replayed) ran after the first and holds the
    claim token that replaced the first's; answers can arrive in either order.
    With no repeat answered, the final answer: the other may have ended on an
    outage or on "still running" after its retries, though the first ran and
    its email is owed (one run of the 10-minute soak counted such a start as
    refused, then paired every later mail to its address with the wrong start).
    """
    replayed = [a for a in answers if a is not None and a.headers.get("idempotent-replayed") == "true"]
    final = [a for a in answers if a is not None and a.status_code in _FINAL and not _in_progress(a)]
    return (replayed or final or answers)[0]


class HeadlessClient:
    def __init__(self, context: Context, emails: list[str], smtp: SmtpServer, *, interval: float) -> None:
        self.context = context
        self.emails = emails
        self.smtp = smtp
        self.interval = interval
        self.claims: dict[str, list[str]] = defaultdict(list)  # recipient -> keys of its accepted starts
        # Idempotency-Key -> its final answers in the order they came: (status, replayed, body)
        self.answers: dict[str, list[tuple[int, bool, str]]] = defaultdict(list)
        self.endpoints: dict[str, str] = {}  # Idempotency-Key -> "start" or "complete"
        self.latest: dict[str, httpx.Response] = {}  # Idempotency-Key -> the final answer that came last
        self.completed = 0
        self.address = new_address()
        # Called with the key between a request and its retry; only `--break idempotency` sets it.
        self.before_retry: Callable[[str], object] | None = None
        self._lock = threading.Lock()
        self._uses: dict[str, int] = defaultdict(int)

    def _post(self, kind: str, url: str, body: dict[str, Any], key: str) -> httpx.Response | None:
        """One request under `key`, sent again as it was while its answer is lost or an outage's."""
        recorder: Recorder = self.context.recorder
        with http_client(self.context.base_url, self.address) as http:
            response = None
            for _ in range(RETRIES):
                response = recorder.send(
                    kind, lambda: http.post(url, json=body, headers={"Idempotency-Key": key}), expect=_in_progress
                )
                if response is not None and response.status_code in _FINAL and not _in_progress(response):
                    replayed = response.headers.get("idempotent-replayed") == "true"
                    with self._lock:
                        self.endpoints[key] = "start" if url == START_URL else "complete"
                        self.answers[key].append((response.status_code, replayed, _canonical(response)))
                        self.latest[key] = response
                    return response
                if not (transient(response) or (response is not None and _in_progress(response))):
                    return response
                if self.context.stopping.wait(retry_after(response)):
                    break
        return response

    def _twice(self, kind: str, url: str, body: dict[str, Any], key: str, mode: str) -> httpx.Response | None:
        """Send the request, and again under the same key: after it (`retried`) or at the same time (`concurrent`)."""
        if mode == "concurrent":
            answers: list[httpx.Response | None] = [None, None]
            threads = [
                threading.Thread(
                    target=lambda i=i: answers.__setitem__(i, self._post(f"{kind}:concurrent", url, body, key))
                )
                for i in range(2)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            return the_current_answer(answers)
        first = self._post(kind, url, body, key)
        if mode != "retried":
            return first
        if self.before_retry is not None:
            self.before_retry(key)
            self.before_retry = None
        self._post(f"{kind}:retried", url, body, key)
        # A repeated start answers a new claim token that replaces the first (docs/headless.md#idempotency-key).
        return self.latest.get(key, first)

    def _next_email(self) -> str | None:
        for email in self.emails:
            if self._uses[email] < EMAILS_PER_RECIPIENT:
                self._uses[email] += 1
                return email
        return None

    def _mail_for(self, email: str, count: int) -> str | None:
        """The code of the `count`-th mail to `email`, once the email worker has sent it."""
        deadline = time.monotonic() + MAIL_WAIT_SECONDS
        while time.monotonic() < deadline and not self.context.stopping.is_set():
            mails = [m for m in self.smtp.inbox.mails() if email in m.recipients]
            if len(mails) >= count:
                return mails[count - 1].code
            time.sleep(0.3)
        return None

    def run(self) -> None:
        modes = ["alone", "retried", "concurrent"]
        for number in range(10**9):
            if self.context.stopping.wait(self.interval):
                return
            email = self._next_email()
            if email is None:
                return  # every address used up for this hour: the run is longer than the seeded people allow
            self.address = new_address()  # 60 registrations an hour per address (docs/limits.md)
            mode, key = modes[number % len(modes)], str(uuid.uuid4())
            start = self._twice("headless:start", START_URL, {"email": email}, key, mode)
            if start is None or start.status_code != 202:
                continue
            with self._lock:
                self.claims[email].append(key)
                accepted = len(self.claims[email])
            code = self._mail_for(email, accepted)
            if code is None:
                continue
            body = {"claim_token": start.json()["claim_token"], "code": code}
            done = self._twice("headless:complete", COMPLETE_URL, body, str(uuid.uuid4()), mode)
            if done is not None and done.status_code == 200:
                self.completed += 1

    def conflicting_keys(self) -> dict[str, list[tuple[int, bool, str]]]:
        """Every Idempotency-Key that answered two different final answers.

        A completion's repeat replays the first answer, status and body. A
        start's repeat answers a new claim token for the same claim, marked
        `Idempotent-Replayed: true` (docs/headless.md#idempotency-key): there,
        two different answers are two of another status, or two not marked as
        repeats, which means the request ran twice.
        """
        conflicts = {}
        with self._lock:
            for key, answers in self.answers.items():
                if self.endpoints[key] == "complete":
                    differ = len({(status, body) for status, _, body in answers}) > 1
                else:
                    differ = len({status for status, _, _ in answers}) > 1 or sum(not r for _, r, _ in answers) > 1
                if differ:
                    conflicts[key] = answers
        return conflicts
