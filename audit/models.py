"""The audit trail: one append-only row per access or change of access (docs/operations.md#audit-trail).

Rows name people, organizations and clients by id and never hold a token, a
code, a secret or an email address. The person, the organization and the actor
are foreign keys without a database constraint and with `DO_NOTHING`: deleting
a person or an organization leaves their rows in place (the trail outlives what
it describes), and the trail never blocks a deletion. The client is named by its
`client_id` (the headless path's is not a registered application) and, where the
writer had it at hand, its name.

Rows are only ever inserted (`audit.services.record_event`) and deleted by age
(`purge_audit_events`); a database trigger refuses every UPDATE (migration 0001).
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.db.models.fields.json import KeyTransform

from operator_core.errors import ErrorCode

# The outcome of what went through; anything else is the error code the client was answered.
OUTCOME_OK = "ok"
# Tool-call outcomes that are refusals (audit.failures names each).
TOOL_REFUSAL_OUTCOMES = (str(ErrorCode.FORBIDDEN), str(ErrorCode.RATE_LIMITED), str(ErrorCode.CONCURRENCY_LIMITED))
# What oauthlib answers for a refused consent and a refused grant.
OUTCOME_ACCESS_DENIED = "access_denied"
OUTCOME_INVALID_GRANT = "invalid_grant"


class AuditAction(models.TextChoices):
    TOOL_CALL = "tool_call", "Tool call"
    AUTHORIZATION = "authorization", "Authorization (consent)"
    CODE_EXCHANGE = "code_exchange", "Authorization code exchanged"
    REFRESH = "refresh", "Tokens refreshed"
    REVOCATION = "revocation", "Token revoked"
    CODE_REPLAY = "code_replay", "Code replayed: its tokens revoked"
    REFRESH_REUSE = "refresh_reuse", "Refresh token reused: its family revoked"
    CLAIM_START = "claim_start", "Headless claim started"
    CLAIM_COMPLETION = "claim_completion", "Headless claim completed"
    CLAIM_END = "claim_end", "Headless claim ended after too many wrong codes"
    ROLE_CHANGE = "role_change", "Role changed"
    CLIENT_POLICY_CHANGE = "client_policy_change", "Client policy changed"
    SIGN_IN_REFUSAL = "sign_in_refusal", "Sign-in refused: too many attempts"
    PROVIDER_SIGN_IN = "provider_sign_in", "Sign-in through an identity provider"
    IDENTITY_LINK = "identity_link", "Person linked to an identity provider"
    PROVIDER_CHANGE = "provider_change", "Identity provider added, changed or removed"
    PASSWORD_RESET_REQUEST = "password_reset_request", "Password reset requested"
    PASSWORD_RESET = "password_reset", "Password reset completed"
    CONNECTION_EXPIRY = "connection_expiry", "Connection expired unused"
    ID_JAG_GRANT = "id_jag_grant", "Access granted or refused by an identity provider's ID-JAG"
    CLIENT_DOCUMENT_REFUSAL = "client_document_refusal", "Client ID Metadata Document refused"
    STAFF_REVOCATION = "staff_revocation", "Connection ended by staff: its tokens revoked in the admin"


# The rows `audit.failures.failure_reason` may name. Defined here so that the partial indexes
# below hold exactly these rows, and a read filtered by the same condition is served by them.
FAILURE_EVENTS = (
    Q(action=AuditAction.TOOL_CALL, outcome__in=list(TOOL_REFUSAL_OUTCOMES))
    | Q(action=AuditAction.REFRESH, outcome=OUTCOME_INVALID_GRANT)
    | Q(action__in=[AuditAction.REFRESH_REUSE, AuditAction.CODE_REPLAY])
    | Q(action=AuditAction.AUTHORIZATION, outcome=OUTCOME_ACCESS_DENIED)
    | Q(action__in=[AuditAction.REVOCATION, AuditAction.CONNECTION_EXPIRY], outcome=OUTCOME_OK)
    | Q(action__in=[AuditAction.CLIENT_DOCUMENT_REFUSAL, AuditAction.STAFF_REVOCATION])
)
# `detail` key of a `CONNECTION_EXPIRY`: a keyed digest of the expired refresh token's checksum
# (oauth.audit_trail.expired_token_digest), so that the token, presented after the daily job
# deleted its row, is still recognised; never the token, nor what the token table stored.
DETAIL_EXPIRED_TOKEN = "expired_token"


class AuditEvent(models.Model):
    id = models.BigAutoField(primary_key=True)
    occurred_at = models.DateTimeField()
    action = models.CharField(max_length=32, choices=AuditAction.choices)
    # "ok", or the error code the client was answered (a tool error, access_denied, invalid_grant, ...)
    outcome = models.CharField(max_length=64)
    person = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,
        related_name="+",
    )
    organization = models.ForeignKey(
        "organizations.Organization",
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,
        related_name="+",
    )
    client_id = models.CharField("client ID", max_length=255, blank=True)
    client_name = models.CharField(max_length=255, blank=True)
    tool = models.CharField(max_length=64, blank=True)
    duration_ms = models.FloatField("duration (ms)", null=True, blank=True)
    request_id = models.CharField("request ID", max_length=128, blank=True)
    # Who made a role change (staff) or a client-policy change (an organization admin); the
    # person is whose role changed. The composite indexes below serve the person and
    # organization filters; the foreign keys need none of their own, and each index is one
    # more write per tool call.
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,
        related_name="+",
    )
    # Small, non-secret facts of one action: the roles of a role change, the scopes granted.
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-occurred_at", "-id"]
        indexes = [
            models.Index(fields=["occurred_at"], name="audit_occurred_idx"),
            models.Index(fields=["organization", "occurred_at"], name="audit_org_occurred_idx"),
            models.Index(fields=["person", "occurred_at"], name="audit_person_occurred_idx"),
            # The connections pages' reads (docs/development/decisions.md#connection-health-reads):
            # failures are a few percent of the rows, so their own indexes keep 30 days of them
            # a short scan; a connection's last tool call is one step down the last index.
            models.Index(
                fields=["organization", "occurred_at"], condition=FAILURE_EVENTS, name="audit_org_failure_idx"
            ),
            models.Index(fields=["person", "occurred_at"], condition=FAILURE_EVENTS, name="audit_person_failure_idx"),
            models.Index(
                fields=["person", "organization", "client_id", "occurred_at"],
                condition=Q(action=AuditAction.TOOL_CALL),
                name="audit_last_tool_call_idx",
            ),
            models.Index(
                KeyTransform(DETAIL_EXPIRED_TOKEN, "detail"),
                condition=Q(action=AuditAction.CONNECTION_EXPIRY),
                name="audit_expired_token_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_action_display()} at {self.occurred_at:%Y-%m-%d %H:%M:%S}"


class UsageFigure(models.TextChoices):
    """What one `DailyUsage` row counts, and what its `key` names."""

    TOOL = "tool", "Tool calls by tool"
    CLIENT = "client", "Tool calls by client ID"
    PERSON = "person", "Tool calls by person ID"
    REFUSAL = "refusal", "Refusals by reason"
    # Keyed "<person id> <client id>": the organization's connections page counts from it.
    CONNECTION = "connection", "Tool calls by person and client ID"
    # One row per rolled-up day, its key empty: tells a day with no event from a day not rolled up yet.
    ROLLED = "rolled", "Day rolled up"


class DailyUsage(models.Model):
    """One organization's audit events of one day, counted: a roll-up of the trail, never a record of its own.

    Written by `audit.services.roll_up_usage` (the daily `purge_expired`) for the
    days that ended, in the organization's display time zone, and deleted with
    the events it counts (docs/development/decisions.md#usage-roll-up).
    """

    id = models.BigAutoField(primary_key=True)
    organization = models.ForeignKey(
        "organizations.Organization",
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,
        related_name="+",
    )
    time_zone = models.CharField(max_length=64)
    day = models.DateField()
    figure = models.CharField(max_length=16, choices=UsageFigure.choices)
    # A client ID is up to 255 characters; a CONNECTION key adds the person's id before it.
    key = models.CharField(max_length=300, blank=True)
    count = models.PositiveIntegerField()

    class Meta:
        # The constraint's index serves the page's read: organization, zone, then a range of days.
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "time_zone", "day", "figure", "key"], name="one_count_per_day_and_key"
            )
        ]

    def __str__(self) -> str:
        return f"{self.figure} {self.key} on {self.day}: {self.count}"
