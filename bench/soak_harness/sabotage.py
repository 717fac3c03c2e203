"""`--break NAME`: break one invariant on purpose in a scratch run, to see its check fail.

A check that cannot fail proves nothing; each of these does, mid-run, what the
invariant exists to catch, from outside the service (the database, the SMTP
sink, the proxy, the settings of one server), never by changing the service.
"""

from __future__ import annotations

import smtplib
import threading
from collections.abc import Callable
from email.message import EmailMessage

from django.db import close_old_connections
from django.utils import timezone

from agent_auth.models import IdempotencyRecord
from audit.models import OUTCOME_OK, AuditAction, AuditEvent
from bench.soak_harness.clients import Context, Refresher
from bench.soak_harness.headless import HeadlessClient
from bench.soak_harness.stack import AppServer, Proxy
from oauth.models import RefreshToken
from tests.agent_auth.support import SmtpServer

OUT_OF_SERVICE_SECONDS = 15


def separate_counters(server: AppServer, redis_url: str) -> None:
    """`limits`: the second server counts in another Redis database, so the two never share a count."""
    server.environment["REDIS_URL"] = redis_url.rsplit("/", 1)[0] + "/1"


def before_recovery(name: str | None, proxy: Proxy, server: AppServer) -> Callable[[str], None] | None:
    """`recovery`: after the Redis outage, one server stays out of the proxy for longer than allowed."""
    if name != "recovery":
        return None

    def hold_out(fault: str) -> None:
        if fault == "redis-outage":
            proxy.set_state(server, "maint")
            threading.Timer(OUT_OF_SERVICE_SECONDS, proxy.set_state, (server, "ready")).start()

    return hold_out


def _delete_audit_row() -> None:
    row = AuditEvent.objects.filter(action=AuditAction.TOOL_CALL, outcome=OUTCOME_OK).order_by("-id").first()
    if row is not None:
        AuditEvent.objects.filter(pk=row.pk).delete()


def _revoke_family(refreshers: list[Refresher]) -> None:
    family = refreshers[-1].families[-1]
    RefreshToken.objects.filter(application__client_id=family.client_id).update(revoked=timezone.now())


def _send_twice(headless: HeadlessClient, smtp: SmtpServer) -> None:
    recipient = next(iter(headless.claims))
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = "soak@soak.test", recipient, "Your Service Operator code"
    message.set_content("Your code is 000000.")
    with smtplib.SMTP("127.0.0.1", smtp.port) as connection:
        connection.send_message(message)


def _forget_keys(headless: HeadlessClient) -> None:
    """The next same-key retry finds no record: a second claim, a second body."""
    headless.before_retry = lambda key: IdempotencyRecord.objects.filter(key=key).delete()


def schedule(
    name: str | None,
    context: Context,
    *,
    at: float,
    refreshers: list[Refresher],
    headless: HeadlessClient,
    smtp: SmtpServer,
) -> None:
    actions: dict[str, Callable[[], None]] = {
        "audit": _delete_audit_row,
        "families": lambda: _revoke_family(refreshers),
        "emails": lambda: _send_twice(headless, smtp),
        "idempotency": lambda: _forget_keys(headless),
    }
    if name not in actions:
        return

    def act() -> None:
        if context.stopping.wait(max(0.0, at - context.recorder.now())):
            return
        actions[name]()
        close_old_connections()
        print(f"--break {name}: done at t={context.recorder.now():.0f}s", flush=True)

    threading.Thread(target=act, daemon=True).start()
