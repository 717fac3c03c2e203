"""Discovery documents of the authorization server: RFC 8414, OpenID Connect Discovery, RFC 9728, the LTI key set.

Each is DOT's view with our changes to its JSON; the issuer is fixed by
settings, so every path of one document serves the same bytes.
"""

import json
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import View
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.views import (
    ConnectDiscoveryInfoView,
    OAuthProtectedResourceMetadataView,
    OAuthServerMetadataView,
)

from oauth.id_jag_grant import ID_JAG_GRANT_PROFILE
from oauth.models import JWT_BEARER_GRANT_TYPE
from oauth.registration import REGISTRATION_CLOSED
from oauth.selectors import lti_key_set
from operator_core.conf import operator_settings
from operator_core.scopes import SCOPE_OPERATOR_READ, SCOPE_OPERATOR_WRITE


def _json(data: dict[str, Any]) -> JsonResponse:
    # CORS comes from the middleware, like everywhere else (settings.CORS_URLS_REGEX).
    response = JsonResponse(data)
    response["Cache-Control"] = "public, max-age=3600"
    return response


class ServerMetadataView(OAuthServerMetadataView):
    """RFC 8414 metadata; the issuer is fixed by settings, so every path serves the same bytes."""

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        data = json.loads(super().get(request, *args, **kwargs).content)
        data["userinfo_endpoint"] = oauth2_settings.OIDC_USERINFO_ENDPOINT
        if operator_settings().client_registration == REGISTRATION_CLOSED:
            data.pop("registration_endpoint", None)
        data.pop("introspection_endpoint", None)
        data.pop("introspection_endpoint_auth_methods_supported", None)
        # Always, whether or not a provider is trusted yet: the same bytes for everyone, and
        # whether an organization trusts one is not the world's to read (docs/authentication.md).
        data["grant_types_supported"] = [*data.get("grant_types_supported", []), JWT_BEARER_GRANT_TYPE]
        data["authorization_grant_profiles_supported"] = [ID_JAG_GRANT_PROFILE]
        return _json(data)


class OpenIDConfigurationView(ConnectDiscoveryInfoView):
    """OpenID Provider metadata, completed with the RFC 8414 fields MCP clients look for."""

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        data = json.loads(super().get(request, *args, **kwargs).content)
        oauth_metadata = json.loads(ServerMetadataView.as_view()(request).content)
        for key in (
            "grant_types_supported",
            "authorization_grant_profiles_supported",
            "registration_endpoint",
            "revocation_endpoint",
            "revocation_endpoint_auth_methods_supported",
        ):
            if key in oauth_metadata:
                data[key] = oauth_metadata[key]
        # ID tokens are signed with the issuer's RSA key only; no client gets HS256.
        data["id_token_signing_alg_values_supported"] = ["RS256"]
        data["scopes_supported"] = sorted(data["scopes_supported"])
        data["claims_supported"] = sorted(data["claims_supported"])
        return _json(data)


class ProtectedResourceMetadataView(OAuthProtectedResourceMetadataView):
    """RFC 9728 metadata of the operator endpoint: only the two operator scopes are advertised."""

    def get_scopes_supported(self) -> list[str]:
        return [SCOPE_OPERATOR_READ, SCOPE_OPERATOR_WRITE]

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return _json(json.loads(super().get(request, *args, **kwargs).content))


class LtiJwksView(View):
    """The LTI integration's public keys: a key set of its own, never the OAuth issuer's (docs/authentication.md)."""

    def get(self, request: HttpRequest) -> HttpResponse:
        return _json(lti_key_set())
