"""Every route of the authorization server, at the exact paths of
docs/authentication.md (no trailing slash).

Two namespaces: DOT's views keep DOT's URL names under `oauth2_provider`,
because DOT's metadata views reverse those names to build endpoint URLs;
our own pages live under `oauth` (LOGIN_URL is `oauth:sign-in`). DOT's
application-management, introspection, device and logout views are not routed.
"""

from django.urls import include, path
from oauth2_provider import views as dot_views

from oauth import discovery, endpoint_views, sign_in_views, views

provider_patterns = [
    # RFC 8414: one document at three paths
    path(
        ".well-known/oauth-authorization-server", discovery.ServerMetadataView.as_view(), name="oauth-server-metadata"
    ),
    path(".well-known/oauth-authorization-server/api/auth", discovery.ServerMetadataView.as_view()),
    path("api/auth/.well-known/oauth-authorization-server", discovery.ServerMetadataView.as_view()),
    # OpenID Connect Discovery: one document at three paths
    path(
        ".well-known/openid-configuration",
        discovery.OpenIDConfigurationView.as_view(),
        name="oidc-connect-discovery-info",
    ),
    path(".well-known/openid-configuration/api/auth", discovery.OpenIDConfigurationView.as_view()),
    path("api/auth/.well-known/openid-configuration", discovery.OpenIDConfigurationView.as_view()),
    # RFC 9728: the operator endpoint's metadata (the path named by its 401 challenge) and the root form
    path(
        ".well-known/oauth-protected-resource/api/mcp/operator",
        discovery.ProtectedResourceMetadataView.as_view(),
        name="oauth-resource-metadata-path",
    ),
    path(
        ".well-known/oauth-protected-resource",
        discovery.ProtectedResourceMetadataView.as_view(),
        name="oauth-resource-metadata",
    ),
    path("api/auth/oauth2/register", endpoint_views.RegisterView.as_view(), name="dcr-register"),
    path("api/auth/oauth2/authorize", views.AuthorizeView.as_view(), name="authorize"),
    path("api/auth/oauth2/token", endpoint_views.TokenView.as_view(), name="token"),
    path("api/auth/oauth2/revoke", endpoint_views.RevokeTokenView.as_view(), name="revoke-token"),
    path("api/auth/oauth2/userinfo", dot_views.UserInfoView.as_view(), name="user-info"),
    path("api/auth/jwks", dot_views.JwksInfoView.as_view(), name="jwks-info"),
]

site_patterns = [
    path("api/auth/sign-in", sign_in_views.SignInView.as_view(), name="sign-in"),
    path("api/auth/sso/callback", sign_in_views.ProviderCallbackView.as_view(), name="provider-callback"),
    # LTI key set: a separate key, never the issuer's
    path(".well-known/jwks.json", discovery.LtiJwksView.as_view(), name="lti-jwks"),
]

urlpatterns = [
    path("", include((provider_patterns, "oauth2_provider"))),
    path("", include((site_patterns, "oauth"))),
]
