"""Dynamic client registration (RFC 7591) with our client rules and the registration policy.

`register_client` checks the metadata (member types, no control characters,
displayable names, bounds, redirect URIs, grant types), applies the
registration policy (`OPERATOR["client_registration"]`,
`OPERATOR["registration_redirect_hosts"]`) and stores the client through DOT's
own mapping of RFC 7591 metadata to `Application` fields. Registered clients
that are never used are purged by `oauth.services.purge_unused_clients`.
"""

import json
import re
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.db import transaction
from oauth2_provider.views.dynamic_client_registration import _build_application_kwargs

from oauth.client_names import UndisplayableName, require_displayable_names
from oauth.metadata_bounds import MetadataOverBound, require_metadata_within_bounds
from oauth.models import JWT_BEARER_GRANT_TYPE, Application
from oauth.redirect_uris import APPLICATION_TYPE_WEB, APPLICATION_TYPES, RedirectUriRejected, check_redirect_uri
from operator_core.conf import operator_settings

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
