"""The front page: what the service is, the URL to paste, how to connect each client, who is signed in."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from site_pages.selectors import site_addresses

PROTOCOL_REVISION = "2026-07-28"


@require_safe
def front_page(request: HttpRequest) -> HttpResponse:
    context = {"addresses": site_addresses(), "revision": PROTOCOL_REVISION}
    return render(request, "site_pages/front.html", context)
