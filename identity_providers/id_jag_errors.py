"""Why an ID-JAG was refused: one code for the audit trail, the OAuth error, and a description to act on.

Descriptions name the claim or setting at fault and never quote the assertion
or a value from it (docs/authentication.md#enterprise-managed-authorization).
"""

from enum import StrEnum

from identity_providers.models import IdentityProvider
from operator_core.errors import OperatorError

INVALID_GRANT = "invalid_grant"
INVALID_CLIENT = "invalid_client"
INVALID_SCOPE = "invalid_scope"
INVALID_TARGET = "invalid_target"
# RFC 6749 §5.2: the client authenticated, but may not use this grant.
UNAUTHORIZED_CLIENT = "unauthorized_client"


class IdJagRefusal(StrEnum):
    """The `outcome` of a refused `id_jag_grant` event."""

    MALFORMED = "malformed"
    WRONG_TYPE = "wrong_type"
    WRONG_ALGORITHM = "wrong_algorithm"
    MISSING_CLAIM = "missing_claim"
    UNTRUSTED_ISSUER = "untrusted_issuer"
    AMBIGUOUS_ISSUER = "ambiguous_issuer"
    KEYS_UNAVAILABLE = "keys_unavailable"
    INVALID_SIGNATURE = "invalid_signature"
    WRONG_AUDIENCE = "wrong_audience"
    WRONG_CLIENT = "wrong_client"
    CLIENT_NOT_ALLOWED = "client_not_allowed"
    WRONG_RESOURCE = "wrong_resource"
    EXPIRED = "expired"
    ISSUED_IN_FUTURE = "issued_in_future"
    NOT_YET_VALID = "not_yet_valid"
    LIFETIME_TOO_LONG = "lifetime_too_long"
    REPLAYED = "replayed"
    SCOPE_NOT_GRANTED = "scope_not_granted"
    UNLINKED_SUBJECT = "unlinked_subject"
    EMAIL_CHANGED = "email_changed"
    ACCOUNT_INACTIVE = "account_inactive"
    NO_ROLE = "no_role"
    CLIENT_POLICY = "client_policy"
    PUBLIC_CLIENT = "public_client"


_ERRORS: dict[IdJagRefusal, tuple[str, str]] = {
    IdJagRefusal.MALFORMED: (INVALID_GRANT, "The assertion is not a well-formed ID-JAG (a signed JWT)."),
    IdJagRefusal.WRONG_TYPE: (INVALID_GRANT, "The assertion's JOSE header typ must be oauth-id-jag+jwt."),
    IdJagRefusal.WRONG_ALGORITHM: (
        INVALID_GRANT,
        "The assertion must be signed with an asymmetric algorithm (RS, PS, ES or EdDSA).",
    ),
    IdJagRefusal.MISSING_CLAIM: (INVALID_GRANT, "The ID-JAG lacks a required claim: {detail}."),
    IdJagRefusal.UNTRUSTED_ISSUER: (
        INVALID_GRANT,
        "The ID-JAG's issuer is not trusted for enterprise-managed authorization here. "
        "An administrator of this service configures trusted providers.",
    ),
    IdJagRefusal.AMBIGUOUS_ISSUER: (
        INVALID_GRANT,
        "The ID-JAG's issuer serves several organizations here; its email claim must be in one of their domains.",
    ),
    IdJagRefusal.KEYS_UNAVAILABLE: (
        INVALID_GRANT,
        "The issuer's signing keys could not be fetched from its discovery document's jwks_uri; try again later.",
    ),
    IdJagRefusal.INVALID_SIGNATURE: (
        INVALID_GRANT,
        "The ID-JAG's signature does not verify with any key the issuer publishes.",
    ),
    IdJagRefusal.WRONG_AUDIENCE: (
        INVALID_GRANT,
        "The ID-JAG's aud must be this authorization server's issuer identifier, {detail}.",
    ),
    IdJagRefusal.WRONG_CLIENT: (
        INVALID_GRANT,
        "The ID-JAG's client_id claim is not the client that authenticated this request.",
    ),
    IdJagRefusal.CLIENT_NOT_ALLOWED: (
        UNAUTHORIZED_CLIENT,
        "The identity provider is not trusted to grant access to this client here.",
    ),
    IdJagRefusal.WRONG_RESOURCE: (INVALID_TARGET, "The only resource served here is {detail}."),
    IdJagRefusal.EXPIRED: (INVALID_GRANT, "The ID-JAG has expired; ask the identity provider for a new one."),
    IdJagRefusal.ISSUED_IN_FUTURE: (INVALID_GRANT, "The ID-JAG's iat is in the future; check the provider's clock."),
    IdJagRefusal.NOT_YET_VALID: (INVALID_GRANT, "The ID-JAG's nbf is in the future; check the provider's clock."),
    IdJagRefusal.LIFETIME_TOO_LONG: (
        INVALID_GRANT,
        "The ID-JAG lives longer than {detail} seconds from iat to exp; this server accepts only short-lived ones.",
    ),
    IdJagRefusal.REPLAYED: (
        INVALID_GRANT,
        "This ID-JAG (its jti) was used already; ask the identity provider for a new one.",
    ),
    IdJagRefusal.SCOPE_NOT_GRANTED: (
        INVALID_SCOPE,
        "The requested scope is not among those the ID-JAG grants, or no operator scope remains: {detail}.",
    ),
    IdJagRefusal.UNLINKED_SUBJECT: (
        INVALID_GRANT,
        "The ID-JAG's subject is linked to no account here. The person signs in once through single sign-on, "
        "or an administrator of this service turns on linking by email for the provider.",
    ),
    IdJagRefusal.EMAIL_CHANGED: (
        INVALID_GRANT,
        "The ID-JAG's email no longer matches the linked account here. An administrator of this service updates it.",
    ),
    IdJagRefusal.ACCOUNT_INACTIVE: (INVALID_GRANT, "The person's account here is deactivated."),
    IdJagRefusal.NO_ROLE: (
        INVALID_GRANT,
        "The person is not an admin or member of the organization whose provider issued the ID-JAG.",
    ),
    IdJagRefusal.CLIENT_POLICY: (UNAUTHORIZED_CLIENT, "The organization's client policy does not admit this client."),
    IdJagRefusal.PUBLIC_CLIENT: (
        UNAUTHORIZED_CLIENT,
        "A public client (no secret) may not present an ID-JAG here: register a confidential client "
        "(token_endpoint_auth_method client_secret_basic or client_secret_post) and authenticate with its secret.",
    ),
}


class IdJagRefused(OperatorError):
    """An ID-JAG grant refused: `error` and `description` answer the client, `reason` is audited."""

    http_status = 400

    def __init__(
        self,
        reason: IdJagRefusal,
        *,
        detail: str = "",
        provider: IdentityProvider | None = None,
        person_id: int | None = None,
    ) -> None:
        error, description = _ERRORS[reason]
        super().__init__(description.format(detail=detail))
        self.reason = reason
        self.error = error
        self.description = self.message
        self.provider = provider
        self.person_id = person_id
