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
operator role in the token's organization, which admission judges. That query runs once per
request, before any answer but not necessarily here: a tool call sends it with its first read
(`OperatorPrincipal`).
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import Sequence

from django.http import HttpRequest, JsonResponse
from oauth2_provider.www_authenticate import build_bearer_challenge

from oauth.tokens import InvalidAccessToken, verify_access_token
from operator_core.conf import operator_settings
from operator_core.errors import Forbidden
from operator_core.mcp.transport import Refusal
from operator_core.request_log import annotate
from operator_core.scopes import SCOPE_OPERATOR_READ, SCOPE_OPERATOR_WRITE
from operator_core.sql import Guard
from organizations.models import Organization
from organizations.operator_access import (
    ACCESS_COLUMNS,
    ACCESS_GRANTED,
    OperatorAccess,
    operator_access_from_row,
    operator_access_or_none,
    operator_access_statement,
)

BEARER_SCHEME = "bearer"
TOKEN_PARAMETER = "access_token"
FORM_CONTENT_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
OPERATOR_SCOPES = frozenset({SCOPE_OPERATOR_READ, SCOPE_OPERATOR_WRITE})

ERROR_INVALID_REQUEST = "invalid_request"
ERROR_INVALID_TOKEN = "invalid_token"
ERROR_INSUFFICIENT_SCOPE = "insufficient_scope"
# `forbidden`: the person is no longer admin or member of the token's organization.
FORBIDDEN_MESSAGE = "You are no longer an admin or member of this organization."


class OperatorPrincipal:
    """Who calls: the person who authorized the token, in the organization bound to it.

    Their access (active, and still admin or member there) is re-read on every
    request, once, by whichever comes first: the transport's `confirm_operator_access`
    on every answer but a tool call's, the tool call's first read as its guard
    (`access_guard`), or `confirm()` where a check needs it before or without one.
    A person unknown or inactive is then refused 401; `confirm()` returns None
    when they are no longer admin or member there: admission answers `forbidden`
    (mcp_operator/admission.py).
    """

    def __init__(self, *, user_id: int, organization_id: str, client_id: str, scopes: frozenset[str]) -> None:
        self.user_id = user_id
        self.organization_id = organization_id
        self.client_id = client_id
        self.scopes = scopes
        self.access_known = False
        self._access: OperatorAccess | None = None
        self._token_organization: Organization | None = None

    def confirm(self) -> Organization | None:
        """The token's organization as read for this request, None when the role there is gone.

        Reads the access now unless it was read; raises `Refusal` (401) for a person unknown or inactive.
        """
        if not self.access_known:
            self._settle(operator_access_or_none(user_id=self.user_id, organization_id=self.organization_id))
        return self._granted()

    def token_organization(self) -> Organization | None:
        """The token's organization by its id, for a call whose first read checks the access.

        Its slug and name are filled in once the access is read (by that read);
        None when the token's organization id is not one (the access then answers).
        """
        if self._token_organization is None:
            try:
                organization_id = uuid.UUID(self.organization_id)
            except ValueError:
                return None
            self._token_organization = Organization(id=organization_id)
            self._token_organization._state.adding = False
        return self._token_organization

    def access_guard(self) -> Guard:
        """The access query as the guard of a tool call's first read (one statement on PostgreSQL)."""
        return Guard(
            statement=lambda: operator_access_statement(user_id=self.user_id, organization_id=self.organization_id),
            columns=ACCESS_COLUMNS,
            granted=ACCESS_GRANTED,
            settle=lambda row: self._settle_row(row),
        )

    def _settle_row(self, row: Sequence[object] | None) -> None:
        self._settle(operator_access_from_row(row))
        if self._granted() is None:
            # The read's rows and its record were withheld: the call is refused before it is used.
            raise Forbidden(FORBIDDEN_MESSAGE)

    def _settle(self, access: OperatorAccess | None) -> None:
        self._access, self.access_known = access, True
        pending, granted = self._token_organization, access.organization if access else None
        if pending is not None and granted is not None:
            pending.slug, pending.name = granted.slug, granted.name

    def _granted(self) -> Organization | None:
        access = self._access
        if access is None or not access.is_active:
            raise _unauthorized(ERROR_INVALID_TOKEN, "The access token is invalid or expired")
        return access.organization


def confirm_operator_access(principal: object) -> None:
    """The transport's check of every answer but a tool call's: the person is still known and active."""
    if isinstance(principal, OperatorPrincipal):
        principal.confirm()


def authenticate_operator_request(request: HttpRequest) -> OperatorPrincipal:
    """Return the caller of an operator-endpoint request or raise `Refusal`.

    401, with `error="invalid_token"` in the challenge whenever a token was sent
    (RFC 6750 §3.1) and no `error` when none was: no token, a session
    cookie only, a non-Bearer scheme such as DPoP, a token in the query string or
    form body, a malformed header, a token that fails verification (bad
    signature, `typ`, issuer, audience of another origin, expired, `cnf`-bound)
    or whose person is unknown or inactive. 403 `insufficient_scope`: neither
    operator scope. The person is read after: `OperatorPrincipal`.
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
    annotate(user_id=claims.user_id, organization_id=claims.organization_id)
    # The access is read later, with the call's first read where there is one (class docstring).
    return OperatorPrincipal(
        user_id=claims.user_id, organization_id=claims.organization_id, client_id=claims.client_id, scopes=claims.scopes
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
