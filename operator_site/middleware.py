"""Middleware that browser pages need and the MCP endpoints do not.

The MCP endpoints take bearer tokens only: a cookie is never a credential
there, no page is rendered, nothing is framed. Sessions, the signed-in user,
messages and frame denial are work those requests pay for and never use, on
the path that serves the most requests (docs/development/architecture.md,
"The walk of a tool call"). Each class here is Django's own, skipped for
paths under `MCP_PATH_PREFIX`; everything else gets it unchanged.
"""

from collections.abc import Callable

from django.contrib.auth.middleware import AuthenticationMiddleware as DjangoAuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware as DjangoMessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware as DjangoSessionMiddleware
from django.http import HttpRequest, HttpResponse
from django.middleware.clickjacking import XFrameOptionsMiddleware as DjangoXFrameOptionsMiddleware

MCP_PATH_PREFIX = "/api/mcp/"


def _for_pages_only(middleware: type) -> type:
    class PagesOnly(middleware):  # type: ignore[valid-type, misc]
        def __call__(self, request: HttpRequest) -> HttpResponse:
            if request.path.startswith(MCP_PATH_PREFIX):
                get_response: Callable[[HttpRequest], HttpResponse] = self.get_response
                return get_response(request)
            return super().__call__(request)

    PagesOnly.__name__ = PagesOnly.__qualname__ = middleware.__name__
    PagesOnly.__doc__ = f"Django's {middleware.__name__}, skipped on the MCP endpoints."
    return PagesOnly


SessionMiddleware = _for_pages_only(DjangoSessionMiddleware)
AuthenticationMiddleware = _for_pages_only(DjangoAuthenticationMiddleware)
MessageMiddleware = _for_pages_only(DjangoMessageMiddleware)
XFrameOptionsMiddleware = _for_pages_only(DjangoXFrameOptionsMiddleware)
