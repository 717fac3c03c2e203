"""Headless registration records: claims and stored idempotent responses (docs/headless.md).

Fields, constraints and indexes only. A claim token is never stored, nor is a
verification code in the clear: a claim keeps the SHA-256 of its token and an
HMAC of its code; its email keeps the code sealed with a key derived from
SECRET_KEY until the email is sent (agent_auth.outbox); a stored completion
answer is encrypted with a key derived from the request body (agent_auth.idempotency),
so the database alone reveals no token and no code.
"""

import uuid

from django.conf import settings
from django.db import models


class ClaimStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    COMPLETED = "completed", "Completed"
    ENDED = "ended", "Ended (too many wrong codes)"


class Claim(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    token_hash = models.CharField(max_length=64, unique=True)
    # Null for an unknown email: the claim exists so the answer looks the same, and can never complete.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    code_hash = models.CharField(max_length=64)
    # What the code's HMAC is bound to: the hash of the claim's first token. A repeated start
    # replaces the token (agent_auth.services.reissue_claim_token), and the code stays valid.
    code_binding = models.CharField(max_length=64)
    status = models.CharField(max_length=16, choices=ClaimStatus.choices, default=ClaimStatus.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    organization = models.ForeignKey(
        "organizations.Organization", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    expires_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(status__in=ClaimStatus.values), name="claim_status_is_known"),
        ]

    def __str__(self) -> str:
        return f"claim {self.id} ({self.status})"


class VerificationEmail(models.Model):
    """The outbox row of a claim's verification email: one per claim, sent at most once."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    claim = models.OneToOneField(Claim, on_delete=models.CASCADE, related_name="+")
    sealed_code = models.TextField(blank=True, help_text="Encrypted; erased once sent or no longer sendable")
    attempts = models.PositiveSmallIntegerField(default=0)
    sent_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"verification email {self.id} ({'sent' if self.sent_at else 'pending'})"


class IdempotencyState(models.TextChoices):
    IN_FLIGHT = "in_flight", "In flight"
    DONE = "done", "Done"


class IdempotencyRecord(models.Model):
    endpoint = models.CharField(max_length=32)
    # Empty for a start; for a completion the hash of its claim token, so that only a caller
    # holding that token finds the record (agent_auth.idempotency).
    scope = models.CharField(max_length=64, blank=True, default="")
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64, help_text="SHA-256 of the canonical JSON body")
    state = models.CharField(max_length=16, choices=IdempotencyState.choices, default=IdempotencyState.IN_FLIGHT)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_body = models.TextField(
        blank=True, help_text="A completion's answer, encrypted; readable only with the original body"
    )
    # A start's claim (a repeat is answered from it); a completion's claim, if its token named one.
    claim = models.ForeignKey(Claim, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["endpoint", "scope", "key"], name="one_idempotency_record_per_scope_key"),
            models.CheckConstraint(
                condition=models.Q(state__in=IdempotencyState.values), name="idempotency_state_is_known"
            ),
            models.CheckConstraint(
                condition=~models.Q(endpoint="start", state=IdempotencyState.DONE) | models.Q(claim__isnull=False),
                name="finished_start_names_its_claim",
            ),
        ]
        indexes = [models.Index(fields=["expires_at"], name="idempotency_expires_idx")]

    def __str__(self) -> str:
        return f"{self.endpoint} {self.state}"
