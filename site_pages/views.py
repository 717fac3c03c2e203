"""The pages a person meets first: the front page (what the service is, the URL to paste, how to
connect each client, who is signed in and where they manage their connections) and the 404 and
500 pages of the whole site, and its outage page.
"""

from django.http import HttpRequest, HttpResponse, HttpResponseServerError
from django.shortcuts import render
from django.template import loader
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from operator_core.errors import NotFound, OperatorError, as_json_response
from organizations.admin_access import administered_organizations
from site_pages.selectors import site_addresses

PROTOCOL_REVISION = "2026-07-28"
ERROR_TEMPLATE = "site_pages/error.html"


# It names who is signed in and the organizations they administer: never cached.
@never_cache
@require_safe
def front_page(request: HttpRequest) -> HttpResponse:
    context = {"addresses": site_addresses(), "revision": PROTOCOL_REVISION}
    if request.user.is_authenticated:
        # Links to the connections pages of the organizations this person administers.
        context["administered"] = list(administered_organizations(request.user))
    return render(request, "site_pages/front.html", context)


# Addresses that machines read: their errors stay JSON, as on every other answer there.
JSON_PATH_PREFIXES = ("/api/", "/.well-known/")
JSON_TYPE = "application/json"
HTML_TYPE = "text/html"


def _wants_json(request: HttpRequest) -> bool:
    """JSON under /api/ and /.well-known/, unless the client asks for HTML first (a person's browser)."""
    if not request.path.startswith(JSON_PATH_PREFIXES):
        return False
    return request.get_preferred_type([JSON_TYPE, HTML_TYPE]) != HTML_TYPE


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """`handler404`: a styled page, or `{"error": {"code": "not_found", ...}}` for JSON addresses.

    The exception's text is never shown: it may echo the path or a lookup.
    """
    if _wants_json(request):
        return as_json_response(NotFound("There is nothing at this address."))
    context = {
        "title": "Page not found",
        "message": "There is nothing at this address.",
        "hint": "Check the address, or start again from the front page.",
    }
    return render(request, ERROR_TEMPLATE, context, status=404)


def server_error(request: HttpRequest) -> HttpResponse:
    """`handler500`: a styled page, or `{"error": {"code": "internal_error", ...}}` for JSON addresses.

    Rendered without the request's context processors, like Django's own: the
    failure may lie in the database or the session they would read.
    """
    if _wants_json(request):
        return as_json_response(OperatorError("Internal error."))
    context = {
        "title": "Something went wrong",
        "message": "The service could not answer this request.",
        "hint": "Try again in a moment. If it keeps happening, tell the people who run this service.",
    }
    return HttpResponseServerError(loader.get_template(ERROR_TEMPLATE).render(context))


def outage(request: HttpRequest, error: OperatorError) -> HttpResponse:
    """A page's answer to an outage of the database or Redis: 503 with the error's `Retry-After`.

    What `operator_site.middleware.ApiFailureMiddleware` answers where no API format
    applies (the admin, the connections and password pages; docs/operations.md#outages).
    Rendered without the request's context processors, as `server_error` is: the
    session they would read may be what is down.
    """
    if _wants_json(request):
        response: HttpResponse = as_json_response(error)
    else:
        context = {
            "title": "Temporarily unavailable",
            "message": "The service is briefly unavailable.",
            "hint": "Wait a few seconds and try again.",
        }
        response = HttpResponse(loader.get_template(ERROR_TEMPLATE).render(context), status=error.http_status)
        for name, value in error.headers.items():
            response[name] = value
    response["Cache-Control"] = "no-store"
    return response
