"""The outbox rows of password reset emails (accounts.password_reset).

Fields only. The link is kept sealed (operator_core.outbox) until the email is
sent, then erased: the database never holds a reset token in the clear.
"""

import uuid

from django.conf import settings
from django.db import models


class PasswordResetEmail(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    sealed_link = models.TextField(blank=True, help_text="Encrypted; erased once sent or no longer sendable")
    attempts = models.PositiveSmallIntegerField(default=0)
    sent_at = models.DateTimeField(null=True, blank=True)
    # The link's own expiry (PASSWORD_RESET_TIMEOUT): no attempt after it.
    expires_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"password reset email {self.id} ({'sent' if self.sent_at else 'pending'})"
