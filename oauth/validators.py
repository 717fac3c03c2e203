"""The OAuth2Validator subclass holding our authorization-server rules.

On top of DOT's validator: the organization chosen at consent is bound to the
grant and carried to every token (`request.organization_id`, read by
`oauth.tokens.generate_access_token`) with the moment of consent
(`authorized_at`); the person's role and the client policy are checked again at
every code exchange and refresh (a refused refresh ends its connection);
`resource` must be this origin's operator endpoint and is stored with, and
required of, every code and refresh token (RFC 8707); a replayed code revokes
what it issued; a reused refresh token goes to `oauth.refresh_grace`; client
secrets are checked against keyed digests (oauth/client_secrets.py); each event
reaches the audit trail through one hook call. Errors answer through oauthlib
(False, or one of its error types); DOT renders them. Why:
docs/development/decisions.md#authorization-server.
"""

import json
import uuid
from datetime import timedelta
from typing import Any

from django.utils import timezone
from oauth2_provider.models import get_grant_model
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauth2_provider.settings import oauth2_settings
from oauthlib.oauth2.rfc6749 import errors

from oauth import audit_trail, refresh_grace, services
from oauth.client_policy import client_admitted
from oauth.connections import end_refused_connection, end_revoked_connection
from oauth.models import AccessToken, RefreshToken
from oauth.selectors import holds_operator_role
from operator_core.conf import operator_settings

Grant = get_grant_model()

ERROR_INVALID_TARGET = "invalid_target"


def names_operator_endpoint(resource: str) -> bool:
    """True when `resource` is the operator endpoint URL, give or take a query string and trailing slashes.

    A host may derive `resource` from the URL the person configured, query
    string included (`…/api/mcp/operator?utm_source=x`): the query does not
    name another resource. Another origin or path does, and so does a
    value with a fragment or whitespace, which no URI holds (RFC 8707 §2).
    """
    if "#" in resource or any(character.isspace() for character in resource):
        return False
    without_query = resource.split("?", 1)[0]
    return without_query.rstrip("/") == operator_settings().operator_endpoint_url


def require_operator_resource(resources: list[str], request: Any = None) -> None:
    """Raise `invalid_target` unless every requested resource names the operator endpoint.

    An absent `resource` is fine: the token's audience is the canonical operator
    endpoint URL whatever the client sent (docs/development/decisions.md#defaults-we-switch-on).
    """
    for resource in resources:
        if not names_operator_endpoint(resource):
            raise errors.CustomOAuth2Error(
                error=ERROR_INVALID_TARGET,
                description=f"The only resource served here is {operator_settings().operator_endpoint_url}.",
                request=request,
            )


def _body_resources(request: Any) -> list[str]:
    return [value for key, value in (getattr(request, "decoded_body", None) or []) if key == "resource"]


def this_origin_resources() -> list[str]:
    """The `resource` stored on every grant and token issued here: this origin's operator endpoint.

    RFC 8707 binds a grant to the resources it was issued for. Origins that
    share one database (docs/operations.md) tell their grants and tokens apart
    by this value, so the token endpoint of one never redeems what another issued.
    """
    return [operator_settings().operator_endpoint_url]


def _issued_here(stored_resources: list[str] | None) -> bool:
    # A row stored before resources were recorded ([]) was issued for no known
    # origin: refused, like one of another origin (docs/authentication.md).
    return stored_resources == this_origin_resources()


def serves_this_origin(request_uri: str, audiences: list[str]) -> bool:
    """DOT's `RESOURCE_SERVER_TOKEN_RESOURCE_VALIDATOR`: an access token is good at this origin's endpoints
    (userinfo, OIDC Core §5.3) when it was issued for this origin's operator endpoint, and nowhere else."""
    return _issued_here(audiences)


def _past_lifetime(refresh_token: RefreshToken) -> bool:
    """Whether `refresh_token` is past its 30 days from issue (docs/limits.md#token-lifetimes)."""
    lifetime = timedelta(seconds=operator_settings().refresh_token_lifetime_seconds)
    return refresh_token.created <= timezone.now() - lifetime


class OperatorOAuth2Validator(OAuth2Validator):
    # --- clients -------------------------------------------------------------------

    def _load_application(self, client_id: str, request: Any) -> Any:
        """DOT's client lookup, except that a client id holding NUL names no client, on either database.

        DOT catches the ValueError psycopg2 raised for NUL; psycopg 3 raises
        DataError instead, which made such an id a 500 at the token and
        revocation endpoints on PostgreSQL, and `invalid_client` on SQLite.
        """
        if isinstance(client_id, str) and "\x00" in client_id:
            return None
        return super()._load_application(client_id, request)

    # --- authorization endpoint ---------------------------------------------------

    def save_authorization_code(
        self, client_id: str, code: dict[str, str], request: Any, *args: Any, **kwargs: Any
    ) -> None:
        """oauthlib's public hook for persisting a grant: DOT's grant, plus the organization bound at consent.

        The choice made on the consent page is bound to the authorization
        (docs/authentication.md#3-consent-and-the-organization-chooser). DOT's
        `_create_authorization_code` cannot store the organization (a column it
        does not know, and not null), so this hook writes the grant itself; the
        fields follow DOT's, which `tests/oauth/test_dot_private_uses.py` pins
        (docs/development/decisions.md#dot-private-names).
        """
        if request.code_challenge_method != Grant.CODE_CHALLENGE_S256:
            # RFC 9700 §2.1.1: S256 only; the view refuses plain earlier, this is the backstop.
            raise errors.InvalidRequestError(description="code_challenge_method must be S256.", request=request)
        organization_id = getattr(request, "organization_id", None)
        if not organization_id or not holds_operator_role(user_id=request.user.pk, organization_id=organization_id):
            raise errors.AccessDeniedError(description="No eligible organization was chosen.", request=request)
        if not client_admitted(request.client, organization_id=organization_id):
            raise errors.AccessDeniedError(description="The organization does not admit this client.", request=request)
        require_operator_resource(getattr(request, "resource", None) or [], request)
        Grant.objects.create(
            application=request.client,
            user=request.user,
            organization_id=organization_id,
            code=code["code"],
            expires=timezone.now() + timedelta(seconds=oauth2_settings.AUTHORIZATION_CODE_EXPIRE_SECONDS),
            redirect_uri=request.redirect_uri,
            scope=" ".join(request.scopes),
            code_challenge=request.code_challenge or "",
            code_challenge_method=request.code_challenge_method or "",
            nonce=request.nonce or "",
            claims=json.dumps(request.claims or {}),
            resource=this_origin_resources(),
        )

    # --- token endpoint: authorization code ------------------------------------------

    def validate_code(self, client_id: str, code: str, client: Any, request: Any, *args: Any, **kwargs: Any) -> bool:
        """A live grant for this client whose person still holds admin/member in its organization.

        An unknown code that was already exchanged is a replay: its tokens are revoked.
        """
        require_operator_resource(_body_resources(request), request)
        # Whatever form of the endpoint URL was sent, DOT compares the canonical one with the grant's.
        request.resource = this_origin_resources()
        # Locked until the exchange commits (oauth.endpoint_views.TokenView is atomic): a
        # concurrent exchange of the same code waits, then takes the replay path.
        grant = Grant.objects.select_for_update().filter(code=code, application=client).first()
        if grant is None:
            services.revoke_tokens_of_replayed_code(code=code, application=client)
            return False
        if grant.is_expired() or not _issued_here(grant.resource):
            return False
        if not holds_operator_role(user_id=grant.user_id, organization_id=grant.organization_id):
            return False
        if not client_admitted(client, organization_id=grant.organization_id):
            return False
        request.scopes = grant.scope.split(" ")
        request.user = grant.user
        request.organization_id = str(grant.organization_id)
        request.operator_authorized_at = grant.created
        if grant.nonce:
            request.nonce = grant.nonce
        if grant.claims:
            request.claims = json.loads(grant.claims)
        return True

    def invalidate_authorization_code(self, client_id: str, code: str, request: Any, *args: Any, **kwargs: Any) -> None:
        super().invalidate_authorization_code(client_id, code, request, *args, **kwargs)
        services.record_redeemed_code(
            code=code,
            application=request.client,
            token_family=getattr(request, "operator_token_family", None),
            access_token_id=getattr(request, "operator_access_token_id", None),
        )

    # --- token endpoint: refresh -----------------------------------------------------

    def validate_refresh_token(self, refresh_token: str, client: Any, request: Any, *args: Any, **kwargs: Any) -> bool:
        """DOT's checks on a live token, the grace window's on a rotated one, then our lifetime and role re-check.

        The presented token stays locked until the request commits, so concurrent
        refreshes with one token rotate it once (`oauth.refresh_grace`). A replay
        within the window runs every rule below too. docs/authentication.md#refresh-tokens
        says what a client sees.
        """
        require_operator_resource(_body_resources(request), request)
        request.resource = this_origin_resources()
        presented = refresh_grace.lock_presented_refresh_token(refresh_token)
        if presented is not None and presented.revoked is not None:
            # A rotated or revoked token: the grace window decides, not DOT (oauth.refresh_grace).
            if not refresh_grace.admit_rotated_refresh_token(
                presented, refresh_token=refresh_token, client=client, request=request
            ):
                return False
        elif not super().validate_refresh_token(refresh_token, client, request, *args, **kwargs):
            if presented is None:
                # Perhaps the token of a connection that expired, deleted by the daily job since.
                audit_trail.record_expired_refresh(refresh_token=refresh_token, client=client)
            elif presented.application_id == client.pk and _past_lifetime(presented):
                audit_trail.record_expired_refresh(refresh_token=refresh_token, client=client, row=presented)
            return False
        refresh_token_row = request.refresh_token_instance
        if not _issued_here(refresh_token_row.resource):
            return False
        # 30 days from issue (docs/limits.md#token-lifetimes). DOT alone would
        # count from the paired access token's expiry, one hour later.
        if _past_lifetime(refresh_token_row):
            audit_trail.record_expired_refresh(refresh_token=refresh_token, client=client, row=refresh_token_row)
            return False
        organization_id = refresh_token_row.organization_id
        if organization_id is None:
            return False
        # Refused for good: the connection ends, so a role given back or a policy
        # loosened again does not revive it (oauth.connections.end_refused_connection).
        if not holds_operator_role(user_id=request.user.pk, organization_id=organization_id):
            end_refused_connection(refresh_token_row, client=client, reason=audit_trail.REASON_ROLE)
            return False
        if not client_admitted(client, organization_id=organization_id):
            end_refused_connection(refresh_token_row, client=client, reason=audit_trail.REASON_CLIENT_POLICY)
            return False
        request.organization_id = str(organization_id)
        return True

    def refresh_id_token(self, request: Any) -> bool:
        # A replay answers the rotation's own ID token, if it had one: mint none.
        return not refresh_grace.is_replay(request)

    # --- token storage ---------------------------------------------------------------

    def _save_bearer_token(self, token: dict[str, Any], request: Any, *args: Any, **kwargs: Any) -> None:
        """DOT's storage and rotation; a replay within the grace window stores nothing and answers as before."""
        if refresh_grace.is_replay(request):
            self._check_and_set_request_resource(request)
            refresh_grace.answer_replay(token, request)
            return
        # DOT forgets the presented token once it has rotated it.
        presented = getattr(request, "refresh_token_instance", None) if request.grant_type == "refresh_token" else None
        super()._save_bearer_token(token, request, *args, **kwargs)
        refresh_grace.remember_rotation(token, request, rotated=presented)

    def _create_access_token(
        self, expires: Any, request: Any, token: dict[str, Any], source_refresh_token: Any = None
    ) -> AccessToken:
        """DOT's access token with the bound organization and this origin's resource (the JWT's audience).

        Built here rather than completed after DOT's save, so that each token is one
        INSERT (tests/oauth/test_token_queries.py); the fields are DOT's own.
        """
        id_token = token.get("id_token")
        access_token = AccessToken(
            user=request.user,
            scope=token["scope"],
            expires=expires,
            id_token=self._load_id_token(id_token) if id_token else None,
            application=request.client,
            source_refresh_token=source_refresh_token,
            # Whatever the client sent; DOT checks it at userinfo through `serves_this_origin`.
            resource=this_origin_resources(),
            organization_id=request.organization_id,
        )
        self._set_token_value(access_token, token["access_token"])
        access_token.save()
        request.operator_access_token_id = access_token.pk
        return access_token

    def _create_refresh_token(
        self, request: Any, refresh_token_code: str, access_token: Any, previous_refresh_token: Any
    ) -> RefreshToken:
        """DOT's refresh token (same family on rotation) with the bound organization, this origin's resource
        and the moment of consent, carried from token to token; one INSERT, as in `_create_access_token`.
        """
        if previous_refresh_token is not None:
            # A token from before families has none: its successor starts one.
            family = previous_refresh_token.token_family or uuid.uuid4()
            authorized_at = previous_refresh_token.authorized_at or previous_refresh_token.created
        else:
            family = uuid.uuid4()
            authorized_at = getattr(request, "operator_authorized_at", None) or timezone.now()
        refresh_token = RefreshToken(
            user=request.user,
            application=request.client,
            access_token=access_token,
            token_family=family,
            authorized_at=authorized_at,
            organization_id=request.organization_id,
            resource=this_origin_resources(),
        )
        self._set_token_value(refresh_token, refresh_token_code)
        refresh_token.save()
        request.operator_token_family = refresh_token.token_family
        return refresh_token

    # --- client authentication ---------------------------------------------------------

    def _check_secret(self, provided_secret: str, stored_secret: str) -> bool:
        """A keyed digest in constant time instead of DOT's password hash (oauth/client_secrets.py)."""
        return services.verify_client_secret(presented=provided_secret, stored=stored_secret)

    # --- audit trail -------------------------------------------------------------------

    def save_bearer_token(self, token: dict[str, Any], request: Any, *args: Any, **kwargs: Any) -> None:
        super().save_bearer_token(token, request, *args, **kwargs)
        audit_trail.record_tokens_issued(
            grant_type=request.grant_type,
            user_id=request.user.pk,
            organization_id=getattr(request, "organization_id", None),
            application=request.client,
            scopes=list(request.scopes or []),
        )

    def revoke_token(self, token: str, token_type_hint: str | None, request: Any, *args: Any, **kwargs: Any) -> None:
        """A refresh token, live or rotated, or an access token ends its whole connection (`end_revoked_connection`).

        DOT alone revokes one live refresh-token row and none that a rotation had
        already revoked, so a rotated token stayed answered within its grace
        window. A token of no connection (an access token without a refresh
        token) is DOT's to delete. Whatever the hint: a token is looked up as
        both types, as DOT does.
        """
        client = request.client
        if getattr(client, "pk", None) is not None and end_revoked_connection(token, client=client):
            return
        audit_trail.record_token_revocation(token=token, application=client)
        super().revoke_token(token, token_type_hint, request, *args, **kwargs)

    # --- OpenID Connect --------------------------------------------------------------

    def get_additional_claims(self, request: Any) -> dict[str, Any]:
        """Userinfo / ID-token claims beyond `sub`; DOT filters them by scope (email, profile)."""
        user = request.user
        return {
            "email": user.email,
            "name": user.get_full_name() or user.email,
            "given_name": user.first_name,
            "family_name": user.last_name,
            "preferred_username": user.get_username(),
        }
