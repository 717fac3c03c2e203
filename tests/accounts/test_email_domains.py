"""One folded form of an email domain for password reset and single sign-on (accounts/emails.py)."""

from django.test import SimpleTestCase, TestCase

from accounts.emails import email_domain, folded_domain
from accounts.password_reset import provider_required_for
from identity_providers.models import IdentityProvider, ProviderDomain
from identity_providers.sign_in import provider_for_email
from identity_providers.validation import valid_domain
from tests.factories import make_organization


class FoldedDomainTests(SimpleTestCase):
    def test_a_domain_folds_to_trimmed_lower_case_ascii(self) -> None:
        for spelling in ("Bücher.Example", " BÜCHER.example ", "xn--bcher-kva.EXAMPLE"):
            self.assertEqual(folded_domain(spelling), "xn--bcher-kva.example", spelling)

    def test_a_domain_idna_refuses_raises_and_its_email_matches_nothing_stored(self) -> None:
        with self.assertRaises(UnicodeError):
            folded_domain("acme..example")

        self.assertEqual(email_domain("bob@Acme..Example"), "acme..example")


class ResetAndSignInAgreeTests(TestCase):
    def test_every_spelling_of_a_required_domain_is_that_providers_for_reset_and_sign_in_alike(self) -> None:
        provider = IdentityProvider.objects.create(
            organization=make_organization(),
            issuer="https://idp.bucher.test",
            client_id="operator",
            client_secret_sealed="sealed",
            required=True,
        )
        ProviderDomain.objects.create(provider=provider, domain=valid_domain("Bücher.example"))

        for email in ("bob@bücher.example", "bob@BÜCHER.EXAMPLE", "bob@xn--bcher-kva.example", "bob@bücher.example "):
            self.assertTrue(provider_required_for(email), email)
            self.assertEqual(provider_for_email(email), provider, email)
