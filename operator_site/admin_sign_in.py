"""The admin's sign-in, limited like the service's (docs/operations.md#admin).

Django's admin checks any number of passwords at `/admin/login/`. Here every
attempt first counts through `oauth.limits.require_sign_in_allowed`, the same
counters per address and per email as `/api/auth/sign-in` (so guesses at the
two pages add up) and the same audit event for a refusal. A refused attempt
is answered 429 (503 while Redis does not answer) on the admin's own page,
saying so, and its password is never checked. Staff sign in with their email
(accounts/backends.py).
"""

from typing import Any, cast

from django.contrib import admin
from django.contrib.admin.forms import AdminAuthenticationForm
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse

from oauth.limits import ADMIN_SIGN_IN_PAGE, require_sign_in_allowed
from operator_core.errors import RetryLater

REFUSED = "rate_limited"


class LimitedAdminAuthenticationForm(AdminAuthenticationForm):
    """The admin's sign-in form, counted before `authenticate` runs."""

    refusal: RetryLater | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Staff sign in by email, as everyone does (accounts/backends.py); the field keeps Django's name.
        self.fields["username"].label = "Email"

    def clean(self) -> dict[str, Any]:
        try:
            # The admin's LoginView always builds this form with the request; the form's type allows none.
            request = cast(HttpRequest, self.request)
            require_sign_in_allowed(request, email=self.data.get("username", ""), page=ADMIN_SIGN_IN_PAGE)
        except RetryLater as refusal:
            self.refusal = refusal
            raise ValidationError(refusal.message, code=REFUSED) from None
        return super().clean()


def admin_sign_in(request: HttpRequest, **kwargs: Any) -> HttpResponse:
    """`admin.site.login` (its form is `LimitedAdminAuthenticationForm`, set in `apps.py`) with a refusal's status."""
    response = admin.site.login(request, **kwargs)
    form = (getattr(response, "context_data", None) or {}).get("form")
    refusal = getattr(form, "refusal", None)
    if refusal is not None:
        response.status_code = refusal.http_status
        for name, value in refusal.headers.items():
            response[name] = value
    return response
