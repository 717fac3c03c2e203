"""Forms of the sign-in and consent pages."""

from typing import Any

from django import forms
from oauth2_provider.forms import AllowForm


class SignInForm(forms.Form):
    """The sign-in page's two steps: the email alone, then (no provider for its domain) the password too."""

    email = forms.EmailField(max_length=254, widget=forms.EmailInput(attrs={"autocomplete": "username"}))
    password = forms.CharField(
        max_length=4096,
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password", "autofocus": True}),
    )
    next = forms.CharField(required=False, widget=forms.HiddenInput())

    def __init__(self, *args: Any, with_password: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not with_password:
            del self.fields["password"]
            self.fields["email"].widget.attrs["autofocus"] = True


class ConsentForm(AllowForm):
    """DOT's hidden authorization fields, plus the chosen organization (checked server-side)."""

    organization = forms.CharField(required=False, max_length=64)
