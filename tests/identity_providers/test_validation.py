"""Staff may configure only an https issuer (http on loopback) and real email domains, stored in one form."""

from django.test import SimpleTestCase

from identity_providers.validation import valid_domain, valid_issuer
from operator_core.errors import InvalidArguments


class IssuerTests(SimpleTestCase):
    def test_https_issuers_and_loopback_http_are_kept_exactly(self) -> None:
        for issuer in (
            "https://accounts.google.com",
            "https://login.microsoftonline.com/3f1c2a9e-0000-4000-8000-000000000000/v2.0",
            "https://acme.okta.com/oauth2/default",
            "https://idp.acme.example/",
            "http://127.0.0.1:8123",
            "http://localhost:8123/realms/acme",
            "http://[::1]:8123",
        ):
            with self.subTest(issuer=issuer):
                self.assertEqual(valid_issuer(f" {issuer} "), issuer)

    def test_plain_http_elsewhere_and_other_schemes_are_refused(self) -> None:
        for issuer in (
            "http://accounts.google.com",
            "http://localhost.evil.example",
            "http://127.0.0.2",
            "http://10.0.0.1",
            "ftp://idp.acme.example",
            "accounts.google.com",
        ):
            with self.subTest(issuer=issuer), self.assertRaisesMessage(InvalidArguments, "https://"):
                valid_issuer(issuer)

    def test_query_fragment_userinfo_and_oddities_are_refused(self) -> None:
        for issuer in (
            "https://idp.acme.example/?tenant=1",
            "https://idp.acme.example/?",
            "https://idp.acme.example/#x",
            "https://user:pass@idp.acme.example",
            "https://evil.example\\@idp.acme.example",
            "https://idp.acme.example/a b",
            "https://idp.acme.exämple",
            "https://idp.acme.example:99999",
            "https://",
            "",
            "https://idp.acme.example/" + "a" * 255,
        ):
            with self.subTest(issuer=issuer), self.assertRaises(InvalidArguments) as raised:
                valid_issuer(issuer)
            self.assertEqual(raised.exception.data, {"field": "issuer"})


class DomainTests(SimpleTestCase):
    def test_domains_are_stored_lower_case_in_ascii_form(self) -> None:
        for given, stored in (
            ("acme.example", "acme.example"),
            (" ACME.Example ", "acme.example"),
            ("mail.acme.co.uk", "mail.acme.co.uk"),
            ("Bücher.example", "xn--bcher-kva.example"),
            ("xn--bcher-kva.example", "xn--bcher-kva.example"),
        ):
            with self.subTest(given=given):
                self.assertEqual(valid_domain(given), stored)

    def test_what_is_no_single_email_domain_is_refused(self) -> None:
        for given in (
            "",
            "localhost",
            "example",
            "*.acme.example",
            "acme.example.",
            "person@acme.example",
            "@acme.example",
            "https://acme.example",
            "192.0.2.1",
            "[::1]",
            "1.2.3",
            "acme..example",
            "-acme.example",
            "acme_corp.example",
            "a" * 64 + ".example",
            ("a" * 60 + ".") * 5 + "example",
        ):
            with self.subTest(given=given), self.assertRaises(InvalidArguments) as raised:
                valid_domain(given)
            self.assertEqual(raised.exception.data, {"field": "domain"})
