"""The sign-in page, email first, and the callback of single sign-on (docs/authentication.md#2-sign-in).

The email's domain decides: a domain with an identity provider goes to that provider
(identity_providers/sign_in.py), any other gets the password field, a second step of
the same page that works without JavaScript. Every attempt and every refusal counts
against the sign-in limit per address and per email (oauth/limits.py).
"""

from django.conf import settings
from django.contrib.auth import authenticate, login
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.utils.decorators import method_decorator
from django.utils.http import url_has_allowed_host_and_scheme
from django.views import View
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.debug import sensitive_post_parameters

from identity_providers.errors import ProviderSignInRefused
from identity_providers.models import IdentityProvider
from identity_providers.sign_in import authorization_url, complete_sign_in, provider_for_email
from oauth.forms import SignInForm
from oauth.limits import PROVIDER_SIGN_IN_PAGE, SIGN_IN_PAGE, require_sign_in_allowed
from oauth.pages import FORM_PAGE_REFERRER_POLICY, allow_form_redirect_to, error_page, no_referrer, pending_redirect_uri
from operator_core.errors import RetryLater
from operator_core.page_security import REFERRER_POLICY_HEADER

PROVIDER_REQUIRED = (
    "Your organization signs its people in through its own sign-in service, so this service does not "
    "accept a password for {email}. Start again and enter only your email address."
)
SIGN_IN_REFUSED_TITLE = "Sign-in refused"


def _safe_next(next_url: str) -> str:
    """`next` when it stays on this site (a relative URL), else ""."""
    if next_url and url_has_allowed_host_and_scheme(next_url, allowed_hosts=None, require_https=False):
        return next_url
    return ""


def _limited_page(request: HttpRequest, error: RetryLater) -> HttpResponse:
    response = error_page(request, title="Too many attempts", message=error.message, status=error.http_status)
    for name, value in error.headers.items():
        response[name] = value
    return response


@no_referrer
@method_decorator([never_cache, csrf_protect, sensitive_post_parameters("password")], name="dispatch")
class SignInView(View):
    """Email first; then the organization's provider, or the password; rate-limited per IP and email."""

    template_name = "oauth/sign_in.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        form = SignInForm(initial={"next": request.GET.get("next", "")})
        return self._render(request, form)

    def post(self, request: HttpRequest) -> HttpResponse:
        asks_password = "password" in request.POST
        form = SignInForm(request.POST, with_password=asks_password)
        try:
            require_sign_in_allowed(request, email=request.POST.get("email", ""), page=SIGN_IN_PAGE)
        except RetryLater as error:
            # Over the limit (429), or Redis unavailable (503): the limit fails closed
            # rather than let password guessing through (docs/operations.md#outages).
            response = self._render(request, form, error=error.message, status=error.http_status)
            for name, value in error.headers.items():
                response[name] = value
            return response
        if not form.is_valid():
            message = "Enter your email address and password." if asks_password else "Enter your email address."
            return self._render(request, form, error=message, status=400)
        email = form.cleaned_data["email"].strip()
        provider = provider_for_email(email)
        if not asks_password:
            if provider is None:
                return self._render(request, SignInForm(initial=form.cleaned_data, with_password=True), step="password")
            return self._send_to_provider(request, provider, email=email, next_url=form.cleaned_data["next"])
        if provider is not None and provider.required:
            return error_page(
                request,
                title="Sign in through your organization",
                message=PROVIDER_REQUIRED.format(email=email),
                status=403,
            )
        user = authenticate(request, email=email, password=form.cleaned_data["password"])
        if user is None:
            # one message for unknown email and wrong password: no account enumeration
            return self._render(
                request, form, error="That email and password do not match an account.", status=400, step="password"
            )
        login(request, user)
        next_url = _safe_next(form.cleaned_data.get("next") or "")
        if next_url:
            return HttpResponseRedirect(next_url)
        return self._render(request, SignInForm(), signed_in=True)

    def _send_to_provider(
        self, request: HttpRequest, provider: IdentityProvider, *, email: str, next_url: str
    ) -> HttpResponse:
        try:
            url = authorization_url(request, provider, email=email, next_url=_safe_next(next_url))
        except ProviderSignInRefused as refusal:
            return error_page(request, title=SIGN_IN_REFUSED_TITLE, message=refusal.message, status=refusal.http_status)
        # A page, not a redirect: CSP's form-action governs every redirect after this form's POST,
        # and the provider's origin is not ours. The page moves on by itself (meta refresh),
        # and its link serves a browser that does not.
        return render(request, "oauth/provider_redirect.html", {"url": url, "organization": provider.organization})

    def _render(
        self,
        request: HttpRequest,
        form: SignInForm,
        *,
        error: str = "",
        status: int = 200,
        signed_in: bool = False,
        step: str = "email",
    ) -> HttpResponse:
        context = {"form": form, "error": error, "signed_in": signed_in, "step": step}
        response = render(request, self.template_name, context, status=status)
        if not signed_in:
            response.headers[REFERRER_POLICY_HEADER] = FORM_PAGE_REFERRER_POLICY
            next_url = request.POST.get("next") or request.GET.get("next") or ""
            allow_form_redirect_to(response, pending_redirect_uri(next_url))
        return response


@no_referrer
@method_decorator(never_cache, name="dispatch")
class ProviderCallbackView(View):
    """Where an identity provider sends the person back: sign in and continue to `next`, or a page saying why."""

    def get(self, request: HttpRequest) -> HttpResponse:
        try:
            result = complete_sign_in(request)
        except ProviderSignInRefused as refusal:
            try:
                require_sign_in_allowed(request, email=refusal.typed_email, page=PROVIDER_SIGN_IN_PAGE)
            except RetryLater as error:
                return _limited_page(request, error)
            return error_page(request, title=SIGN_IN_REFUSED_TITLE, message=refusal.message, status=refusal.http_status)
        # No backend authenticated the person (the provider did): name the one that loads
        # them on later requests, the first configured, as login() would with only one.
        login(request, result.person, backend=settings.AUTHENTICATION_BACKENDS[0])
        next_url = _safe_next(result.next_url)
        if next_url:
            return HttpResponseRedirect(next_url)
        return render(request, "oauth/sign_in.html", {"signed_in": True})
