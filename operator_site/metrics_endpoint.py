"""`GET /metrics`, the Prometheus endpoint: never public (docs/operations.md#metrics).

- Without `OPERATOR_METRICS_TOKEN`, every request is 404: the endpoint does not exist.
- With it, only `Authorization: Bearer <token>` is answered (compared in
  constant time, `operator_core.telemetry.prometheus`). A missing or wrong
  token is 401 and counts against a limit per client address; past it, 429.
- The answer is the exposition of the counts, and of gauges read now: the
  email outbox's depth and age, and whether PostgreSQL and Redis answer,
  each bounded by a short timeout.

A middleware, placed before Django's Host check as the health probes are: a
scraper usually names an app server by its address. Nothing of the request is
logged but its path and status (operator_core.request_log), never the token.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import DatabaseError, connection, transaction
from django.db.models import Count, Min, Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django_tasks.base import TaskResultStatus
from django_tasks_db.models import DBTaskResult, get_date_max

from accounts.password_reset import RESET_EMAILS
from agent_auth.outbox import VERIFICATION_EMAILS
from operator_core.client_ip import client_ip
from operator_core.conf import operator_settings
from operator_core.rate_limits import FixedWindowLimiter, OnOutage
from operator_core.telemetry import metrics
from operator_core.telemetry.prometheus import CONTENT_TYPE, Gauge, exposition, presents_metrics_token
from operator_site.health import dependency_states

METRICS_PATH = "/metrics"
REFUSALS_GROUP = "metrics.refusals"
# Refused scrapes per minute per client address: a misconfigured scraper stays visible, a guesser is slowed.
REFUSALS_PER_MINUTE = 10
# A scrape must answer within Prometheus's scrape_timeout (deploy/prometheus.yml): each query gets this long.
QUERY_TIMEOUT_MS = 2000
# Every kind of email the email worker sends (operator_core/outbox.py).
OUTBOXES = (VERIFICATION_EMAILS, RESET_EMAILS)
_REFUSALS = FixedWindowLimiter(
    group=REFUSALS_GROUP,
    limit=REFUSALS_PER_MINUTE,
    period_seconds=60,
    # Scrapes go on while Redis is away; refusals are then counted per process.
    on_outage=OnOutage.COUNT_PER_PROCESS,
)


class MetricsEndpointMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path != METRICS_PATH:
            return self.get_response(request)
        return metrics_response(request)


def metrics_response(request: HttpRequest) -> HttpResponse:
    """The answer to a request for `/metrics` (module docstring)."""
    if not operator_settings().metrics_token:
        return _plain("Not found.\n", status=404)
    if request.method not in ("GET", "HEAD"):
        return _plain("Method not allowed.\n", status=405, headers={"Allow": "GET, HEAD"})
    if not presents_metrics_token(request.headers.get("Authorization", "")):
        counted = _REFUSALS.count(client_ip(request))
        if counted.exceeded:
            metrics.count_limit_refusal(REFUSALS_GROUP)
            return _plain(
                "Too many refused requests.\n", status=429, headers={"Retry-After": str(counted.retry_after_seconds)}
            )
        return _plain(
            "A bearer token is required.\n", status=401, headers={"WWW-Authenticate": 'Bearer realm="metrics"'}
        )
    return _plain(exposition(scrape_time_gauges()), status=200, content_type=CONTENT_TYPE)


def scrape_time_gauges() -> list[Gauge]:
    """The gauges read at each scrape: the email outbox, then the dependencies."""
    return [*_outbox_gauges(), _dependencies_gauge()]


def _outbox_gauges() -> list[Gauge]:
    """Emails waiting for the email worker (docs/operations.md#the-email-worker), and how late the oldest is.

    Only the attempts that have an email to send count: a task not yet run
    (READY) of an outbox, whose email is neither sent nor dropped. Each attempt
    queues the next before it talks to SMTP (operator_core/outbox.py), so every
    email sent leaves one such task, with nothing to do, until it runs. Age
    counts from when a task became due: a retry scheduled for later is not late
    before its time. Nothing is reported when the database does not answer.
    """
    now = timezone.now()
    run_now = get_date_max()  # django-tasks' run_after of a task enqueued without a delay
    try:
        with transaction.atomic():
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute(f"SET LOCAL statement_timeout = {QUERY_TIMEOUT_MS}")
            queue = _attempts_with_an_email_to_send().aggregate(
                depth=Count("id"),
                enqueued=Min("enqueued_at", filter=Q(run_after=run_now)),
                due=Min("run_after", filter=Q(run_after__lte=now)),
            )
    except DatabaseError:
        connection.close()  # the next scrape starts from a fresh connection
        return []
    oldest = min((moment for moment in (queue["enqueued"], queue["due"]) if moment is not None), default=None)
    age = max(0.0, (now - oldest).total_seconds()) if oldest is not None else 0.0
    return [
        Gauge(
            "operator_email_outbox_depth", "Emails the email worker has still to send.", [({}, float(queue["depth"]))]
        ),
        Gauge(
            "operator_email_outbox_age_seconds",
            "Seconds the oldest due email has waited for the email worker; 0 when none waits.",
            [({}, age)],
        ),
    ]


def _attempts_with_an_email_to_send() -> QuerySet[DBTaskResult]:
    # A task's one argument is its email's id, as text (Outbox.queue); the ids are compared in
    # Python's spelling, which SQLite's storage of a UUID does not share.
    waiting = Q()
    for outbox in OUTBOXES:
        pending = [str(pk) for pk in outbox.pending().values_list("pk", flat=True)]
        waiting |= Q(task_path=outbox.task.module_path, args_kwargs__args__0__in=pending)
    return DBTaskResult.objects.filter(waiting, status=TaskResultStatus.READY)


def _dependencies_gauge() -> Gauge:
    states = dependency_states()
    return Gauge(
        "operator_dependency_up",
        "1 when the dependency answers now, 0 when it does not (PostgreSQL or SQLite, Redis when configured).",
        [
            ({"dependency": name}, 1.0 if state == "up" else 0.0)
            for name, state in states.items()
            if state != "not configured"
        ],
    )


def _plain(
    body: str | bytes,
    *,
    status: int,
    content_type: str = "text/plain; charset=utf-8",
    headers: dict[str, str] | None = None,
) -> HttpResponse:
    response = HttpResponse(body, status=status, content_type=content_type, headers=headers)
    response["Cache-Control"] = "no-store"
    return response
