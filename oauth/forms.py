"""Forms of the sign-in and consent pages."""

from django import forms
from oauth2_provider.forms import AllowForm


class SignInForm(forms.Form):
    email = forms.EmailField(
        max_length=254, widget=forms.EmailInput(attrs={"autocomplete": "email", "autofocus": True})
    )
    password = forms.CharField(
        max_length=4096, strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "current-password"})
    )
    next = forms.CharField(required=False, widget=forms.HiddenInput())


class ConsentForm(AllowForm):
    """DOT's hidden authorization fields, plus the chosen organization (checked server-side)."""

    organization = forms.CharField(required=False, max_length=64)
