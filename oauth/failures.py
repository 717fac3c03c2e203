"""The authorization server's answer to a failure that no view answered (docs/operations.md#outages).

DOT's views render OAuth errors themselves, but an outage of the database
escapes them: the token endpoint's transaction, registration, revocation, user
info. `operator_site.middleware.ApiFailureMiddleware` hands such a failure,
already sorted by `operator_core.outages.error_for_failure`, to
`failure_response`:

- the two pages (sign-in, authorization) answer with the error page;
- every other endpoint answers with an OAuth error body: `temporarily_unavailable`
  (RFC 6749 §4.1.2.1) with HTTP 503 and `Retry-After`, or `server_error` with 500.

A request refused before any view could read it (a body over the limit, a
form with too many fields: `operator_core.request_refusals`) is answered here
too, with its own 4xx status and `invalid_request` (RFC 6749 §5.2), or the
error page saying what was wrong.

An authorization error is not redirected to the client here: checking the
redirect URI needs the database that just failed (RFC 6749 §4.1.2.1 forbids
redirecting to an unchecked URI).
"""

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import Resolver404, resolve

from operator_core.errors import ErrorCode, OperatorError

OAUTH_TEMPORARILY_UNAVAILABLE = "temporarily_unavailable"
OAUTH_SERVER_ERROR = "server_error"
OAUTH_INVALID_REQUEST = "invalid_request"
# The views answering HTML pages; everything else on the authorization server speaks JSON.
PAGE_VIEWS = frozenset({"oauth:sign-in", "oauth2_provider:authorize"})


def failure_response(request: HttpRequest, error: OperatorError) -> HttpResponse:
    """The page or the OAuth error body for `error`, with the error's status and headers."""
    unavailable = error.code == ErrorCode.TEMPORARILY_UNAVAILABLE
    refused = error.http_status < 500
    if _view_name(request) in PAGE_VIEWS:
        if refused:
            title, message = "Request refused", f"{error.message} Start again from your application."
        elif unavailable:
            title, message = (
                "Temporarily unavailable",
                "The service is briefly unavailable. Wait a few seconds and try again.",
            )
        else:
            title, message = (
                "Something went wrong",
                "The request could not be completed. Start again from your application.",
            )
        response = render(request, "oauth/error.html", {"title": title, "message": message}, status=error.http_status)
    else:
        if refused:
            code = OAUTH_INVALID_REQUEST
        else:
            code = OAUTH_TEMPORARILY_UNAVAILABLE if unavailable else OAUTH_SERVER_ERROR
        response = JsonResponse({"error": code, "error_description": error.message}, status=error.http_status)
    for name, value in error.headers.items():
        response[name] = value
    response["Cache-Control"] = "no-store"
    return response


def _view_name(request: HttpRequest) -> str | None:
    # A request refused before URL resolution (its size, in the first middleware) has no match yet.
    match = request.resolver_match
    if match is None:
        try:
            match = resolve(request.path_info)
        except Resolver404:
            return None
    return match.view_name
