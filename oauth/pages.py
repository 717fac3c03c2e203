"""What the sign-in, consent and error pages share: the error page, their Referrer-Policy and form-action."""

from urllib.parse import parse_qsl, urlsplit

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.decorators import method_decorator

from oauth.selectors import registered_redirect_uri_or_none
from operator_core.page_security import allow_sources, form_action_source, referrer_policy


def error_page(request: HttpRequest, *, title: str, message: str, status: int) -> HttpResponse:
    return render(request, "oauth/error.html", {"title": title, "message": message}, status=status)


# The OAuth pages' URLs carry the authorization request (client, redirect URI,
# state, PKCE challenge), and the redirect back carries the code: no page or
# client they lead to is told them. Every response of the two views sends no-referrer,
# but the two pages whose form posts back to us: with no-referrer the browser
# sends `Origin: null` on that POST (Fetch, "append a request Origin header"),
# which Django's CSRF check refuses. They send strict-origin instead: the
# origin and never a path or query, to anyone, and a real Origin on the POST.
no_referrer = method_decorator(referrer_policy("no-referrer"), name="dispatch")
FORM_PAGE_REFERRER_POLICY = "strict-origin"


def allow_form_redirect_to(response: HttpResponse, redirect_uri: str) -> None:
    """Let a form on this page end, through our redirects, at the client's `redirect_uri`.

    CSP's form-action applies to every redirect that follows a form's POST, and
    Chromium enforces it: with `'self'` alone, the answer to the consent form
    (and a sign-in whose authorization request ends at the client) is blocked.
    Only a URI already checked against the client's registration comes here.
    """
    source = form_action_source(redirect_uri) if redirect_uri else None
    if source:
        allow_sources(response, "form-action", [source])


def pending_redirect_uri(next_url: str) -> str:
    """The registered redirect URI of the authorization request in a sign-in's `next`, or ""."""
    parts = urlsplit(next_url)
    if parts.scheme or parts.netloc or parts.path != reverse("oauth2_provider:authorize"):
        return ""
    query = dict(parse_qsl(parts.query))
    registered = registered_redirect_uri_or_none(query.get("client_id", ""), redirect_uri=query.get("redirect_uri", ""))
    return registered or ""
