"""Sign-in by email: Django's `ModelBackend`, finding the person by their normalised email.

Everything else is `ModelBackend`'s: `is_active` (`user_can_authenticate`),
the password check, permissions, and the hasher run once for an unknown email
so that its answer takes as long as a wrong password's. An account with no
email (an old superuser's) still signs in with its username
(docs/development/decisions.md#one-identity-the-email).
"""

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import User
from django.http import HttpRequest

from accounts.emails import person_for_email_or_none


class EmailBackend(ModelBackend):
    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> User | None:
        # The admin's form and `authenticate(username=...)` callers name the email `username`.
        email = kwargs.get("email", username)
        if email is None or password is None:
            return None
        user_model = get_user_model()
        user = person_for_email_or_none(email) or user_model.objects.filter(email="", username=email).first()
        if user is None:
            # As ModelBackend does: hash once, so an unknown email costs what a wrong password does.
            user_model().set_password(password)
            return None
        if user.check_password(password) and self.user_can_authenticate(user):
            return user
        return None
