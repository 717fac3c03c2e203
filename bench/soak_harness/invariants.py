"""The invariants of a soak run, checked after the clients stopped, against the database and the SMTP sink.

Each check returns (held, lines of detail). They read the audit trail and the
OAuth tables through the ORM of this process, whose settings point at the
run's own PostgreSQL.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections import Counter, defaultdict

from audit.models import OUTCOME_OK, AuditAction, AuditEvent
from bench.soak_harness.answers import SUCCESS, UNEXPLAINED, Answer
from bench.soak_harness.clients import Refresher
from bench.soak_harness.faults import RECOVERY_SECONDS, FaultRecord
from bench.soak_harness.headless import HeadlessClient
from tests.agent_auth.support import SmtpServer

Result = tuple[bool, list[str]]
MAIL_SETTLE_SECONDS = 90  # the worker's retries come 10 and 30 s after a failed attempt
WINDOW_SECONDS = 60


def audit_records(answers: list[Answer]) -> Result:
    """Every tool call a client saw succeed has exactly one audit row with outcome ok, matched by request id."""
    succeeded = [a.request_id for a in answers if a.kind.startswith("tool:") and a.category == SUCCESS]
    rows = Counter(
        AuditEvent.objects.filter(action=AuditAction.TOOL_CALL, outcome=OUTCOME_OK).values_list("request_id", flat=True)
    )
    missing = [rid for rid in succeeded if rows.get(rid, 0) == 0]
    doubled = [rid for rid in succeeded if rows.get(rid, 0) > 1]
    unseen = sum(count for rid, count in rows.items() if rid not in set(succeeded))
    lines = [f"{len(succeeded)} successful tool calls, {sum(rows.values())} audit rows with outcome ok"]
    lines += [f"no audit row for request {rid}" for rid in missing[:20]]
    lines += [f"{rows[rid]} audit rows for request {rid}" for rid in doubled[:20]]
    if unseen:
        lines.append(f"{unseen} ok rows of calls whose answer no client saw succeed (an answer lost on its way)")
    return not missing and not doubled and len(set(succeeded)) == len(succeeded), lines


def refresh_families(refreshers: list[Refresher]) -> Result:
    """No family ended but by the deliberate replay: each other one refreshes at the end, and the trail agrees."""
    problems = [problem for refresher in refreshers for problem in refresher.final_check()]
    families = [family for refresher in refreshers for family in refresher.families]
    replays = sum(1 for family in families if family.replayed)
    reuses = AuditEvent.objects.filter(action=AuditAction.REFRESH_REUSE).count()
    refreshes = sum(family.refreshes for family in families)
    lines = [
        f"{len(families)} families, {refreshes} rotations, {replays} deliberate replays, {reuses} refresh_reuse rows"
    ]
    if reuses != replays:
        problems.append(f"{reuses} families revoked for reuse, {replays} replayed on purpose")
    return not problems, lines + problems


def emails_once(headless: HeadlessClient, smtp: SmtpServer) -> Result:
    """Every accepted registration's email arrived exactly once: mails per recipient equal accepted claims."""
    expected = {email: len(claims) for email, claims in headless.claims.items()}
    deadline = time.monotonic() + MAIL_SETTLE_SECONDS
    while True:
        received = Counter(r for mail in smtp.inbox.mails() for r in mail.recipients)
        if all(received.get(email, 0) >= count for email, count in expected.items()) or time.monotonic() > deadline:
            break
        time.sleep(1)
    problems = [
        f"{email}: {received.get(email, 0)} mails for {count} accepted registrations"
        for email, count in sorted(expected.items())
        if received.get(email, 0) != count
    ]
    problems += [
        f"{email}: {count} mails, no accepted registration"
        for email, count in received.items()
        if email not in expected
    ]
    accepted, mails = sum(expected.values()), sum(received.values())
    lines = [f"{accepted} accepted registrations, {mails} mails, {headless.completed} registrations completed"]
    return not problems, lines + problems[:30]


def idempotency(headless: HeadlessClient) -> Result:
    conflicts = headless.conflicting_keys()
    lines = [f"{len(headless.answers)} keys with a final answer, {len(conflicts)} with two different ones"]
    for key, answers in list(conflicts.items())[:10]:
        shown = " | ".join(
            f"{status}{' (replayed)' if replayed else ''} {body[:80]}" for status, replayed, body in answers
        )
        lines.append(f"key {key}: {shown}")
    return not conflicts, lines


def _most_in(times: list[float], span: float) -> int:
    """The most events in any interval of length `span` (both ends included)."""
    return max((bisect_right(times, t + span) - i for i, t in enumerate(times)), default=0)


def limits(limit: int, redis_down: list[tuple[float, float]], origin_wall: float) -> Result:
    """Tool calls let through per person, organization and tool, across both servers, while Redis answered.

    The windows are fixed, each opened by its first call, so their edges are
    unknown here; what holds whatever the edges are: any stretch of k windows'
    length overlaps at most k + 1 windows, so at most (k + 1) x limit calls of
    one counter succeed in it. Checked for every k up to the run's length. While
    Redis is away each server process counts alone (docs/operations.md#redis),
    so the stretches are taken between outages only.
    """
    outages = [(origin_wall + start, origin_wall + end) for start, end in redis_down]
    per_counter: dict[tuple[int, str, str], list[float]] = defaultdict(list)
    rows = AuditEvent.objects.filter(action=AuditAction.TOOL_CALL, outcome=OUTCOME_OK).values_list(
        "person_id", "organization_id", "tool", "occurred_at"
    )
    for person, organization, tool, occurred in rows:
        per_counter[(person, str(organization), tool)].append(occurred.timestamp())
    problems, checked = [], 0
    for counter, times in per_counter.items():
        times.sort()
        segments: list[list[float]] = [[]]
        for moment in times:
            if any(start - 1 <= moment <= end + 1 for start, end in outages):
                segments.append([])
                continue
            segments[-1].append(moment)
        for segment in filter(None, segments):
            for windows in range(1, int((segment[-1] - segment[0]) / WINDOW_SECONDS) + 2):
                checked += 1
                most = _most_in(segment, windows * WINDOW_SECONDS)
                if most > (windows + 1) * limit:
                    problems.append(
                        f"person {counter[0]}, tool {counter[2]}: {most} calls let through in "
                        f"{windows * WINDOW_SECONDS} s, at most {(windows + 1) * limit} allowed"
                    )
                    break
    lines = [f"{len(per_counter)} counters, {checked} stretches checked, limit {limit} per {WINDOW_SECONDS} s"]
    return not problems, lines + problems


def recovery(records: list[FaultRecord]) -> Result:
    lines, held = [], True
    for record in records:
        after = "never" if record.recovered_after is None else f"{record.recovered_after:.1f} s"
        lines.append(f"{record.name}: recovered {after} after it ended ({record.note})".replace(" ()", ""))
        held = held and record.recovered_after is not None and record.recovered_after <= RECOVERY_SECONDS
    return held, lines


def documented_answers(answers: list[Answer]) -> Result:
    """Every answer is a success, a documented limit or outage answer, or one the scenario provoked."""
    unexplained = [a for a in answers if a.category == UNEXPLAINED]
    return not unexplained, [f"{len(unexplained)} unexplained answers of {len(answers)}"]
