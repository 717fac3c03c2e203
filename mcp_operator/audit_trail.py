"""The operator endpoint's record of every tool call (docs/operations.md#audit-trail).

`operator_call_record` is the `record_with_read` of the endpoint's
`ToolRegistry`: the call's record, as `ok`, sent with the read that settles
the call and written only if the call succeeds, so that on PostgreSQL the
read and the record are one statement and one round trip
(docs/development/performance.md#a-tool-call-in-one-statement).
`record_operator_call` is its `on_call` observer: after each call (answered,
refused or failed) it appends the record that was not written with a read:
every call on SQLite, and a call refused or failed before or by its settling
read (`not_found`, a `startChunk` past the end). Each record names the
person, the token's organization and client, the tool, the outcome and the
duration; everything it needs is on the principal the authenticator built.
"""

from __future__ import annotations

import logging
import time

from django.db.backends.base.base import BaseDatabaseWrapper

from audit.models import OUTCOME_OK
from audit.services import record_tool_call, tool_call_statement
from mcp_operator.auth import OperatorPrincipal
from operator_core.mcp.tools import ToolCallReport
from operator_core.sql import Rider

logger = logging.getLogger(__name__)


def operator_call_record(principal: object, tool: str, started: float) -> Rider:
    caller = _operator_principal(principal)

    def statement(db: BaseDatabaseWrapper) -> tuple[str, list[object]]:
        # The duration so far: the settling read is the call's last round trip before its answer.
        duration_ms = round((time.perf_counter() - started) * 1000, 2)
        return tool_call_statement(
            db,
            person_id=caller.user_id,
            organization_id=caller.organization_id,
            client_id=caller.client_id,
            tool=tool,
            outcome=OUTCOME_OK,
            duration_ms=duration_ms,
        )

    return Rider(statement)


def record_operator_call(report: ToolCallReport) -> None:
    principal = _operator_principal(report.principal)
    if report.recorded_with_read:
        if report.outcome != OUTCOME_OK:
            # Only a bug fails a call whose read wrote its record (the registry logged it); events are
            # append-only, so the record stays `ok` and this line ties the two together.
            logger.error("tool call %s recorded ok with its read, then answered %s", report.tool, report.outcome)
        return
    record_tool_call(
        person_id=principal.user_id,
        # the token's organization, also when the call was refused because the role is gone
        organization_id=principal.organization_id,
        client_id=principal.client_id,
        tool=report.tool,
        outcome=report.outcome,
        duration_ms=report.duration_ms,
    )


def _operator_principal(principal: object) -> OperatorPrincipal:
    if not isinstance(principal, OperatorPrincipal):
        raise TypeError("the operator endpoint's calls are made by an OperatorPrincipal")
    return principal
