"""The authorization server's answer to a failure that no view answered (docs/operations.md#outages).

DOT's views render OAuth errors themselves, but an outage of the database
escapes them: the token endpoint's transaction, registration, revocation, user
info. `operator_site.middleware.ApiFailureMiddleware` hands such a failure,
already sorted by `operator_core.outages.error_for_failure`, to
`failure_response`:

- the two pages (sign-in, authorization) answer with the error page;
- every other endpoint answers with an OAuth error body: `temporarily_unavailable`
  (RFC 6749 §4.1.2.1) with HTTP 503 and `Retry-After`, or `server_error` with 500.

An authorization error is not redirected to the client here: checking the
redirect URI needs the database that just failed (RFC 6749 §4.1.2.1 forbids
redirecting to an unchecked URI).
"""

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from operator_core.errors import ErrorCode, OperatorError

OAUTH_TEMPORARILY_UNAVAILABLE = "temporarily_unavailable"
OAUTH_SERVER_ERROR = "server_error"
# The views answering HTML pages; everything else on the authorization server speaks JSON.
PAGE_VIEWS = frozenset({"oauth:sign-in", "oauth2_provider:authorize"})


def failure_response(request: HttpRequest, error: OperatorError) -> HttpResponse:
    """The page or the OAuth error body for `error`, with the error's status and headers."""
    unavailable = error.code == ErrorCode.TEMPORARILY_UNAVAILABLE
    match = request.resolver_match
    if match is not None and match.view_name in PAGE_VIEWS:
        title = "Temporarily unavailable" if unavailable else "Something went wrong"
        message = (
            "The service is briefly unavailable. Wait a few seconds and try again."
            if unavailable
            else "The request could not be completed. Start again from your application."
        )
        response = render(request, "oauth/error.html", {"title": title, "message": message}, status=error.http_status)
    else:
        body = {
            "error": OAUTH_TEMPORARILY_UNAVAILABLE if unavailable else OAUTH_SERVER_ERROR,
            "error_description": error.message,
        }
        response = JsonResponse(body, status=error.http_status)
    for name, value in error.headers.items():
        response[name] = value
    response["Cache-Control"] = "no-store"
    return response
