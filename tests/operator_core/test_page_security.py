"""The CSP middleware's policy and its per-response widening, and the form-action source of a redirect URI."""

from django.http import HttpRequest, HttpResponse
from django.test import SimpleTestCase, override_settings

from operator_core.page_security import (
    CSP_HEADER,
    ContentSecurityPolicyMiddleware,
    allow_sources,
    form_action_source,
    referrer_policy,
)

POLICY = {"default-src": ["'none'"], "form-action": ["'self'"]}


def respond_with(response: HttpResponse) -> HttpResponse:
    return ContentSecurityPolicyMiddleware(lambda request: response)(HttpRequest())


@override_settings(SECURE_CSP=POLICY)
class ContentSecurityPolicyMiddlewareTests(SimpleTestCase):
    def test_every_response_gets_the_policy_of_the_setting(self) -> None:
        response = respond_with(HttpResponse())

        self.assertEqual(response[CSP_HEADER], "default-src 'none'; form-action 'self'")

    def test_a_response_widens_one_directive_for_itself_only(self) -> None:
        widened = HttpResponse()
        allow_sources(widened, "form-action", ["https://client.example"])

        self.assertEqual(
            respond_with(widened)[CSP_HEADER], "default-src 'none'; form-action 'self' https://client.example"
        )
        self.assertEqual(respond_with(HttpResponse())[CSP_HEADER], "default-src 'none'; form-action 'self'")

    def test_a_policy_the_view_set_itself_is_kept(self) -> None:
        own = HttpResponse()
        own[CSP_HEADER] = "sandbox"

        self.assertEqual(respond_with(own)[CSP_HEADER], "sandbox")

    def test_a_changed_setting_is_read_again(self) -> None:
        middleware = ContentSecurityPolicyMiddleware(lambda request: HttpResponse())
        middleware(HttpRequest())

        with override_settings(SECURE_CSP={"default-src": ["'self'"]}):
            self.assertEqual(middleware(HttpRequest())[CSP_HEADER], "default-src 'self'")


class FormActionSourceTests(SimpleTestCase):
    def test_an_https_redirect_gives_its_origin(self) -> None:
        self.assertEqual(form_action_source("https://Client.Example/oauth/cb?x=1"), "https://client.example")

    def test_a_loopback_redirect_keeps_its_port(self) -> None:
        self.assertEqual(form_action_source("http://127.0.0.1:8765/callback"), "http://127.0.0.1:8765")

    def test_a_private_use_scheme_gives_a_scheme_source(self) -> None:
        self.assertEqual(form_action_source("com.example.app:/oauth2redirect"), "com.example.app:")

    def test_an_ipv6_loopback_falls_back_to_its_scheme(self) -> None:
        # CSP's host grammar has no IPv6 literal (CSP3 §2.3.1).
        self.assertEqual(form_action_source("http://[::1]:8765/callback"), "http:")

    def test_an_international_host_is_written_in_ascii(self) -> None:
        self.assertEqual(form_action_source("https://bücher.example/cb"), "https://xn--bcher-kva.example")

    def test_nothing_that_could_end_the_directive_gets_through(self) -> None:
        for uri in (
            "https://a.example;script-src */cb",
            "https://a.example, evil/cb",
            "java script:x",
            "https://a:99999/",
        ):
            source = form_action_source(uri)
            self.assertFalse(source and any(character in source for character in ";, '"), (uri, source))


class ReferrerPolicyDecoratorTests(SimpleTestCase):
    def test_it_sets_the_policy_where_the_view_set_none(self) -> None:
        view = referrer_policy("no-referrer")(lambda request: HttpResponse())

        self.assertEqual(view(HttpRequest())["Referrer-Policy"], "no-referrer")

    def test_a_policy_the_view_set_itself_is_kept(self) -> None:
        def view(request: HttpRequest) -> HttpResponse:
            response = HttpResponse()
            response["Referrer-Policy"] = "strict-origin"
            return response

        self.assertEqual(referrer_policy("no-referrer")(view)(HttpRequest())["Referrer-Policy"], "strict-origin")
