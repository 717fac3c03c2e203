"""The password recovery pages: Django's reset views, with the service's limits, audit and page headers.

Every page is no-store. A page whose URL carries a reset token (the link
itself, and the page of a link that is expired, used or altered) sends
no-referrer; Django's confirm view redirects a good link at once to a URL
without the token. The two pages with a form send strict-origin, as the
sign-in page does (oauth/views.py): no-referrer would make the browser post
`Origin: null`, which Django's CSRF check refuses.
"""

from typing import Any, TypeVar

from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import PasswordResetForm
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.urls import reverse_lazy
from django.utils.decorators import method_decorator
from django.views.decorators.cache import never_cache

from accounts.forms import ResetRequestForm
from accounts.password_reset import record_password_reset, require_reset_allowed
from operator_core.errors import RetryLater
from operator_core.page_security import REFERRER_POLICY_HEADER, referrer_policy

FORM_PAGE_REFERRER_POLICY = "strict-origin"
_Response = TypeVar("_Response", bound=HttpResponseBase)
pages = method_decorator([never_cache, referrer_policy("no-referrer")], name="dispatch")


@pages
class ResetRequestView(auth_views.PasswordResetView):
    """Ask for a reset email: the same page next, whether or not the email has an account."""

    form_class = ResetRequestForm
    template_name = "accounts/password_reset_form.html"
    success_url = reverse_lazy("accounts:password-reset-sent")

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            require_reset_allowed(request, email=request.POST.get("email", ""))
        except RetryLater as refusal:
            # Over a limit (429), or Redis unavailable (503): no email, and the page says so.
            response = self.render_to_response(
                self.get_context_data(form=self.get_form(), refusal=refusal.message), status=refusal.http_status
            )
            for name, value in refusal.headers.items():
                response[name] = value
            return _form_page(response)
        return super().post(request, *args, **kwargs)

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return _form_page(super().get(request, *args, **kwargs))

    def form_invalid(self, form: PasswordResetForm) -> HttpResponse:
        return _form_page(self.render_to_response(self.get_context_data(form=form), status=400))


@pages
class ResetSentView(auth_views.PasswordResetDoneView):
    template_name = "accounts/password_reset_sent.html"


@pages
class ResetConfirmView(auth_views.PasswordResetConfirmView):
    """Django's: check the link, drop its token from the URL, set the password once."""

    template_name = "accounts/password_reset_confirm.html"
    success_url = reverse_lazy("accounts:password-reset-complete")

    def dispatch(self, *args: Any, **kwargs: Any) -> HttpResponseBase:
        response = super().dispatch(*args, **kwargs)
        if response.status_code == 200:
            if self.validlink:
                _form_page(response)
            else:
                response.status_code = 400  # expired, used or altered: the page says so
        return response

    def form_valid(self, form: Any) -> HttpResponse:
        response = super().form_valid(form)
        record_password_reset(form.user)
        return response


@pages
class ResetCompleteView(auth_views.PasswordResetCompleteView):
    template_name = "accounts/password_reset_complete.html"


def _form_page(response: _Response) -> _Response:
    response.headers[REFERRER_POLICY_HEADER] = FORM_PAGE_REFERRER_POLICY
    return response
