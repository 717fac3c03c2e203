"""Plumbing for the headless tests: a real SMTP server, the email worker and helpers to call the endpoints.

The SMTP server is aiosmtpd on 127.0.0.1 with a port the kernel picks; Django's
SMTP backend delivers to it, and tests read the code out of the received mail.
Emails are sent by the email worker: `run_email_worker` runs the attempts that
are due through django-tasks' own worker, as `manage.py db_worker` does, in
this process (the command itself would replace the test runner's signal
handlers and close the connection a test's transaction lives on).
"""

import asyncio
import email
import email.policy
import itertools
import logging
import re
import threading
import uuid
from dataclasses import dataclass
from typing import Any

from aiosmtpd.controller import Controller
from django.conf import settings
from django.test import Client, TestCase, override_settings
from django.utils import timezone
from django_tasks import TaskResultStatus
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult

START_URL = "/api/agent/auth"
COMPLETE_URL = "/api/agent/auth/claim/complete"
CODE_RE = re.compile(r"\b(\d{6})\b")

_addresses = itertools.count(1)


def fresh_address() -> str:
    """A client address no other test uses, so per-IP counts never leak between tests."""
    number = next(_addresses)
    return f"10.{(number >> 16) & 255}.{(number >> 8) & 255}.{number & 255}"


def operator_overrides(**changes: object) -> dict[str, Any]:
    """settings.OPERATOR with some keys changed, for override_settings(OPERATOR=...)."""
    return {**settings.OPERATOR, **changes}


@dataclass(frozen=True)
class ReceivedMail:
    recipients: tuple[str, ...]
    subject: str
    body: str

    @property
    def code(self) -> str:
        match = CODE_RE.search(self.body)
        assert match is not None, "no six-digit code in the mail"
        return match.group(1)


def run_email_worker() -> int:
    """Run every email attempt that is due, as the email worker would; how many ran."""
    worker = Worker(
        queue_names=["default"],
        interval=0,
        batch=True,
        backend_name="default",
        startup_delay=False,
        max_tasks=None,
        worker_id="tests",
        excluded_queue_names=[],
    )
    ran = 0
    while (due := DBTaskResult.objects.ready().first()) is not None:
        due.claim(worker.worker_id)
        worker.run_task(due)
        ran += 1
    return ran


def make_retries_due() -> None:
    """Let the time of every scheduled retry come, without waiting for it."""
    DBTaskResult.objects.filter(status=TaskResultStatus.READY).update(run_after=timezone.now())


class _Inbox:
    HOLD_SECONDS = 10

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._mails: list[ReceivedMail] = []
        self._refusals: dict[str, str] = {}
        self._open = threading.Event()
        self._open.set()

    def refuse(self, address: str, reply: str) -> None:
        """Answer RCPT TO for `address` with `reply` (for example a 550 naming it, as real servers do)."""
        with self._lock:
            self._refusals[address.lower()] = reply

    async def handle_RCPT(
        self, server: object, session: object, envelope: Any, address: str, rcpt_options: list[str]
    ) -> str:
        with self._lock:
            refusal = self._refusals.get(address.lower())
        if refusal is not None:
            return refusal
        envelope.rcpt_tos.append(address)
        return "250 OK"

    def hold(self) -> None:
        """Delay every delivery until `release()` (or HOLD_SECONDS)."""
        self._open.clear()

    def release(self) -> None:
        self._open.set()

    async def handle_DATA(self, server: object, session: object, envelope: Any) -> str:
        await asyncio.get_running_loop().run_in_executor(None, self._open.wait, self.HOLD_SECONDS)
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        body = message.get_body(preferencelist=("plain",))
        mail = ReceivedMail(
            recipients=tuple(envelope.rcpt_tos),
            subject=str(message["Subject"]),
            body=body.get_content() if body is not None else "",
        )
        with self._lock:
            self._mails.append(mail)
        return "250 Message accepted for delivery"

    def mails(self) -> list[ReceivedMail]:
        with self._lock:
            return list(self._mails)

    def clear(self) -> None:
        with self._lock:
            self._mails.clear()

    def reset(self) -> None:
        """Forget every mail and every refusal: a new test's server."""
        with self._lock:
            self._mails.clear()
            self._refusals.clear()


class _LocalController(Controller):
    """aiosmtpd's Controller on port 0: learn the kernel's port before the readiness probe."""

    def _trigger_server(self) -> None:
        self.port = self.server.sockets[0].getsockname()[1]
        super()._trigger_server()


class SmtpServer:
    def __init__(self) -> None:
        self.inbox = _Inbox()
        self._controller = _LocalController(self.inbox, hostname="127.0.0.1", port=0)

    def start(self) -> None:
        # aiosmtpd narrates every SMTP command at INFO; the tests read the inbox instead.
        logging.getLogger("mail.log").setLevel(logging.ERROR)
        self._controller.start()

    def stop(self) -> None:
        self._controller.stop()

    @property
    def port(self) -> int:
        return self._controller.port

    def email_settings(self) -> override_settings:
        return override_settings(
            EMAIL_BACKEND="django.core.mail.backends.smtp.EmailBackend",
            EMAIL_HOST="127.0.0.1",
            EMAIL_PORT=self.port,
            EMAIL_HOST_USER="",
            EMAIL_HOST_PASSWORD="",
            EMAIL_USE_TLS=False,
            EMAIL_USE_SSL=False,
            EMAIL_TIMEOUT=5,
        )


class SmtpMixin:
    """Starts one SMTP server per test class and routes Django's mail to it."""

    smtp: SmtpServer

    @classmethod
    def setUpClass(cls) -> None:
        cls.smtp = SmtpServer()
        cls.smtp.start()
        cls.addClassCleanup(cls.smtp.stop)
        email_settings = cls.smtp.email_settings()
        email_settings.enable()
        cls.addClassCleanup(email_settings.disable)
        super().setUpClass()

    def setUp(self) -> None:
        super().setUp()
        self.smtp.inbox.reset()
        self.address = fresh_address()
        # Per-IP counts live in the cache (Redis in CI), which outlives a test run: a
        # prefix of this test's own keeps them from leaking between tests and runs.
        own_keys = {**settings.CACHES["default"], "KEY_PREFIX": f"rl:test:{uuid.uuid4().hex}:"}
        self.enterContext(override_settings(CACHES={"default": own_keys}))

    def clear_inbox(self) -> None:
        """Forget what was received, once the email worker has sent what was due."""
        run_email_worker()
        self.smtp.inbox.clear()

    def mails(self) -> list[ReceivedMail]:
        """What the SMTP server received, once the email worker has sent what was due."""
        run_email_worker()
        return self.smtp.inbox.mails()


def post_json(
    client: Client,
    url: str,
    body: object,
    *,
    address: str,
    idempotency_key: str | None = None,
    **headers: str,
) -> Any:
    if idempotency_key is not None:
        headers["Idempotency-Key"] = idempotency_key
    return client.post(url, body, content_type="application/json", headers=headers, REMOTE_ADDR=address)


class HeadlessTestCase(SmtpMixin, TestCase):
    """Calls both endpoints through the test client; mail goes out when the email worker runs."""

    def start(self, email_address: str, *, idempotency_key: str | None = None, **headers: str) -> Any:
        with self.captureOnCommitCallbacks(execute=True):
            return post_json(
                self.client,
                START_URL,
                {"email": email_address},
                address=self.address,
                idempotency_key=idempotency_key,
                **headers,
            )

    def complete(
        self,
        claim_token: str,
        code: str,
        *,
        organization_id: str | None = None,
        idempotency_key: str | None = None,
        **headers: str,
    ) -> Any:
        body: dict[str, object] = {"claim_token": claim_token, "code": code}
        if organization_id is not None:
            body["organization_id"] = organization_id
        with self.captureOnCommitCallbacks(execute=True):
            return post_json(
                self.client, COMPLETE_URL, body, address=self.address, idempotency_key=idempotency_key, **headers
            )

    def start_and_read_code(self, email_address: str) -> tuple[str, str]:
        """Start a claim and return (claim_token, code as received by SMTP)."""
        response = self.start(email_address)
        self.assertEqual(response.status_code, 202)
        mails = [mail for mail in self.mails() if email_address in mail.recipients]
        self.assertEqual(len(mails), 1)
        return response.json()["claim_token"], mails[-1].code


def wrong_code(code: str) -> str:
    """A six-digit code that differs from `code`."""
    return f"{(int(code) + 1) % 10**6:06d}"
