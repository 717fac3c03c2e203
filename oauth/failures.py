"""The authorization server's answer to a failure that no view answered (docs/operations.md#outages).

`operator_site.middleware.ApiFailureMiddleware` hands `failure_response` what
escaped DOT's views (a database outage, already sorted by
`operator_core.outages.error_for_failure`) and the requests refused before any
view (`operator_core.request_refusals`). The sign-in, identity provider return and
authorization pages answer with the error page; every other endpoint with an OAuth error body
(`temporarily_unavailable` 503 with `Retry-After`, `server_error` 500, or
`invalid_request` with the refusal's 4xx). Nothing is redirected to the client:
see docs/development/architecture.md#errors.
"""

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import Resolver404, resolve

from operator_core.errors import ErrorCode, OperatorError

OAUTH_TEMPORARILY_UNAVAILABLE = "temporarily_unavailable"
OAUTH_SERVER_ERROR = "server_error"
OAUTH_INVALID_REQUEST = "invalid_request"
# The views answering HTML pages; everything else on the authorization server speaks JSON.
PAGE_VIEWS = frozenset({"oauth:sign-in", "oauth:provider-callback", "oauth2_provider:authorize"})


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
