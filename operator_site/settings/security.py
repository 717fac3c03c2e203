"""Security headers, cookies, trusted proxies and CORS (`manage.py check --deploy`)."""

from operator_site.settings import env
from operator_site.settings.origin import BASE_URL, BASE_URL_IS_HTTPS

X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
# The OAuth pages send no-referrer instead (oauth/views.py): their URLs carry the authorization request.
SECURE_REFERRER_POLICY = "same-origin"
# Content-Security-Policy of every response but the MCP endpoints' (operator_core/page_security.py),
# in the name and shape of Django 6.0's setting. Scripts and styles are files under /static/ only:
# no inline script or style, no eval. The consent page adds its client's origin to form-action,
# because CSP checks the redirect that follows a form's POST too. docs/development/decisions.md,
# "Browser pages", says why each directive is there.
SECURE_CSP = {
    "default-src": ["'none'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "img-src": ["'self'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
    "base-uri": ["'none'"],
}
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_SECURE = BASE_URL_IS_HTTPS
CSRF_COOKIE_SECURE = BASE_URL_IS_HTTPS
CSRF_TRUSTED_ORIGINS = [BASE_URL]
SECURE_SSL_REDIRECT = env.env_bool("DJANGO_SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = env.env_int("DJANGO_SECURE_HSTS_SECONDS", 31536000 if BASE_URL_IS_HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = BASE_URL_IS_HTTPS
SECURE_HSTS_PRELOAD = BASE_URL_IS_HTTPS
# Number of reverse proxies in front of the service whose X-Forwarded-* we trust (0: none).
OPERATOR_TRUSTED_PROXIES = env.env_int("OPERATOR_TRUSTED_PROXIES", 0)
# The addresses or networks the proxy connects from: forwarded headers from any other peer,
# a client reaching the app server directly, are ignored (docs/deploy.md#behind-a-tls-proxy).
OPERATOR_PROXY_ADDRESSES = env.env_networks("OPERATOR_PROXY_ADDRESSES", ["127.0.0.1", "::1"])
if OPERATOR_TRUSTED_PROXIES:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# CORS (never with credentials) covers what browser-based MCP clients fetch
# cross-origin: the MCP endpoints, discovery documents, and the OAuth endpoints
# a client calls itself. The authorize page is a top-level navigation: no CORS.
CORS_URLS_REGEX = (
    r"^/(api/mcp/|\.well-known/|api/auth/\.well-known/"
    r"|api/auth/(oauth2/(register|token|revoke|userinfo)|jwks)$)"
)
CORS_ALLOW_ALL_ORIGINS = True
CORS_ALLOW_CREDENTIALS = False
CORS_ALLOW_HEADERS = [
    "authorization",
    "content-type",
    "accept",
    "mcp-method",
    "mcp-name",
    "mcp-protocol-version",
    "last-event-id",
]
CORS_EXPOSE_HEADERS = ["WWW-Authenticate"]
CORS_ALLOW_METHODS = ["GET", "POST", "DELETE", "OPTIONS"]
