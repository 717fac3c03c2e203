"""A person with a local account recovers a forgotten password by email (issue 32).

Before: there was no link, no route and no view; a person who forgot a
password needed staff. The mails go through the real SMTP server and the
email worker, as the headless codes do.
"""

from datetime import datetime, timedelta

from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.test import Client
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from accounts.models import PasswordResetEmail
from accounts.password_reset import (
    EMAIL_SUBJECT,
    OUTCOME_PROVIDER_REQUIRED,
    REQUESTS_PER_ADDRESS_PER_HOUR,
    REQUESTS_PER_EMAIL_PER_HOUR,
)
from audit.models import AuditAction, AuditEvent
from identity_providers.models import IdentityProvider, ProviderDomain
from organizations.models import Role
from tests.accounts.support import DONE, NEW_PASSWORD, RESET, SENT, SIGN_IN, ResetTestCase, link_in
from tests.audit.support import field_values, only_event
from tests.factories import PASSWORD, make_membership, make_user
from tests.support import pinned_clock


class PasswordRecoveryTests(ResetTestCase):
    def test_a_forgotten_password_is_recovered_by_email_end_to_end(self) -> None:
        user = make_membership(role=Role.MEMBER).user
        sign_in_page = self.client.get(SIGN_IN)
        self.assertContains(sign_in_page, f'href="{RESET}"')

        response = self.request_reset(user.email.upper())
        self.assertRedirects(response, SENT)
        [mail] = self.mails()
        self.assertEqual((mail.recipients, mail.subject), ((user.email,), EMAIL_SUBJECT))

        done = self.set_password_through(link_in(mail))

        self.assertRedirects(done, DONE)
        self.assertTrue(self.signs_in(user.email, NEW_PASSWORD))
        self.assertFalse(self.signs_in(user.email, PASSWORD))

    def test_the_request_and_the_reset_are_audited_without_email_or_token(self) -> None:
        user = make_user()
        self.request_reset(user.email)
        [mail] = self.mails()
        link = link_in(mail)
        self.set_password_through(link)

        requested = only_event(self, action=AuditAction.PASSWORD_RESET_REQUEST)
        reset = only_event(self, action=AuditAction.PASSWORD_RESET)
        for event in (requested, reset):
            self.assertEqual((event.person_id, event.outcome), (user.pk, "ok"))
            stored = " ".join(field_values(event))
            self.assertNotIn(user.email, stored)
            self.assertNotIn(link.split("/")[-2], stored)

    def test_the_link_waits_sealed_in_the_outbox_and_is_erased_once_sent(self) -> None:
        user = make_user()
        self.request_reset(user.email)
        sealed = PasswordResetEmail.objects.get(user=user).sealed_link

        [mail] = self.mails()

        token = link_in(mail).split("/")[-2]
        self.assertNotIn(token, sealed)
        self.assertEqual(PasswordResetEmail.objects.get(user=user).sealed_link, "")

    def test_an_unknown_email_gets_the_same_answer_and_nothing_is_sent(self) -> None:
        known = self.request_reset(make_user().email)
        self.clear_inbox()

        unknown = self.request_reset("nobody@example.test")

        self.assertEqual((unknown.status_code, unknown["Location"]), (known.status_code, known["Location"]))
        self.assertEqual(self.mails(), [])
        self.assertEqual(PasswordResetEmail.objects.count(), 1)
        self.assertEqual(AuditEvent.objects.filter(action=AuditAction.PASSWORD_RESET_REQUEST).count(), 1)

    def test_a_person_whose_domain_requires_its_provider_gets_no_email_and_the_same_answer(self) -> None:
        membership = make_membership(user=make_user(email="bob@sso.test"))
        provider = IdentityProvider.objects.create(
            organization=membership.organization,
            issuer="https://idp.sso.test",
            client_id="operator",
            client_secret_sealed="sealed",
            required=True,
        )
        ProviderDomain.objects.create(provider=provider, domain="sso.test")

        response = self.request_reset("bob@sso.test")

        self.assertRedirects(response, SENT)
        self.assertEqual(self.mails(), [])
        event = only_event(self, action=AuditAction.PASSWORD_RESET_REQUEST)
        self.assertEqual((event.person_id, event.outcome), (membership.user.pk, OUTCOME_PROVIDER_REQUIRED))


class ResetLinkTests(ResetTestCase):
    """A link expired, used or altered gets a clear page (400), never a 500, and sets nothing."""

    def setUp(self) -> None:
        super().setUp()
        self.user = make_user()
        self.uid = urlsafe_base64_encode(force_bytes(self.user.pk))

    def assert_refused(self, response: object) -> None:
        self.assertContains(response, "This link does not work", status_code=400)
        self.assertEqual(response["Referrer-Policy"], "no-referrer")
        self.assertTrue(self.signs_in(self.user.email, PASSWORD))

    def test_an_expired_link_is_refused(self) -> None:
        issued_long_ago = PasswordResetTokenGenerator()
        issued_long_ago._now = lambda: datetime.now() - timedelta(hours=1, seconds=1)
        expired = issued_long_ago.make_token(self.user)

        self.assert_refused(self.set_password_through(f"{RESET}{self.uid}/{expired}/"))

    def test_a_link_works_once(self) -> None:
        self.request_reset(self.user.email)
        [mail] = self.mails()
        self.assertRedirects(self.set_password_through(link_in(mail)), DONE)

        again = self.set_password_through(link_in(mail), password="yet-another-long-passphrase")

        self.assertContains(again, "This link does not work", status_code=400)
        self.assertTrue(self.signs_in(self.user.email, NEW_PASSWORD))

    def test_an_altered_link_is_refused(self) -> None:
        self.request_reset(self.user.email)
        [mail] = self.mails()
        uid, token = link_in(mail).split("/")[-3:-1]
        other = urlsafe_base64_encode(force_bytes(make_user().pk))
        altered = {
            "token": f"{RESET}{uid}/{token[:-1]}{'a' if token[-1] != 'a' else 'b'}/",
            "person": f"{RESET}{other}/{token}/",
            "uid not base64": f"{RESET}!!!/{token}/",
            "uid not a number": f"{RESET}{urlsafe_base64_encode(b'nope')}/{token}/",
            "token shape": f"{RESET}{uid}/not-a-token/",
        }
        for label, link in altered.items():
            with self.subTest(label):
                self.assert_refused(self.set_password_through(link))

    def test_the_link_page_sends_no_referrer_and_is_not_cached(self) -> None:
        self.request_reset(self.user.email)
        [mail] = self.mails()

        opened = Client().get(link_in(mail))

        self.assertEqual(opened.status_code, 302)
        self.assertNotIn(link_in(mail).split("/")[-2], opened["Location"])  # the token leaves the URL
        self.assertEqual(opened["Referrer-Policy"], "no-referrer")
        self.assertIn("no-store", opened["Cache-Control"])


class ResetLimitTests(ResetTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.enterContext(pinned_clock())

    def test_requests_for_one_email_are_limited_from_any_address(self) -> None:
        user = make_user()
        for number in range(REQUESTS_PER_EMAIL_PER_HOUR):
            self.assertEqual(self.request_reset(user.email, address=f"10.9.0.{number + 1}").status_code, 302)

        refused = self.request_reset(user.email.upper(), address="10.9.1.1")

        self.assertContains(refused, "Too many reset requests", status_code=429)
        self.assertTrue(1 <= int(refused["Retry-After"]) <= 3600)
        self.assertEqual(len(self.mails()), REQUESTS_PER_EMAIL_PER_HOUR)

    def test_requests_from_one_address_are_limited(self) -> None:
        for number in range(REQUESTS_PER_ADDRESS_PER_HOUR):
            self.request_reset(f"nobody{number}@example.test")

        refused = self.request_reset(make_user().email)

        self.assertEqual(refused.status_code, 429)
        self.assertEqual(self.mails(), [])

    def test_a_request_refused_for_its_email_still_counts_against_its_address(self) -> None:
        user = make_user()
        for _ in range(REQUESTS_PER_ADDRESS_PER_HOUR):  # all but the first few refused for the email
            self.request_reset(user.email, address="10.9.2.1")
        self.clear_inbox()

        refused = self.request_reset(make_user().email, address="10.9.2.1")

        self.assertEqual(refused.status_code, 429)
        self.assertEqual(self.mails(), [])


class ResetSessionTests(ResetTestCase):
    """A reset ends the person's other browser sessions; their MCP connections stay (the role rule governs those)."""

    def test_a_reset_signs_out_other_browsers_and_keeps_refresh_tokens(self) -> None:
        member = make_membership(role=Role.MEMBER).user
        other_browser = Client()
        self.assertTrue(other_browser.login(username=member.email, password=PASSWORD))
        client_id = self.register()["client_id"]
        self.sign_in(member)
        tokens = self.tokens_for(client_id)
        self.assertEqual(other_browser.get("/account/connections/").status_code, 200)

        self.request_reset(member.email)
        [mail] = self.mails()
        self.set_password_through(link_in(mail))

        self.assertEqual(other_browser.get("/account/connections/").status_code, 302)  # to the sign-in page
        refreshed = self.refresh(client_id, tokens["refresh_token"])
        self.assertEqual(refreshed.status_code, 200, refreshed.content)
