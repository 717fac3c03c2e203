"""The redirect-URI policy of the authorization server (docs/development/decisions.md#registration).

Allowed: `https` URLs; `http` only on a loopback host (any port, RFC 8252 §7.3);
private-use URI schemes (`com.example.app:/callback`, RFC 8252 §7.1) only for
native clients. Nothing else: no plain `http` to a named host, no fragments, no
credentials in the authority, no `javascript:`/`data:` and friends.
"""

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


def check_redirect_uri(uri: str, *, application_type: str) -> None:
    """Raise RedirectUriRejected unless `uri` may be registered for this kind of client."""
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
    if application_type != APPLICATION_TYPE_NATIVE:
        raise RedirectUriRejected(f"{uri!r}: private-use schemes are allowed only for native clients")
    # RFC 8252 §7.1: a reverse domain name with at least one dot, and no authority.
    if "." not in scheme:
        raise RedirectUriRejected(f"{uri!r}: a private-use scheme must be a reverse domain name (com.example.app)")
    if parts.netloc:
        raise RedirectUriRejected(f"{uri!r}: a private-use scheme URI takes the form {scheme}:/path")


def private_use_schemes(uris: list[str]) -> list[str]:
    """The non-http(s) schemes among `uris`, lower-cased, in order, without repeats."""
    schemes: list[str] = []
    for uri in uris:
        scheme = urlsplit(uri).scheme.lower()
        if scheme and scheme not in ("http", "https") and scheme not in schemes:
            schemes.append(scheme)
    return schemes
