"""HTTP edge of the authorization server: DOT's views, routed at the documented paths, with our hooks.

Views parse, call one selector or service, and render. OAuth rules live in
`oauth.validators`; who may connect to which organization lives in
`organizations.selectors`.
"""

from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.decorators import method_decorator
from django.views.decorators.cache import never_cache
from oauth2_provider.exceptions import FatalClientError, OAuthToolkitError
from oauth2_provider.models import get_application_model
from oauth2_provider.views import (
    AuthorizationView,
)
from oauth2_provider.views.mixins import OAuthLibMixin
from oauthlib.oauth2.rfc6749 import errors as oauthlib_errors
from oauthlib.openid.connect.core.exceptions import ConsentRequired, LoginRequired

from oauth.audit_trail import record_authorization_decision, record_client_document_refusal
from oauth.authorization_errors import error_page_message
from oauth.cimd import cimd_failure
from oauth.consent_refusal import refusal_outside_client_policy
from oauth.forms import ConsentForm
from oauth.limits import AUTHORIZATION, limited
from oauth.pages import FORM_PAGE_REFERRER_POLICY, allow_form_redirect_to, error_page, no_referrer
from oauth.selectors import eligible_organizations, registered_redirect_uri_or_none
from oauth.validators import require_operator_resource
from operator_core.conf import operator_settings
from operator_core.errors import Forbidden
from operator_core.page_security import (
    REFERRER_POLICY_HEADER,
)
from operator_core.signed_in import signed_in_person
from organizations.errors import NoEligibleOrganization
from organizations.selectors import require_eligible_organization

# What a client is told, in `error_description`, when the person may connect nowhere.
NO_ELIGIBLE_ORGANIZATION = (
    "Only organization admins and members can connect applications, and this account is neither in any "
    "organization. Ask an admin of your organization for the member role."
)


CLIENT_REFUSED = "The organization's client policy does not allow this application. Ask one of its admins to add it."


def _with_issuer(uri: str) -> str:
    """Add RFC 9207 `iss` to an authorization (error) response; DOT adds it on success only."""
    parts = urlsplit(uri)
    query = [(key, value) for key, value in parse_qsl(parts.query, keep_blank_values=True) if key != "iss"]
    query.append(("iss", operator_settings().issuer))
    return urlunsplit(parts._replace(query=urlencode(query)))


# --- authorization and consent ---------------------------------------------------------


def _asks_for_no_prompt(request: HttpRequest) -> bool:
    # prompt is a space-delimited list (OIDC Core §3.1.2.1)
    return "none" in request.GET.get("prompt", "").split()


@no_referrer
# The consent page lists the person's organizations and a CSRF token, and its URL the
# request: no cache keeps any answer of this view (the 403 and error pages too).
@method_decorator(never_cache, name="dispatch")
@method_decorator(limited(AUTHORIZATION), name="dispatch")
class AuthorizeView(AuthorizationView):
    """DOT's authorization endpoint with our consent page, organization chooser and 403 page.

    - only S256 PKCE and only the operator endpoint as `resource` are accepted;
    - the request is judged before the sign-in page, so an unusable client is named first;
    - a person with no admin or member role anywhere gets HTTP 403
      (docs/authentication.md#3-consent-and-the-organization-chooser);
    - the organization chosen (or the only eligible one) goes into `credentials`,
      which oauthlib copies onto its request for the validator to bind to the grant;
    - every redirect back to the client carries `iss` (RFC 9207), errors included;
    - every Allow and Deny is written to the audit trail, with the organization chosen;
    - Deny, like Allow, answers a consent form whose client and redirect URI do not match with the
      error page: no redirect and no audit row (RFC 6749 §4.1.2.1);
    - a client the chosen organization's policy does not admit is refused with a page (oauth/consent_refusal.py);
    - requests are limited per IP address (oauth/limits.py).
    """

    template_name = "oauth/consent.html"
    form_class = ConsentForm

    def handle_no_permission(self) -> HttpResponse:
        if _asks_for_no_prompt(self.request):
            return self._refuse_silently(LoginRequired)
        if self.request.method in ("GET", "HEAD"):
            # Judged before the person signs in: an unusable client (a metadata document
            # that cannot be fetched) or redirect URI is named now, not after a password.
            try:
                self.validate_authorization_request(self.request)
            except OAuthToolkitError as error:
                return self.error_response(error, application=None)
        return super().handle_no_permission()

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        # Consent needs the person every time (the organization choice, Allow or Deny),
        # so a request that forbids any page can only be answered with an error.
        if _asks_for_no_prompt(request):
            return self._refuse_silently(ConsentRequired)
        # Consent is shown every time: an "auto" approval would skip the organization choice.
        if "approval_prompt" in request.GET:
            query = request.GET.copy()
            query.pop("approval_prompt")
            # django-stubs types GET as immutable; Django lets a view replace it with its own copy.
            request.GET = query  # type: ignore[assignment]
        self.organizations = list(eligible_organizations(signed_in_person(request)))
        if not self.organizations:
            try:
                _scopes, credentials = self.validate_authorization_request(request)
            except OAuthToolkitError as error:
                return self.error_response(error, application=None)
            return _no_eligible_organization_page(
                request,
                client_id=credentials["client_id"],
                redirect_uri=credentials["redirect_uri"],
                state=credentials.get("state"),
            )
        return super().get(request, *args, **kwargs)

    def _refuse_silently(self, error_class: type[oauthlib_errors.OAuth2Error]) -> HttpResponse:
        """Answer `prompt=none` (OIDC Core §3.1.2.6) through the one error path that adds `iss`.

        The request is validated first, so an unregistered redirect URI is never followed.
        """
        try:
            _scopes, credentials = self.validate_authorization_request(self.request)
        except OAuthToolkitError as error:
            return self.error_response(error, application=None)
        refusal = error_class(state=credentials.get("state"))
        return self.error_response(
            OAuthToolkitError(error=refusal, redirect_uri=credentials.get("redirect_uri")), application=None
        )

    def validate_authorization_request(self, request: HttpRequest) -> tuple[list[str], dict[str, Any]]:
        scopes, credentials = super().validate_authorization_request(request)
        redirect_uri = credentials.get("redirect_uri")
        state = credentials.get("state")
        if credentials.get("code_challenge_method") != "S256":
            error = oauthlib_errors.InvalidRequestError(
                description="PKCE with code_challenge_method=S256 is required.", state=state
            )
            raise OAuthToolkitError(error=error, redirect_uri=redirect_uri)
        try:
            require_operator_resource(request.GET.getlist("resource"))
        except oauthlib_errors.OAuth2Error as error:
            error.state = state
            raise OAuthToolkitError(error=error, redirect_uri=redirect_uri) from None
        return scopes, credentials

    def render_to_response(self, context: dict[str, Any], **response_kwargs: Any) -> HttpResponse:
        """The consent page; its form's answer redirects to the client (validated by DOT)."""
        response = super().render_to_response(context, **response_kwargs)
        response.headers[REFERRER_POLICY_HEADER] = FORM_PAGE_REFERRER_POLICY
        allow_form_redirect_to(response, context.get("redirect_uri") or "")
        return response

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        organizations = getattr(self, "organizations", None) or list(eligible_organizations(self.request.user))
        context["organizations"] = organizations
        # Scopes that grant the same thing read the same: each sentence once.
        context["scope_descriptions"] = list(dict.fromkeys(kwargs.get("scopes_descriptions", [])))
        return context

    def form_valid(self, form: ConsentForm) -> HttpResponse:
        self.organization = None
        client_id = form.cleaned_data["client_id"]
        if not get_application_model().objects.filter(client_id=client_id).exists():
            return self.form_invalid(form)
        # The hidden fields can be edited: Deny checks the pair as oauthlib does for Allow, or it
        # would redirect to any URI and record a client the page never showed (RFC 6749 §4.1.2.1).
        redirect_uri = registered_redirect_uri_or_none(client_id, redirect_uri=form.cleaned_data["redirect_uri"])
        if redirect_uri is None:
            return self.error_response(
                FatalClientError(error=oauthlib_errors.MismatchingRedirectURIError()), application=None
            )
        if form.cleaned_data.get("allow"):
            try:
                self.organization = require_eligible_organization(
                    self.request.user, organization_id=form.cleaned_data.get("organization")
                )
            except Forbidden as error:
                if isinstance(error, NoEligibleOrganization):
                    return _no_eligible_organization_page(
                        self.request,
                        client_id=client_id,
                        redirect_uri=form.cleaned_data["redirect_uri"],
                        state=form.cleaned_data.get("state"),
                    )
                return error_page(self.request, title="Organization not available", message=error.message, status=403)
            refused = refusal_outside_client_policy(
                self.request,
                client_id=client_id,
                organization=self.organization,
                return_url=_denial_url(redirect_uri, state=form.cleaned_data.get("state"), description=CLIENT_REFUSED),
            )
            if refused is not None:
                return refused
        else:
            self.organization = _chosen_organization_or_none(self.request.user, form.cleaned_data.get("organization"))
        return super().form_valid(form)

    def form_invalid(self, form: ConsentForm) -> HttpResponse:
        return error_page(
            self.request,
            title="Incomplete request",
            message="The authorization request was incomplete. Start again from your application.",
            status=400,
        )

    def create_authorization_response(
        self, request: HttpRequest, scopes: str, credentials: dict[str, Any], allow: bool
    ) -> tuple[str, dict[str, str], str, int]:
        if allow:
            organization = getattr(self, "organization", None)
            if organization is None:
                # Reached without the consent form (an application set to skip authorization).
                try:
                    organization = require_eligible_organization(signed_in_person(request), organization_id=None)
                except Forbidden as error:
                    denied = oauthlib_errors.AccessDeniedError(
                        description=error.message, state=credentials.get("state")
                    )
                    raise OAuthToolkitError(error=denied, redirect_uri=credentials.get("redirect_uri")) from None
            credentials["organization_id"] = str(organization.pk)
        else:
            # DOT raises access_denied next, so the denial is recorded outside its transaction.
            self._record_decision(request, credentials, scopes, granted=False)
        with transaction.atomic():
            response = super().create_authorization_response(request, scopes, credentials, allow)
            if allow:
                self._record_decision(request, credentials, scopes, granted=True)
            return response

    def _record_decision(
        self, request: HttpRequest, credentials: dict[str, Any], scopes: str, *, granted: bool
    ) -> None:
        organization = getattr(self, "organization", None)
        organization_id = credentials.get("organization_id") or (organization.pk if organization else None)
        record_authorization_decision(
            user_id=signed_in_person(request).pk,
            client_id=credentials.get("client_id") or "",
            organization_id=organization_id,
            granted=granted,
            scopes=scopes.split() if scopes else [],
        )

    def error_response(self, error: OAuthToolkitError, application: Any, **kwargs: Any) -> HttpResponse:
        redirect, response = OAuthLibMixin.error_response(self, error, **kwargs)
        if redirect:
            if application is None:
                client_id = self.request.GET.get("client_id") or self.request.POST.get("client_id") or ""
                application = get_application_model().objects.filter(client_id=client_id).first()
            return self.redirect(_with_issuer(response["url"]), application)
        oauth_error = response["error"]
        client_id = self.request.GET.get("client_id") or self.request.POST.get("client_id") or ""
        message = error_page_message(
            oauth_error,
            client_id=client_id,
            redirect_uri=self.request.GET.get("redirect_uri") or self.request.POST.get("redirect_uri") or "",
        )
        unknown_client = isinstance(oauth_error, oauthlib_errors.InvalidClientIdError)
        refused_document = cimd_failure(client_id) if unknown_client else None
        if refused_document is not None and self.request.user.is_authenticated:
            # So the person's connections page can say later why this client never connected.
            record_client_document_refusal(
                person_id=signed_in_person(self.request).pk, client_id=client_id, reason=refused_document.name
            )
        return error_page(
            self.request,
            title="This authorization request cannot be completed",
            message=message,
            status=getattr(oauth_error, "status_code", 400),
        )


def _no_eligible_organization_page(
    request: HttpRequest, *, client_id: str, redirect_uri: str, state: str | None
) -> HttpResponse:
    """HTTP 403 for a person who is admin or member of no organization, with a way back to the client.

    The page tells the person why; its "Return to the application" link tells the client, with
    `access_denied` and the reason (RFC 6749 §4.1.2.1), so a client waiting on its redirect URI
    stops instead of timing out. The person follows it: no redirect the person did not choose
    (RFC 9700 §4.11.2). `redirect_uri` has been checked against the client's registration.
    """
    context = {
        "application": get_application_model().objects.filter(client_id=client_id).first(),
        "return_url": _denial_url(redirect_uri, state=state, description=NO_ELIGIBLE_ORGANIZATION),
    }
    return render(request, "oauth/forbidden.html", context, status=403)


def _denial_url(redirect_uri: str, *, state: str | None, description: str) -> str:
    """The client's `redirect_uri` with `access_denied`, `description`, `state` and `iss` (RFC 6749 §4.1.2.1).

    Only for a `redirect_uri` checked against the client's registration: a refusal page links to it.
    """
    refusal = oauthlib_errors.AccessDeniedError(description=description, state=state or None)
    return _with_issuer(refusal.in_uri(redirect_uri))


def _chosen_organization_or_none(user: Any, organization_id: str | None) -> Any:
    """The organization picked on a denied consent, for the audit trail; None when not one of the person's."""
    try:
        return require_eligible_organization(user, organization_id=organization_id)
    except Forbidden:
        return None
