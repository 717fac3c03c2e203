"""The JWT bearer grant (RFC 7523 §2.1) carrying an ID-JAG: enterprise-managed authorization at the token endpoint.

django-oauth-toolkit and oauthlib know no such grant, so `TokenView` hands a
request with `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` here
before DOT sees it. The client authenticates as it registered (DOT's own
client authentication, CIMD clients included); the assertion is checked by
identity_providers/id_jag.py; then the rules every token here obeys: the
person holds admin or member in the provider's organization, the provider may
name this client, the organization's client policy admits it. What comes back
is the access token every client gets (oauth/tokens.py), with no refresh
token: the client asks its provider for a new ID-JAG instead, so the provider's
policy is evaluated again (docs/development/decisions.md#enterprise-managed-authorization).
Each grant and refusal is one `id_jag_grant` audit event, never the assertion.
"""

from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.models import User
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from oauth2_provider.oauth2_backends import OAuthLibCore
from oauthlib.common import Request as OAuthlibRequest

from audit.models import OUTCOME_OK, AuditAction
from audit.services import record_event
from identity_providers.id_jag import VerifiedIdJag, person_for_id_jag, verified_id_jag
from identity_providers.id_jag_errors import INVALID_CLIENT, IdJagRefusal, IdJagRefused
from identity_providers.models import IdentityProvider
from oauth.client_policy import client_admitted
from oauth.models import AccessToken, Application
from oauth.tokens import issue_access_token
from oauth.validators import OperatorOAuth2Validator, names_operator_endpoint, this_origin_resources
from operator_core.conf import operator_settings
from operator_core.scopes import SCOPE_OPERATOR_READ, SCOPE_OPERATOR_WRITE
from organizations.selectors import holds_operator_role

ID_JAG_GRANT_PROFILE = "urn:ietf:params:oauth:grant-profile:id-jag"
# What an access token here can carry; an ID-JAG's other scopes (openid, the provider's own) grant nothing here.
_OPERATOR_SCOPES = frozenset({SCOPE_OPERATOR_READ, SCOPE_OPERATOR_WRITE})
_CLIENT_AUTHENTICATION_FAILED = (
    "Client authentication failed: give the client_id and, for a client registered with a secret, "
    "that secret (HTTP Basic or the request body)."
)
_NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


def id_jag_token_response(request: HttpRequest) -> JsonResponse:
    """The token endpoint's answer to a JWT bearer grant: an access token, or an OAuth error (RFC 6749 §5.2)."""
    client = _authenticated_client(request)
    if client is None:
        return _error(INVALID_CLIENT, _CLIENT_AUTHENTICATION_FAILED, status=401)
    assertion = request.POST.get("assertion", "")
    if not assertion:
        return _error("invalid_request", "Give the ID-JAG in the assertion parameter.", status=400)
    try:
        if client.client_type == Application.CLIENT_PUBLIC:
            # The draft's security considerations: confidential clients only. A public client
            # proves nothing, so a stolen ID-JAG would be worth a token to anyone holding it.
            raise IdJagRefused(IdJagRefusal.PUBLIC_CLIENT)
        if not all(names_operator_endpoint(value) for value in request.POST.getlist("resource")):
            raise IdJagRefused(IdJagRefusal.WRONG_RESOURCE, detail=operator_settings().operator_endpoint_url)
        grant = verified_id_jag(
            assertion,
            audience=operator_settings().issuer,
            client_id=client.client_id,
            resource_url=operator_settings().operator_endpoint_url,
            names_resource=names_operator_endpoint,
            leeway_seconds=operator_settings().token_leeway_seconds,
        )
        person = _person_allowed(grant, client)
        scopes = _granted_scopes(request.POST.get("scope"), grant)
    except IdJagRefused as refused:
        _record(
            refused.error,
            reason=refused.reason,
            client=client,
            provider=refused.provider,
            person_id=refused.person_id,
        )
        return _error(refused.error, refused.description, status=refused.http_status)
    token = _issue(person, client=client, grant=grant, scopes=scopes)
    _record(OUTCOME_OK, reason="", client=client, provider=grant.provider, person_id=person.pk, scopes=scopes)
    body = {
        "access_token": token,
        "token_type": "Bearer",
        "expires_in": operator_settings().access_token_lifetime_seconds,
        "scope": " ".join(scopes),
    }
    return JsonResponse(body, headers=_NO_STORE)


def _authenticated_client(request: HttpRequest) -> Application | None:
    """The client as DOT authenticates one at its token endpoint: with its secret when it has one."""
    core = OAuthLibCore()
    oauthlib_request = OAuthlibRequest(
        request.build_absolute_uri(),
        http_method="POST",
        body=urlencode(core.extract_body(request)),
        headers=core.extract_headers(request),
    )
    validator = OperatorOAuth2Validator()
    if validator.client_authentication_required(oauthlib_request):
        authenticated = validator.authenticate_client(oauthlib_request)
    else:
        client_id = oauthlib_request.client_id
        authenticated = bool(client_id) and validator.authenticate_client_id(client_id, oauthlib_request)
    client = oauthlib_request.client if authenticated else None
    return client if isinstance(client, Application) else None


def _person_allowed(grant: VerifiedIdJag, client: Application) -> User:
    provider = grant.provider
    if provider.ema_client_ids and client.client_id not in provider.ema_client_ids:
        raise IdJagRefused(IdJagRefusal.CLIENT_NOT_ALLOWED, provider=provider)
    person = person_for_id_jag(grant)
    if not holds_operator_role(user_id=person.pk, organization_id=provider.organization_id):
        raise IdJagRefused(IdJagRefusal.NO_ROLE, provider=provider, person_id=person.pk)
    if not client_admitted(client, organization_id=provider.organization_id):
        raise IdJagRefused(IdJagRefusal.CLIENT_POLICY, provider=provider, person_id=person.pk)
    return person


def _granted_scopes(requested: str | None, grant: VerifiedIdJag) -> list[str]:
    """The request's scopes within the ID-JAG's (extension §7.2.1), of those a token here carries.

    No `scope` requested: the ID-JAG's. No `scope` in the ID-JAG: what was requested, or the
    default every client gets. None left: `invalid_scope`.
    """
    allowed = _OPERATOR_SCOPES if grant.scopes is None else grant.scopes & _OPERATOR_SCOPES
    wanted = frozenset(requested.split()) if requested else (grant.scopes or frozenset({SCOPE_OPERATOR_READ}))
    granted = sorted(wanted & allowed)
    if not granted:
        allowed_text = " ".join(sorted(allowed)) or "no operator scope"
        raise IdJagRefused(
            IdJagRefusal.SCOPE_NOT_GRANTED, detail=f"the ID-JAG allows {allowed_text}", provider=grant.provider
        )
    return granted


def _issue(person: User, *, client: Application, grant: VerifiedIdJag, scopes: list[str]) -> str:
    """Mint the JWT and store its row, as DOT does for every token (revocation, the connections pages)."""
    lifetime = operator_settings().access_token_lifetime_seconds
    token = issue_access_token(
        user_id=person.pk,
        organization_id=str(grant.provider.organization_id),
        client_id=client.client_id,
        scopes=scopes,
        expires_in=lifetime,
    )
    AccessToken.objects.create(
        user=person,
        application=client,
        token=token,
        expires=timezone.now() + timedelta(seconds=lifetime),
        scope=" ".join(scopes),
        organization_id=grant.provider.organization_id,
        resource=this_origin_resources(),
        granted_by=grant.provider,
    )
    Application.objects.filter(pk=client.pk).update(last_used_at=timezone.now())
    return token


def _record(
    outcome: str,
    *,
    reason: str,
    client: Application,
    provider: IdentityProvider | None,
    person_id: int | None,
    scopes: list[str] | None = None,
) -> None:
    """One `id_jag_grant` event: `ok` or the OAuth error answered, and why; an issuer only once trusted."""
    detail: dict[str, Any] = {"issuer": provider.issuer if provider is not None else ""}
    if reason:
        detail["reason"] = str(reason)
    if scopes is not None:
        detail["scopes"] = scopes
    record_event(
        AuditAction.ID_JAG_GRANT,
        outcome=str(outcome),
        person_id=person_id,
        organization_id=provider.organization_id if provider is not None else None,
        client_id=client.client_id,
        client_name=client.name,
        detail=detail,
    )


def _error(error: str, description: str, *, status: int) -> JsonResponse:
    headers = dict(_NO_STORE)
    if status == 401:
        headers["WWW-Authenticate"] = f'Basic realm="{operator_settings().issuer}"'
    return JsonResponse({"error": error, "error_description": description}, status=status, headers=headers)
