"""The forms that ask for a person's email: the admin's add and change forms."""

from typing import Any

from django import forms
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.contrib.auth.models import User

from accounts.emails import EMAIL_MAX_LENGTH, normalized_email, people_with_email

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
        field_classes: dict[str, Any] = {}


class EmailUserChangeForm(_UniqueEmail, UserChangeForm):
    """The admin's change form: the email instead of the username."""

    email = _email_field()

    class Meta(UserChangeForm.Meta):
        fields = (
            "email",
            "password",
            "first_name",
            "last_name",
            "is_active",
            "is_staff",
            "is_superuser",
            "groups",
            "user_permissions",
            "last_login",
            "date_joined",
        )
        field_classes: dict[str, Any] = {}
