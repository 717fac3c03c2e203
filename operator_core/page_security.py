"""Security headers of the browser pages: Content-Security-Policy and a per-view Referrer-Policy.

The policy is the `SECURE_CSP` setting, a mapping of directive to sources, the
name and shape Django 6.0 gives its own CSP middleware; Django 5.2 has none
(docs/development/decisions.md, "Browser pages"). `ContentSecurityPolicyMiddleware`
sets it on every response that has none yet. A view widens one directive of one
response with `allow_sources`; the consent page uses it to let its form's
redirect reach the client (`form_action_source`).

CSP Level 3: https://www.w3.org/TR/CSP3/
"""

import re
from collections.abc import Callable, Iterable, Mapping
from functools import wraps
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase

CSP_HEADER = "Content-Security-Policy"
REFERRER_POLICY_HEADER = "Referrer-Policy"
_EXTRA_SOURCES = "operator_csp_extra_sources"
# CSP3 §2.3.1 grammar: a scheme, and a host made of dot-separated labels (an IPv4
# address is one). Anything else (an IPv6 literal, a stray `;`) never enters the header.
_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*")
_HOST = re.compile(r"[a-z0-9-]+(\.[a-z0-9-]+)*")


def serialize_policy(policy: Mapping[str, Iterable[str]]) -> str:
    return "; ".join(" ".join([directive, *sources]) for directive, sources in policy.items())


def allow_sources(response: HttpResponseBase, directive: str, sources: Iterable[str]) -> None:
    """Add `sources` to `directive` in the policy of this one response."""
    extra: dict[str, list[str]] = getattr(response, _EXTRA_SOURCES, {})
    extra.setdefault(directive, []).extend(sources)
    setattr(response, _EXTRA_SOURCES, extra)


def form_action_source(uri: str) -> str | None:
    """The CSP source that matches the origin of `uri`, or None when CSP cannot express it.

    `https://client.example/cb` gives `https://client.example`, a loopback
    `http://127.0.0.1:8765/cb` keeps its port, and a native client's private-use
    scheme `com.example.app:/cb` gives the scheme source `com.example.app:`.
    A host CSP has no syntax for (an IPv6 literal) falls back to its scheme.
    """
    try:
        parts = urlsplit(uri)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if not _SCHEME.fullmatch(scheme):
        return None
    try:
        host = (parts.hostname or "").encode("idna").decode("ascii").lower()
    except UnicodeError:
        host = ""
    if not parts.netloc or not _HOST.fullmatch(host):
        return f"{scheme}:"
    return f"{scheme}://{host}" + (f":{port}" if port is not None else "")


class ContentSecurityPolicyMiddleware:
    """Set `SECURE_CSP` on every response that does not carry a policy already."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response
        self._policy: Mapping[str, Iterable[str]] | None = None
        self._header = ""

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        if CSP_HEADER in response.headers:
            return response
        policy: Mapping[str, Iterable[str]] = settings.SECURE_CSP
        if policy is not self._policy:
            # Serialized once per settings object, not once per response.
            self._policy, self._header = policy, serialize_policy(policy)
        extra: dict[str, list[str]] | None = getattr(response, _EXTRA_SOURCES, None)
        if extra:
            widened = {directive: list(sources) for directive, sources in policy.items()}
            for directive, sources in extra.items():
                widened[directive] = [*widened.get(directive, []), *sources]
            response.headers[CSP_HEADER] = serialize_policy(widened)
        elif self._header:
            response.headers[CSP_HEADER] = self._header
        return response


def referrer_policy(policy: str) -> Callable[[Callable[..., HttpResponseBase]], Callable[..., HttpResponseBase]]:
    """Give every response of a view that sets none itself this `Referrer-Policy`.

    It replaces `SECURE_REFERRER_POLICY` there: Django's SecurityMiddleware sets
    its policy only where none is set yet.
    """

    def decorator(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            response = view(request, *args, **kwargs)
            response.headers.setdefault(REFERRER_POLICY_HEADER, policy)
            return response

        return wrapped

    return decorator
