"""Request limits of the OAuth endpoints (docs/limits.md#request-rates).

Per client IP address on the token, registration, authorization and revocation
endpoints, and per client (the `client_id` named, before authentication, so
wrong secrets count; only its digest reaches the cache) on the token endpoint,
through `operator_core.rate_limits`. The address is counted first. A refusal is
429 `temporarily_unavailable` with `Retry-After`. Both sign-in pages count
through `require_sign_in_allowed`, per address and per email, so a guess at
either counts against both. Why: docs/development/decisions.md#limits.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote_plus

from django.http import HttpRequest, JsonResponse
from django.http.response import HttpResponseBase

from audit.models import AuditAction
from audit.services import record_event
from oauth.selectors import person_id_for_email_or_none
from oauth.services import SIGN_IN_WINDOW_SECONDS, count_sign_in_attempt
from operator_core.client_ip import client_ip
from operator_core.conf import OperatorSettings, operator_settings
from operator_core.errors import RateLimited, RetryLater
from operator_core.rate_limits import (
    FixedWindowLimiter,
    OnOutage,
    require_within_ip_limit,
    require_within_limit,
)

ERROR_TEMPORARILY_UNAVAILABLE = "temporarily_unavailable"
MESSAGE = "Too many requests; retry later."

View = Callable[..., HttpResponseBase]


@dataclass(frozen=True)
class EndpointLimit:
    group: str
    methods: frozenset[str]
    rate: Callable[[OperatorSettings], str]


TOKEN = EndpointLimit("oauth.token", frozenset({"POST"}), lambda conf: f"{conf.oauth_token_requests_per_minute}/m")
REGISTRATION = EndpointLimit(
    "oauth.registration", frozenset({"POST"}), lambda conf: f"{conf.oauth_registrations_per_hour}/h"
)
AUTHORIZATION = EndpointLimit(
    "oauth.authorization", frozenset({"GET", "POST"}), lambda conf: f"{conf.oauth_authorizations_per_minute}/m"
)
REVOCATION = EndpointLimit(
    "oauth.revocation", frozenset({"POST"}), lambda conf: f"{conf.oauth_revocations_per_minute}/m"
)
TOKEN_PER_CLIENT_GROUP = "oauth.token.client"
CLIENT_WINDOW_SECONDS = 60
# The sign-in pages, as the audit trail names them.
SIGN_IN_PAGE = "sign_in"
PROVIDER_SIGN_IN_PAGE = "provider_sign_in"
ADMIN_SIGN_IN_PAGE = "admin"
# One refusal recorded per address and window: a refused flood writes one row a minute, not one a request.
_REFUSAL_RECORDS = FixedWindowLimiter(
    group="oauth.sign-in.refusal-record",
    limit=1,
    period_seconds=SIGN_IN_WINDOW_SECONDS,
    on_outage=OnOutage.COUNT_PER_PROCESS,
)


def limited(endpoint: EndpointLimit, *, per_client: bool = False) -> Callable[[View], View]:
    """Decorate a view (or `dispatch`) to count its requests and answer 429 past a limit."""

    def decorator(view: View) -> View:
        @functools.wraps(view)
        def wrapped(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponseBase:
            if request.method in endpoint.methods:
                try:
                    require_within_endpoint_limits(request, endpoint, per_client=per_client)
                except RateLimited as error:
                    return rate_limited_response(error)
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


def require_within_endpoint_limits(request: HttpRequest, endpoint: EndpointLimit, *, per_client: bool) -> None:
    """Count the request per address, then per client; raise `RateLimited` past either limit."""
    conf = operator_settings()
    require_within_ip_limit(request, group=endpoint.group, rate=endpoint.rate(conf), message=MESSAGE)
    client_id = presented_client_id(request) if per_client else None
    if client_id:
        limiter = FixedWindowLimiter(
            group=TOKEN_PER_CLIENT_GROUP,
            limit=conf.oauth_token_requests_per_client_per_minute,
            period_seconds=CLIENT_WINDOW_SECONDS,
        )
        require_within_limit(limiter, hashlib.sha256(client_id.encode("utf-8")).hexdigest(), message=MESSAGE)


def presented_client_id(request: HttpRequest) -> str | None:
    """The `client_id` a token request names: HTTP Basic first (RFC 6749 §2.3.1), then the form body."""
    scheme, _, credentials = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "basic" and credentials:
        try:
            decoded = base64.b64decode(credentials.strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
        client_id, separator, _ = decoded.partition(":")
        return unquote_plus(client_id) if separator else None
    return request.POST.get("client_id") or None


def rate_limited_response(error: RateLimited) -> JsonResponse:
    seconds = error.retry_after_seconds
    body = {
        "error": ERROR_TEMPORARILY_UNAVAILABLE,
        "error_description": f"Too many requests; retry after {seconds} seconds.",
    }
    return JsonResponse(body, status=429, headers={**error.headers, "Cache-Control": "no-store"})


def require_sign_in_allowed(request: HttpRequest, *, email: str, page: str) -> None:
    """Count one attempt at a sign-in `page` before its password is checked; raise `RetryLater` when refused.

    `RateLimited` (429) past the limit per address or per email, and
    `TemporarilyUnavailable` (503) while Redis does not answer: the limit fails
    closed (docs/operations.md#outages). The first refusal of each address in a
    window is audited (`sign_in_refusal`), naming the account of `email` when
    there is one, never the address typed.
    """
    address = client_ip(request)
    try:
        count_sign_in_attempt(client_address=address, email=email)
    except RetryLater as refusal:
        if not _REFUSAL_RECORDS.count(address).exceeded:
            record_event(
                AuditAction.SIGN_IN_REFUSAL,
                outcome=str(refusal.code),
                person_id=person_id_for_email_or_none(email),
                detail={"page": page},
            )
        raise
