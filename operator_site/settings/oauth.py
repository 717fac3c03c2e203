"""django-oauth-toolkit: swapped models and `OAUTH2_PROVIDER`, computed from the origin and our lifetimes.

docs/development/decisions.md ("OAuth") says why each non-default value is set.
"""

from operator_core.scopes import SCOPE_DESCRIPTIONS, SCOPE_OPERATOR_READ
from operator_site.settings.keys import OPERATOR_INACTIVE_SIGNING_KEYS, OPERATOR_SIGNING_KEY
from operator_site.settings.origin import ISSUER, OPERATOR_ENDPOINT_URL
from operator_site.settings.service import ACCESS_TOKEN_LIFETIME_SECONDS, REFRESH_TOKEN_LIFETIME_SECONDS

# Swapped from the first migration, all five together.
OAUTH2_PROVIDER_APPLICATION_MODEL = "oauth.Application"
OAUTH2_PROVIDER_GRANT_MODEL = "oauth.Grant"
OAUTH2_PROVIDER_ACCESS_TOKEN_MODEL = "oauth.AccessToken"
OAUTH2_PROVIDER_REFRESH_TOKEN_MODEL = "oauth.RefreshToken"
OAUTH2_PROVIDER_ID_TOKEN_MODEL = "oauth.IDToken"

OAUTH2_PROVIDER = {
    "SCOPES": SCOPE_DESCRIPTIONS,
    "DEFAULT_SCOPES": [SCOPE_OPERATOR_READ],
    "ACCESS_TOKEN_EXPIRE_SECONDS": ACCESS_TOKEN_LIFETIME_SECONDS,
    "ID_TOKEN_EXPIRE_SECONDS": ACCESS_TOKEN_LIFETIME_SECONDS,
    "REFRESH_TOKEN_EXPIRE_SECONDS": REFRESH_TOKEN_LIFETIME_SECONDS,
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    "ACCESS_TOKEN_GENERATOR": "oauth.tokens.generate_access_token",
    "REFRESH_TOKEN_GENERATOR": "oauthlib.oauth2.rfc6749.tokens.random_token_generator",
    "OAUTH2_VALIDATOR_CLASS": "oauth.validators.OperatorOAuth2Validator",
    "PKCE_REQUIRED": True,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    # REFRESH_TOKEN_GRACE_PERIOD_SECONDS stays DOT's 0: DOT refuses it with hashed
    # storage (check oauth2_provider.E001). Ours is OPERATOR["refresh_token_grace_seconds"].
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "COMPLIANT_BCP_RFC9700_REFRESH_TOKEN": True,
    "COMPLIANT_BCP_RFC9700_REDIRECT_URI_MATCHING": True,
    "COMPLIANT_BCP_RFC9700_PKCE_REQUIRED": True,
    # RFC 9700 §4: only SHA-256 checksums of access (JWT) and refresh tokens are stored.
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "OIDC_ENABLED": True,
    "OIDC_RSA_PRIVATE_KEY": OPERATOR_SIGNING_KEY,
    "OIDC_RSA_PRIVATE_KEYS_INACTIVE": OPERATOR_INACTIVE_SIGNING_KEYS,
    "OIDC_ISS_ENDPOINT": ISSUER,
    "OIDC_USERINFO_ENDPOINT": f"{ISSUER}/oauth2/userinfo",
    "OIDC_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none", "client_secret_basic", "client_secret_post"],
    "OIDC_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none", "client_secret_basic", "client_secret_post"],
    "OAUTH2_PROTECTED_RESOURCE_IDENTIFIER": OPERATOR_ENDPOINT_URL,
    "OAUTH2_PROTECTED_RESOURCE_AUTHORIZATION_SERVERS": [ISSUER],
    "OAUTH2_PROTECTED_RESOURCE_BEARER_METHODS_SUPPORTED": ["header"],
    "OAUTH2_PROTECTED_RESOURCE_NAME": "Service Operator",
    # Access-token rows carry this origin's operator endpoint as `resource`; userinfo
    # accepts them here and nowhere else (DOT's prefix match would refuse them everywhere).
    "RESOURCE_SERVER_TOKEN_RESOURCE_VALIDATOR": "oauth.validators.serves_this_origin",
    "ALLOW_LOCALHOST_LOOPBACK": True,
    # Only https by default; each Application widens this to loopback http and a
    # native client's own private-use schemes, after oauth/redirect_uris.py checked them.
    "ALLOWED_REDIRECT_URI_SCHEMES": ["https"],
    "DCR_ENABLED": True,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    "CIMD_ENABLED": True,
    # DOT's SSRF-safe fetcher, plus the reason of a failure for the error page.
    "CIMD_METADATA_FETCHER": "oauth.cimd.ExplainingMetadataFetcher",
    "REQUEST_APPROVAL_PROMPT": "force",
}
