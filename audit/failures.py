"""Which audit events tell why a connection failed or ended, and into which refusal each one falls.

One reading of the trail for both the connections pages (why a connection
stopped, docs/managing-connections.md#why-a-connection-stopped) and the usage
page's refusals (docs/managing-connections.md#usage-of-an-organization). The
reasons in `detail` are written by the authorization server (`oauth.audit_trail`,
`oauth.refresh_grace`, `oauth.consent_refusal`); the trail imports no app, so
their wire values are repeated here, and tests/audit/test_failures.py pins them
to the writers' constants.
"""

from __future__ import annotations

from enum import StrEnum

from audit.models import OUTCOME_ACCESS_DENIED, OUTCOME_INVALID_GRANT, AuditAction
from operator_core.errors import ErrorCode

# `detail["reason"]` as the authorization server writes it.
DETAIL_ROLE = "role"
DETAIL_CLIENT_POLICY = "client_policy"
DETAIL_OUTSIDE_WINDOW = "outside_window"
DETAIL_SUCCESSOR_USED = "successor_used"
# A refresh token presented after its connection expired (its row deleted by the daily job, or not yet).
DETAIL_EXPIRED = "expired"
# `detail["token_type"]` of a revocation that ended a connection.
DETAIL_REFRESH_TOKEN = "refresh_token"


class FailureReason(StrEnum):
    """Why a connection failed or ended, one value per explanation the pages give."""

    REFRESH_ROLE = "refresh_role"
    REFRESH_CLIENT_POLICY = "refresh_client_policy"
    REUSE_AFTER_WINDOW = "reuse_after_window"
    REUSE_AFTER_SUCCESSOR = "reuse_after_successor"
    CODE_REPLAY = "code_replay"
    CONSENT_CLIENT_POLICY = "consent_client_policy"
    CONSENT_DENIED = "consent_denied"
    REVOKED_BY_CLIENT = "revoked_by_client"
    EXPIRED = "expired"
    REFRESH_EXPIRED = "refresh_expired"
    CLIENT_DOCUMENT_REFUSED = "client_document_refused"
    ENDED_BY_STAFF = "ended_by_staff"
    FORBIDDEN = "forbidden"
    RATE_LIMITED = "rate_limited"
    CONCURRENCY_LIMITED = "concurrency_limited"


class RefusalKind(StrEnum):
    """The usage page's four groups of refusals."""

    FORBIDDEN = "forbidden"
    LIMITED = "limited"
    CLIENT_POLICY = "client_policy"
    TOKEN_REFUSED = "token_refused"


# A revocation, a declined consent and an expiry are no refusal: nothing was refused when they happened.
REFUSAL_KINDS: dict[FailureReason, RefusalKind] = {
    FailureReason.FORBIDDEN: RefusalKind.FORBIDDEN,
    FailureReason.RATE_LIMITED: RefusalKind.LIMITED,
    FailureReason.CONCURRENCY_LIMITED: RefusalKind.LIMITED,
    FailureReason.CONSENT_CLIENT_POLICY: RefusalKind.CLIENT_POLICY,
    FailureReason.REFRESH_CLIENT_POLICY: RefusalKind.CLIENT_POLICY,
    FailureReason.REFRESH_ROLE: RefusalKind.TOKEN_REFUSED,
    FailureReason.REUSE_AFTER_WINDOW: RefusalKind.TOKEN_REFUSED,
    FailureReason.REUSE_AFTER_SUCCESSOR: RefusalKind.TOKEN_REFUSED,
    FailureReason.CODE_REPLAY: RefusalKind.TOKEN_REFUSED,
    FailureReason.REFRESH_EXPIRED: RefusalKind.TOKEN_REFUSED,
    FailureReason.CLIENT_DOCUMENT_REFUSED: RefusalKind.TOKEN_REFUSED,
}

# Reasons that end a connection for good (docs/managing-connections.md#how-access-ends).
ENDING_REASONS = frozenset(
    {
        FailureReason.REFRESH_ROLE,
        FailureReason.REFRESH_CLIENT_POLICY,
        FailureReason.REUSE_AFTER_WINDOW,
        FailureReason.REUSE_AFTER_SUCCESSOR,
        FailureReason.CODE_REPLAY,
        FailureReason.REVOKED_BY_CLIENT,
        FailureReason.EXPIRED,
        FailureReason.REFRESH_EXPIRED,
        FailureReason.ENDED_BY_STAFF,
    }
)

_TOOL_REFUSALS = {
    str(ErrorCode.FORBIDDEN): FailureReason.FORBIDDEN,
    str(ErrorCode.RATE_LIMITED): FailureReason.RATE_LIMITED,
    str(ErrorCode.CONCURRENCY_LIMITED): FailureReason.CONCURRENCY_LIMITED,
}
_REFRESH_REFUSALS = {
    DETAIL_ROLE: FailureReason.REFRESH_ROLE,
    DETAIL_CLIENT_POLICY: FailureReason.REFRESH_CLIENT_POLICY,
    DETAIL_EXPIRED: FailureReason.REFRESH_EXPIRED,
}
_REUSES = {
    DETAIL_OUTSIDE_WINDOW: FailureReason.REUSE_AFTER_WINDOW,
    DETAIL_SUCCESSOR_USED: FailureReason.REUSE_AFTER_SUCCESSOR,
}


def failure_reason(*, action: str, outcome: str, reason: str | None, token_type: str | None) -> FailureReason | None:
    """The reason one event stands for, from its action, outcome and `detail`; None when it is no failure."""
    if action == AuditAction.TOOL_CALL:
        return _TOOL_REFUSALS.get(outcome)
    if action == AuditAction.REFRESH and outcome == OUTCOME_INVALID_GRANT:
        return _REFRESH_REFUSALS.get(reason or "")
    if action == AuditAction.REFRESH_REUSE:
        return _REUSES.get(reason or "", FailureReason.REUSE_AFTER_WINDOW)
    if action == AuditAction.CODE_REPLAY:
        return FailureReason.CODE_REPLAY
    if action == AuditAction.AUTHORIZATION and outcome == OUTCOME_ACCESS_DENIED:
        return FailureReason.CONSENT_CLIENT_POLICY if reason == DETAIL_CLIENT_POLICY else FailureReason.CONSENT_DENIED
    if action == AuditAction.REVOCATION and token_type == DETAIL_REFRESH_TOKEN:
        return FailureReason.REVOKED_BY_CLIENT
    if action == AuditAction.CONNECTION_EXPIRY:
        return FailureReason.EXPIRED
    if action == AuditAction.CLIENT_DOCUMENT_REFUSAL:
        return FailureReason.CLIENT_DOCUMENT_REFUSED
    if action == AuditAction.STAFF_REVOCATION:
        return FailureReason.ENDED_BY_STAFF
    return None
