"""Writes of the authorization server beyond what DOT stores itself.

- the sign-in rate limit (counters in Django's cache, shared by every worker
  when REDIS_URL is set);
- dynamic client registration with our client rules (RFC 7591) and the
  registration policy (`OPERATOR["client_registration"]`, `registration_redirect_hosts`),
  and the purge of registered clients never used;
- the ledger of exchanged authorization codes, so that a replayed code revokes
  every token it issued (OAuth 2.1 §4.1.3);
- the check of a client secret against its stored digest (oauth/client_secrets.py).
"""

import hashlib
import json
import re
import uuid
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.hashers import check_password
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.crypto import constant_time_compare
from oauth2_provider.models import get_access_token_model, get_refresh_token_model
from oauth2_provider.views.dynamic_client_registration import _build_application_kwargs

from accounts.emails import normalized_email
from oauth.audit_trail import record_code_replay
from oauth.client_names import UndisplayableName, require_displayable_names
from oauth.client_secrets import client_secret_digest, digest_matches, is_client_secret_digest, is_password_hash
from oauth.metadata_bounds import MetadataOverBound, require_metadata_within_bounds
from oauth.models import JWT_BEARER_GRANT_TYPE, Application, ClientPolicy, RedeemedCode, code_digest
from oauth.redirect_uris import APPLICATION_TYPE_WEB, APPLICATION_TYPES, RedirectUriRejected, check_redirect_uri
from operator_core.conf import operator_settings
from operator_core.errors import RateLimited
from operator_core.rate_limits import FixedWindowLimiter, OnOutage
from operator_core.telemetry import metrics

SIGN_IN_RATE_GROUP = "oauth.sign-in"
SIGN_IN_WINDOW_SECONDS = 60


def sign_in_email_key(email: str) -> str:
    """The rate-limit key of an email: digest of its normal form (accounts.emails): no address in the cache."""
    return hashlib.sha256(normalized_email(email).encode("utf-8")).hexdigest()


def count_sign_in_attempt(*, client_address: str, email: str) -> None:
    """Count one sign-in attempt against the client address and the email; raise RateLimited past the limit.

    Raises `TemporarilyUnavailable` while Redis does not answer (docs/operations.md#outages).

    Both counters always advance, so hammering one account from many addresses,
    or many accounts from one address, is limited either way (docs/development/decisions.md#limits).
    The email is hashed into the cache key: no address is stored in clear.
    """
    limit = operator_settings().sign_in_attempts_per_minute
    # Fails closed while Redis is away: per-process counts would multiply the guesses allowed
    # by the number of workers, exactly when an attacker may have caused the outage.
    per_ip = FixedWindowLimiter(
        group=f"{SIGN_IN_RATE_GROUP}.ip", limit=limit, period_seconds=SIGN_IN_WINDOW_SECONDS, on_outage=OnOutage.REFUSE
    )
    per_email = FixedWindowLimiter(
        group=f"{SIGN_IN_RATE_GROUP}.email",
        limit=limit,
        period_seconds=SIGN_IN_WINDOW_SECONDS,
        on_outage=OnOutage.REFUSE,
    )
    counts = [per_ip.count(client_address), per_email.count(sign_in_email_key(email))]
    waits = [counted.retry_after_seconds for counted in counts if counted.exceeded]
    if waits:
        metrics.count_limit_refusal(SIGN_IN_RATE_GROUP)
        raise RateLimited("Too many sign-in attempts. Wait a minute and try again.", retry_after_seconds=max(waits))


def record_redeemed_code(
    *, code: str, application: Application, token_family: uuid.UUID | None, access_token_id: int | None
) -> RedeemedCode:
    """Remember an exchanged code until the tokens it issued could no longer be refreshed."""
    lifetime = operator_settings().refresh_token_lifetime_seconds
    return RedeemedCode.objects.create(
        code_checksum=code_digest(code),
        application=application,
        token_family=token_family,
        access_token_id=access_token_id,
        expires=timezone.now() + timedelta(seconds=lifetime),
    )


@transaction.atomic
def revoke_tokens_of_replayed_code(*, code: str, application: Application) -> bool:
    """Revoke every token issued from `code` if it was already exchanged; True when it was.

    Refresh tokens of the family (including later rotations) are revoked and
    their access-token rows deleted. Already-issued JWTs stay cryptographically
    valid until they expire (at most one hour, docs/authentication.md#revocation).
    """
    redeemed = RedeemedCode.objects.filter(code_checksum=code_digest(code), application=application).first()
    if redeemed is None:
        return False
    if redeemed.token_family:
        get_refresh_token_model().revoke_family(redeemed.token_family)
    if redeemed.access_token_id:
        get_access_token_model().objects.filter(pk=redeemed.access_token_id).delete()
    record_code_replay(application=application, token_family=redeemed.token_family)
    return True


def verify_client_secret(*, presented: str, stored: str) -> bool:
    """Whether `presented` is the client secret stored as `stored`; constant time for a digest.

    A secret still stored under an older scheme (a Django password hash, as DOT
    stored them, or a digest under a key now in `SECRET_KEY_FALLBACKS`) is moved
    to the current digest on its first successful check: the slow check is paid
    once per client, never again. A secret stored in clear (DOT's
    `hash_client_secret=False`) is compared as DOT does.
    """
    if is_client_secret_digest(stored):
        if digest_matches(presented, stored):
            return True
        for old_key in settings.SECRET_KEY_FALLBACKS:
            if digest_matches(presented, stored, key=old_key):
                _store_current_digest(stored=stored, secret=presented)
                return True
        return False
    if is_password_hash(stored):
        if not check_password(presented, stored):
            return False
        _store_current_digest(stored=stored, secret=presented)
        return True
    return constant_time_compare(presented, stored)


def _store_current_digest(*, stored: str, secret: str) -> None:
    # Found by the old stored value: a salted password hash names one client, and
    # another row with the same value would hold the same secret anyway.
    Application.objects.filter(client_secret=stored).update(client_secret=client_secret_digest(secret))


SUPPORTED_GRANT_TYPES = frozenset({"authorization_code", "refresh_token", JWT_BEARER_GRANT_TYPE})
_CONFIDENTIAL_ONLY = (
    f"{JWT_BEARER_GRANT_TYPE} is for confidential clients only: register token_endpoint_auth_method "
    "client_secret_basic or client_secret_post"
)


class ClientMetadataError(Exception):
    """A registration refused with an RFC 7591 §3.2.2 error code and a readable description."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


# RFC 7591 §2 (and OpenID Connect Dynamic Client Registration for application_type):
# the type of each member we know. Others are ignored, but must still be clean text.
_STRING_MEMBERS = (
    "client_name",
    "client_uri",
    "logo_uri",
    "tos_uri",
    "policy_uri",
    "jwks_uri",
    "scope",
    "software_id",
    "software_version",
    "software_statement",
    "token_endpoint_auth_method",
    "application_type",
)
_STRING_ARRAY_MEMBERS = ("redirect_uris", "grant_types", "response_types", "contacts")
_OBJECT_MEMBERS = ("jwks",)
# C0, DEL and C1: never part of a name shown on the consent page, a URI or a scope.
_CONTROL_CHARACTER = re.compile("[\x00-\x1f\x7f-\x9f]")


def _require_member_types(data: dict[str, Any]) -> None:
    """Each known member has its RFC 7591 type: a name is a string, never `{"a": 1}` shown as its repr."""
    for name in _STRING_MEMBERS:
        if name in data and not isinstance(data[name], str):
            raise ClientMetadataError("invalid_client_metadata", f"{name} must be a string")
    for name in _STRING_ARRAY_MEMBERS:
        if name in data and not (isinstance(data[name], list) and all(isinstance(item, str) for item in data[name])):
            error = "invalid_redirect_uri" if name == "redirect_uris" else "invalid_client_metadata"
            raise ClientMetadataError(error, f"{name} must be an array of strings")
    for name in _OBJECT_MEMBERS:
        if name in data and not isinstance(data[name], dict):
            raise ClientMetadataError("invalid_client_metadata", f"{name} must be an object")


def _require_no_control_characters(data: dict[str, Any]) -> None:
    """No control character in any member name or string value, however deep (stored, displayed, logged)."""
    pending: list[Any] = [data]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            pending.extend(value.keys())
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
        elif isinstance(value, str) and _CONTROL_CHARACTER.search(value):
            raise ClientMetadataError("invalid_client_metadata", "client metadata must not contain control characters")


def _check_client_metadata(data: dict[str, Any]) -> str:
    _require_member_types(data)
    application_type = data.get("application_type", APPLICATION_TYPE_WEB)
    if not isinstance(application_type, str) or application_type not in APPLICATION_TYPES:
        raise ClientMetadataError("invalid_client_metadata", "application_type must be 'web' or 'native'")
    grant_types = data.get("grant_types", ["authorization_code"])
    if not isinstance(grant_types, list) or not all(
        isinstance(grant, str) and grant in SUPPORTED_GRANT_TYPES for grant in grant_types
    ):
        raise ClientMetadataError(
            "invalid_client_metadata",
            f"grant_types may contain only 'authorization_code', 'refresh_token' and '{JWT_BEARER_GRANT_TYPE}'",
        )
    if JWT_BEARER_GRANT_TYPE in grant_types and data.get("token_endpoint_auth_method") == "none":
        raise ClientMetadataError("invalid_client_metadata", _CONFIDENTIAL_ONLY)
    if jwt_bearer_only(data):
        _check_jwt_bearer_only_metadata(data)
    else:
        _check_redirect_based_metadata(data)
    scope = data.get("scope")
    if scope is not None and not isinstance(scope, str):
        raise ClientMetadataError("invalid_client_metadata", "scope must be a space-separated string")
    try:
        require_displayable_names(data)
    except UndisplayableName as undisplayable:
        raise ClientMetadataError("invalid_client_metadata", str(undisplayable)) from None
    _require_no_control_characters(data)
    return application_type


def jwt_bearer_only(data: dict[str, Any]) -> bool:
    """Registered for the JWT bearer grant alone: a client that never uses a redirect-based flow."""
    grant_types = data.get("grant_types", ["authorization_code"])
    return JWT_BEARER_GRANT_TYPE in grant_types and "authorization_code" not in grant_types


def _check_jwt_bearer_only_metadata(data: dict[str, Any]) -> None:
    """RFC 7591 §2: redirect URIs and response types serve redirect-based flows, which this client has none of."""
    if "refresh_token" in data["grant_types"]:
        raise ClientMetadataError(
            "invalid_client_metadata",
            f"no refresh token is issued for {JWT_BEARER_GRANT_TYPE}: register grant_types ['{JWT_BEARER_GRANT_TYPE}']",
        )
    if data.get("redirect_uris"):
        raise ClientMetadataError(
            "invalid_redirect_uri",
            f"a client registered for {JWT_BEARER_GRANT_TYPE} alone uses no redirect URI: omit redirect_uris",
        )
    if data.get("response_types"):
        raise ClientMetadataError(
            "invalid_client_metadata",
            f"a client registered for {JWT_BEARER_GRANT_TYPE} alone has no response type: omit response_types",
        )


def _check_redirect_based_metadata(data: dict[str, Any]) -> None:
    if data.get("response_types", ["code"]) != ["code"]:
        raise ClientMetadataError("invalid_client_metadata", "response_types must be ['code']")
    redirect_uris = data.get("redirect_uris")
    if not isinstance(redirect_uris, list) or not redirect_uris:
        raise ClientMetadataError("invalid_redirect_uri", "redirect_uris must be a non-empty array of URIs")
    for uri in redirect_uris:
        if not isinstance(uri, str):
            raise ClientMetadataError("invalid_redirect_uri", "each redirect URI must be a string")
        try:
            check_redirect_uri(uri)
        except RedirectUriRejected as rejected:
            raise ClientMetadataError("invalid_redirect_uri", str(rejected)) from None


REGISTRATION_CLOSED = "closed"
# RFC 7591 names no error for a server that takes no registrations; RFC 6749's fits.
ERROR_REGISTRATION_CLOSED = "access_denied"


class RegistrationClosed(ClientMetadataError):
    """`OPERATOR["client_registration"]` is "closed": no client may register (HTTP 403)."""

    def __init__(self) -> None:
        super().__init__(ERROR_REGISTRATION_CLOSED, "This server does not accept client registrations.")


def _require_allowed_redirect_hosts(redirect_uris: list[str]) -> None:
    allowed_hosts = operator_settings().registration_redirect_hosts
    if not allowed_hosts:
        return
    for uri in redirect_uris:
        # A private-use scheme (com.example.app:/callback) has no host, so it is never listed.
        host = (urlsplit(uri).hostname or "").lower()
        if host not in allowed_hosts:
            raise ClientMetadataError(
                "invalid_redirect_uri", f"Only redirect URIs on {', '.join(allowed_hosts)} may be registered here."
            )


@transaction.atomic
def register_client(data: dict[str, Any]) -> dict[str, Any]:
    """Create an Application from RFC 7591 client metadata; return the registration response.

    Public clients register with `token_endpoint_auth_method: none`; any other
    supported method makes a confidential client whose secret appears only in
    this response (it is stored as a keyed digest). Raises ClientMetadataError
    (`invalid_client_metadata` for metadata over a bound of oauth/metadata_bounds.py,
    checked first), and RegistrationClosed while registration is closed.
    """
    if operator_settings().client_registration == REGISTRATION_CLOSED:
        raise RegistrationClosed()
    # A null member counts as absent: RFC 7591 §2 makes every member optional.
    data = {name: value for name, value in data.items() if value is not None}
    try:
        require_metadata_within_bounds(data)
    except MetadataOverBound as over:
        raise ClientMetadataError("invalid_client_metadata", str(over)) from None
    application_type = _check_client_metadata(data)
    only_jwt_bearer = jwt_bearer_only(data)
    _require_allowed_redirect_hosts(data.get("redirect_uris", []))
    grant_types = data.get("grant_types", ["authorization_code"])
    # DOT's registration maps one grant per client and knows no JWT bearer grant: it is given
    # the redirect-based grants, or for a JWT-bearer-only client the one of its grants that
    # needs no redirect URI, replaced at once by the grant the client registered.
    dot_grants = ["client_credentials"] if only_jwt_bearer else [g for g in grant_types if g != JWT_BEARER_GRANT_TYPE]
    app_kwargs, error = _build_application_kwargs({**data, "grant_types": dot_grants})
    if error:
        body = json.loads(error.content)
        raise ClientMetadataError(body["error"], body.get("error_description", ""))
    if only_jwt_bearer:
        app_kwargs["authorization_grant_type"] = Application.GRANT_JWT_BEARER
    application = Application(
        registration_source=Application.RegistrationSource.DCR, application_type=application_type, **app_kwargs
    )
    raw_secret = application.client_secret if application.client_type == Application.CLIENT_CONFIDENTIAL else None
    try:
        application.full_clean()
    except ValidationError as invalid:
        field = "invalid_redirect_uri" if "redirect_uris" in getattr(invalid, "message_dict", {}) else None
        raise ClientMetadataError(field or "invalid_client_metadata", "; ".join(invalid.messages)) from None
    application.save()
    response: dict[str, Any] = {
        "client_id": application.client_id,
        "client_id_issued_at": int(application.created.timestamp()),
        "client_name": application.name,
        "redirect_uris": application.redirect_uris.split(),
        "grant_types": _registered_grant_types(grant_types, only_jwt_bearer=only_jwt_bearer),
        "response_types": [] if only_jwt_bearer else ["code"],
        "application_type": application.application_type,
        "token_endpoint_auth_method": data.get("token_endpoint_auth_method", "client_secret_basic"),
    }
    if isinstance(data.get("scope"), str):
        response["scope"] = data["scope"]
    if raw_secret:
        response["client_secret"] = raw_secret
        response["client_secret_expires_at"] = 0
    return response


def _registered_grant_types(requested: list[str], *, only_jwt_bearer: bool) -> list[str]:
    """What the client may use: a redirect-based client always refreshes, and may present ID-JAGs when it asked to."""
    if only_jwt_bearer:
        return [JWT_BEARER_GRANT_TYPE]
    jwt_bearer = [JWT_BEARER_GRANT_TYPE] if JWT_BEARER_GRANT_TYPE in requested else []
    return ["authorization_code", "refresh_token", *jwt_bearer]


def purge_unused_clients(*, now: datetime) -> int:
    """Delete clients that anyone could add and that never obtained a token within the retention; return how many.

    The retention is `OPERATOR["unused_client_retention_hours"]` (24): a client
    registers, or has its Client ID Metadata Document fetched, right before its
    first authorization, and both are open to anyone before any sign-in, so
    unused clients are what a stranger can pile up (docs/limits.md#registered-clients).
    A metadata-document client that comes back is fetched again. Kept: a client
    that ever obtained a token, one created by staff, and one an organization's
    client policy lists (deleting it would silently take it off the list). A
    client that got as far as a grant but never exchanged it goes too, with its grant.
    """
    cutoff = now - timedelta(hours=operator_settings().unused_client_retention_hours)
    listed = ClientPolicy.applications.through.objects.values("application_id")
    unused = Application.objects.filter(
        registration_source__in=(Application.RegistrationSource.DCR, Application.RegistrationSource.CIMD),
        last_used_at__isnull=True,
        created__lt=cutoff,
    ).exclude(pk__in=listed)
    _, deleted_by_model = unused.delete()
    return deleted_by_model.get(Application._meta.label, 0)


def purge_redeemed_codes(*, now: datetime) -> int:
    """Forget exchanged codes whose tokens can no longer be refreshed; return how many went."""
    deleted, _ = RedeemedCode.objects.filter(expires__lt=now).delete()
    return deleted
