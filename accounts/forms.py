"""The forms that ask for a person's email: the admin's add and change forms, and the reset request."""

from collections.abc import Iterator
from typing import Any

from django import forms
from django.contrib.auth.forms import AdminUserCreationForm, PasswordResetForm, UserChangeForm
from django.contrib.auth.models import User

from accounts.emails import EMAIL_MAX_LENGTH, normalized_email, people_with_email
from accounts.password_reset import queue_reset_email, reset_recipient_or_none

EMAIL_TAKEN = "Another account already has this email (emails are compared without regard to case)."


def _email_field() -> forms.EmailField:
    return forms.EmailField(
        label="Email",
        max_length=EMAIL_MAX_LENGTH,
        help_text="The person signs in with it. Stored in lower case.",
    )


class _UniqueEmail(forms.ModelForm):
    instance: User

    def clean_email(self) -> str:
        email = normalized_email(self.cleaned_data["email"])
        if people_with_email(email).exclude(pk=self.instance.pk).exists():
            raise forms.ValidationError(EMAIL_TAKEN, code="email_taken")
        return email


class EmailUserCreationForm(_UniqueEmail, AdminUserCreationForm):
    """The admin's "Add user": an email and a password; the username follows the email (accounts.identity)."""

    email = _email_field()

    class Meta(AdminUserCreationForm.Meta):
        fields = ("email",)


class EmailUserChangeForm(_UniqueEmail, UserChangeForm):
    """The admin's change form: the email instead of the username (whose field the admin's fieldsets leave out)."""

    email = _email_field()


class ResetRequestForm(PasswordResetForm):
    """Django's reset request, finding the person by normalised email and queueing the email in the outbox."""

    def get_users(self, email: str) -> Iterator[User]:
        recipient = reset_recipient_or_none(email)
        if recipient is not None:
            yield recipient

    def send_mail(
        self,
        subject_template_name: str,
        email_template_name: str,
        context: dict[str, Any],
        from_email: str | None,
        to_email: str,
        html_email_template_name: str | None = None,
    ) -> None:
        queue_reset_email(user=context["user"], uidb64=context["uid"], token=context["token"])
