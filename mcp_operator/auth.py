"""Bearer authentication of the operator endpoint (docs/authentication.md "Access token"; RFC 6750).

`authenticate_operator_request` is the transport's authenticator for
`/api/mcp/operator`. It owns the `WWW-Authenticate` challenge: every refusal is
an OAuth error body (never JSON-RPC) with a `Bearer` challenge naming the
protected-resource metadata, raised as `operator_core.mcp.transport.Refusal`.

Only `Authorization: Bearer <jwt>` is accepted. A DPoP (or any other) scheme, a
token in the query string or a form body, and a session cookie are refused with
401. The token is verified locally by `oauth.tokens.verify_access_token` (keys
parsed once per process, no network); then the scope is judged (403
`insufficient_scope`); then one query reads the person (inactive or gone: 401) together with their
operator role in the token's organization, which admission judges.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from django.http import HttpRequest, JsonResponse
from oauth2_provider.www_authenticate import build_bearer_challenge

from oauth.tokens import InvalidAccessToken, verify_access_token
from operator_core.conf import operator_settings
from operator_core.mcp.transport import Refusal
from operator_core.request_log import annotate
from operator_core.scopes import SCOPE_OPERATOR_READ, SCOPE_OPERATOR_WRITE
from organizations.models import Organization
from organizations.operator_access import operator_access_or_none

BEARER_SCHEME = "bearer"
TOKEN_PARAMETER = "access_token"
FORM_CONTENT_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
OPERATOR_SCOPES = frozenset({SCOPE_OPERATOR_READ, SCOPE_OPERATOR_WRITE})

ERROR_INVALID_REQUEST = "invalid_request"
ERROR_INVALID_TOKEN = "invalid_token"
ERROR_INSUFFICIENT_SCOPE = "insufficient_scope"


@dataclass(frozen=True)
class OperatorPrincipal:
    """Who calls: the person who authorized the token, in the organization bound to it.

    `organization` is that organization as read for this request, or None when
    the person is no longer admin or member there: admission then answers
    `forbidden` (mcp_operator/admission.py).
    """

    user_id: int
    organization_id: str
    organization: Organization | None
    client_id: str
    scopes: frozenset[str]


def authenticate_operator_request(request: HttpRequest) -> OperatorPrincipal:
    """Return the caller of an operator-endpoint request or raise `Refusal`.

    401, with `error="invalid_token"` in the challenge whenever a token was sent
    (RFC 6750 §3.1) and no `error` when none was: no token, a session
    cookie only, a non-Bearer scheme such as DPoP, a token in the query string or
    form body, a malformed header, a token that fails verification (bad
    signature, `typ`, issuer, audience of another origin, expired, `cnf`-bound)
    or whose person is unknown or inactive. 403 `insufficient_scope`: neither
    operator scope.
    """
    if TOKEN_PARAMETER in request.GET or _token_in_form_body(request):
        # RFC 6750 §2.3 / RFC 9700: URI and form tokens leak into logs and referrers.
        raise _unauthorized(ERROR_INVALID_TOKEN, "Send the access token in the Authorization header only")
    authorization = request.headers.get("Authorization", "")
    if not authorization:
        # A session cookie is no credential here (docs/authentication.md): same answer as nothing.
        raise _unauthorized(None, "A bearer access token is required")
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() != BEARER_SCHEME:
        # DPoP and every other scheme: sender-constrained tokens are not accepted (docs/authentication.md).
        raise _unauthorized(ERROR_INVALID_TOKEN, "Only the Bearer authorization scheme is accepted")
    if not token or " " in token:
        raise _unauthorized(ERROR_INVALID_TOKEN, "Malformed Authorization header")
    try:
        claims = verify_access_token(token)
    except InvalidAccessToken:
        raise _unauthorized(ERROR_INVALID_TOKEN, "The access token is invalid or expired") from None
    if not claims.scopes & OPERATOR_SCOPES:
        raise _forbidden_scope()
    access = operator_access_or_none(user_id=claims.user_id, organization_id=claims.organization_id)
    if access is None or not access.is_active:
        raise _unauthorized(ERROR_INVALID_TOKEN, "The access token is invalid or expired")
    annotate(user_id=claims.user_id, organization_id=claims.organization_id)
    return OperatorPrincipal(
        user_id=claims.user_id,
        organization_id=claims.organization_id,
        organization=access.organization,
        client_id=claims.client_id,
        scopes=claims.scopes,
    )


def _token_in_form_body(request: HttpRequest) -> bool:
    if request.method != "POST" or request.content_type not in FORM_CONTENT_TYPES:
        return False
    # The transport answers any non-JSON body with 415 without reading it again.
    return TOKEN_PARAMETER in request.POST


def _challenge(error: str | None) -> str:
    attributes: OrderedDict[str, str] = OrderedDict()
    if error is not None:
        attributes["error"] = error
    attributes["scope"] = SCOPE_OPERATOR_READ
    return build_bearer_challenge(
        None, oauth2_error=attributes, resource_metadata_url=operator_settings().resource_metadata_url
    )


def _oauth_error_response(status: int, error: str | None, body_error: str, description: str) -> JsonResponse:
    response = JsonResponse({"error": body_error, "error_description": description}, status=status)
    response["WWW-Authenticate"] = _challenge(error)
    response["Cache-Control"] = "no-store"
    return response


def _unauthorized(error: str | None, description: str) -> Refusal:
    # With no credential at all, the body still names an OAuth error: the request lacks one.
    body_error = error or ERROR_INVALID_REQUEST
    return Refusal(_oauth_error_response(401, error, body_error, description))


def _forbidden_scope() -> Refusal:
    description = f"The access token needs the {SCOPE_OPERATOR_READ} scope"
    return Refusal(_oauth_error_response(403, ERROR_INSUFFICIENT_SCOPE, ERROR_INSUFFICIENT_SCOPE, description))
