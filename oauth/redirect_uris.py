"""The redirect-URI policy of the authorization server (docs/authentication.md#redirect-uris).

Allowed, for every client: `https` URLs; `http` only on a loopback host (any
port, RFC 8252 §7.3); private-use URI schemes (RFC 8252 §7.1), with neither
`application_type: native` nor a reverse domain name required, since PKCE S256
protects them (RFC 8252 §8.1). Nothing else: no fragments, no credentials in
the authority, no scheme a browser or the OS would run or render itself
(`javascript:`, `data:`, `file:`), no whitespace or control characters. Why:
docs/development/decisions.md#registration.
"""

import unicodedata
from urllib.parse import urlsplit

APPLICATION_TYPE_WEB = "web"
APPLICATION_TYPE_NATIVE = "native"
APPLICATION_TYPES = (APPLICATION_TYPE_WEB, APPLICATION_TYPE_NATIVE)

_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
# Schemes a browser or OS would run or render instead of handing to an app.
_FORBIDDEN_SCHEMES = frozenset({"javascript", "data", "file", "blob", "about", "vbscript", "ftp", "ws", "wss"})


class RedirectUriRejected(ValueError):
    """The URI breaks the policy; the message says why, for `invalid_redirect_uri`."""


def is_loopback_host(host: str | None) -> bool:
    """The loopback hosts DOT matches on any port (RFC 8252 §7.3; `localhost` by ALLOW_LOCALHOST_LOOPBACK)."""
    return host in _LOOPBACK_HOSTS


def check_redirect_uri(uri: str) -> None:
    """Raise RedirectUriRejected unless `uri` may be registered as a redirect URI."""
    # RFC 3986 §2 has no place for either; DOT also stores the URIs space-separated,
    # so a space would turn one registered URI into two.
    if any(char.isspace() or unicodedata.category(char) == "Cc" for char in uri):
        raise RedirectUriRejected(f"{uri!r} contains whitespace or a control character")
    try:
        parts = urlsplit(uri)
    except ValueError:
        raise RedirectUriRejected(f"{uri!r} is not a valid URI") from None
    scheme = parts.scheme.lower()
    if not scheme:
        raise RedirectUriRejected(f"{uri!r} is not an absolute URI")
    if "#" in uri:
        raise RedirectUriRejected(f"{uri!r} has a fragment (RFC 6749 §3.1.2)")
    if "@" in parts.netloc:
        raise RedirectUriRejected(f"{uri!r} carries credentials in its authority")
    if scheme == "https":
        if not parts.hostname:
            raise RedirectUriRejected(f"{uri!r} has no host")
        return
    if scheme == "http":
        if is_loopback_host(parts.hostname):
            return
        raise RedirectUriRejected(f"{uri!r}: plain http is allowed only on a loopback host (127.0.0.1, [::1])")
    if scheme in _FORBIDDEN_SCHEMES:
        raise RedirectUriRejected(f"{uri!r}: the {scheme} scheme is not allowed")


def private_use_schemes(uris: list[str]) -> list[str]:
    """The non-http(s) schemes among `uris`, lower-cased, in order, without repeats."""
    schemes: list[str] = []
    for uri in uris:
        scheme = urlsplit(uri).scheme.lower()
        if scheme and scheme not in ("http", "https") and scheme not in schemes:
            schemes.append(scheme)
    return schemes
