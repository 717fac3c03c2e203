"""Errors of the headless path (docs/headless.md lists each code with its status).

They extend the one hierarchy of `operator_core.errors` and are rendered by
`as_json_response` at the agent_auth edge; `forbidden`, `invalid_arguments` and
`rate_limited` reuse the shared classes.
"""

import uuid
from enum import StrEnum
from typing import Any

from operator_core.errors import OperatorError


class HeadlessErrorCode(StrEnum):
    INVALID_CLAIM = "invalid_claim"
    CLAIM_EXPIRED = "claim_expired"
    CLAIM_USED = "claim_used"
    CLAIM_ENDED = "claim_ended"
    INVALID_CODE = "invalid_code"
    ORGANIZATION_REQUIRED = "organization_required"
    INVALID_ORGANIZATION = "invalid_organization"
    IDEMPOTENCY_KEY_REUSED = "idempotency_key_reused"
    REQUEST_IN_PROGRESS = "request_in_progress"


class InvalidClaim(OperatorError):
    """No claim has this token."""

    code, http_status = HeadlessErrorCode.INVALID_CLAIM, 404


class ClaimExpired(OperatorError):
    code, http_status = HeadlessErrorCode.CLAIM_EXPIRED, 410


class ClaimUsed(OperatorError):
    code, http_status = HeadlessErrorCode.CLAIM_USED, 410


class ClaimEnded(OperatorError):
    """Five wrong codes were entered; the claim can never complete."""

    code, http_status = HeadlessErrorCode.CLAIM_ENDED, 410


class InvalidCode(OperatorError):
    """A wrong code; `attemptsRemaining` says how many more may be tried."""

    code, http_status = HeadlessErrorCode.INVALID_CODE, 400

    def __init__(self, message: str, *, attempts_remaining: int, **data: Any) -> None:
        super().__init__(message, attemptsRemaining=attempts_remaining, **data)


class OrganizationRequired(OperatorError):
    """Several eligible organizations and none chosen; `organizations` lists them."""

    code, http_status = HeadlessErrorCode.ORGANIZATION_REQUIRED, 409


class InvalidOrganization(OperatorError):
    """The chosen organization is not one where the person is admin or member."""

    code, http_status = HeadlessErrorCode.INVALID_ORGANIZATION, 400


class IdempotencyKeyReused(OperatorError):
    """The key was used with another body; `claim_id`, never sent, is the claim of the key's row."""

    code, http_status = HeadlessErrorCode.IDEMPOTENCY_KEY_REUSED, 422

    def __init__(self, message: str, *, claim_id: uuid.UUID | None = None) -> None:
        super().__init__(message)
        self.claim_id = claim_id


class RequestInProgress(OperatorError):
    code, http_status = HeadlessErrorCode.REQUEST_IN_PROGRESS, 409
