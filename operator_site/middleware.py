"""Middleware that browser pages need and the MCP endpoints do not, and the API paths' last resort.

The MCP endpoints take bearer tokens only: a cookie is never a credential
there, no page is rendered, nothing is framed. Sessions, the signed-in user,
messages, frame denial and the Content-Security-Policy are work those
requests pay for and never use, on the path that serves the most requests
(docs/development/architecture.md, "The walk of a tool call"). Each class here
is Django's own, or ours for the CSP (Django 5.2 has none), skipped for paths
under `MCP_PATH_PREFIX`; everything else gets it unchanged.
"""

import logging
from collections.abc import Callable

from django.contrib.auth.middleware import AuthenticationMiddleware as DjangoAuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware as DjangoMessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware as DjangoSessionMiddleware
from django.core.exceptions import BadRequest, SuspiciousOperation
from django.http import HttpRequest, HttpResponse
from django.middleware.clickjacking import XFrameOptionsMiddleware as DjangoXFrameOptionsMiddleware

from oauth.failures import failure_response
from operator_core import page_security
from operator_core.conf import operator_settings
from operator_core.errors import OperatorError, as_json_response
from operator_core.mcp.jsonrpc import caught_error, error_response
from operator_core.outages import error_for_failure, is_outage
from operator_core.request_refusals import refusal_for
from site_pages.views import outage

logger = logging.getLogger(__name__)

MCP_PATH_PREFIX = "/api/mcp/"
HEADLESS_PATH_PREFIX = "/api/agent/"
# The authorization server: its endpoints, its pages and every discovery document.
OAUTH_PATH_PREFIXES = ("/api/auth/", "/.well-known/")


def _for_pages_only(middleware: type) -> type:
    class PagesOnly(middleware):
        def __call__(self, request: HttpRequest) -> HttpResponse:
            if request.path.startswith(MCP_PATH_PREFIX):
                get_response: Callable[[HttpRequest], HttpResponse] = self.get_response
                return get_response(request)
            return super().__call__(request)

    PagesOnly.__name__ = PagesOnly.__qualname__ = middleware.__name__
    PagesOnly.__doc__ = f"{middleware.__module__}.{middleware.__name__}, skipped on the MCP endpoints."
    return PagesOnly


SessionMiddleware = _for_pages_only(DjangoSessionMiddleware)
AuthenticationMiddleware = _for_pages_only(DjangoAuthenticationMiddleware)
MessageMiddleware = _for_pages_only(DjangoMessageMiddleware)
XFrameOptionsMiddleware = _for_pages_only(DjangoXFrameOptionsMiddleware)
ContentSecurityPolicyMiddleware = _for_pages_only(page_security.ContentSecurityPolicyMiddleware)


class ApiFailureMiddleware:
    """Last resort on API paths: an exception a view let escape is answered in that path's own format.

    Django's HTML 500 page never reaches an API client (docs/operations.md#outages).
    Each MCP endpoint and the headless views catch their own failures; this is
    the edge of the authorization server, whose views are DOT's, and a safety
    net behind the others. The failure is sorted once by
    `operator_core.outages.error_for_failure`: an outage of the database or
    Redis is a 503 with `Retry-After`, anything else a logged 500. A request
    Django refused to read (`operator_core.request_refusals.refusal_for`) is
    left to Django, whose `handler400` answers it in the path's format
    (`operator_site.request_refusals`). On other paths (the admin, the
    connections and password pages) an outage is the site's page with 503 and
    `Retry-After` (`site_pages.views.outage`), and a bug keeps Django's 500.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        render = _renderer_for(request.path)
        if render is None:
            if not is_outage(exception):
                return None
            render = outage
        if refusal_for(exception, max_bytes=operator_settings().max_request_bytes) is not None:
            # The client's fault (a form with too many fields): Django logs it as a security
            # event and answers 400 through `handler400`, in this path's format. Django does
            # that only for its own 400 exceptions; a multipart body it could not parse is
            # handed over as one.
            if not isinstance(exception, SuspiciousOperation | BadRequest):
                raise BadRequest("The request body could not be read.") from exception
            return None
        error = error_for_failure(
            exception, logger=logger, context=f"{request.method} {request.path}", message="Internal error."
        )
        return render(request, error)


def _renderer_for(path: str) -> Callable[[HttpRequest, OperatorError], HttpResponse] | None:
    if path.startswith(MCP_PATH_PREFIX):
        return lambda request, error: error_response(caught_error(error))
    if path.startswith(HEADLESS_PATH_PREFIX):
        return lambda request, error: as_json_response(error)
    if path.startswith(OAUTH_PATH_PREFIXES):
        return failure_response
    return None
