"""The admin's sign-in has the service's sign-in limits, shares their counts, and audits a refusal.

The attack (issue 30, item 8): 15 wrong passwords at /admin/login/ were all
answered 200, where /api/auth/sign-in answers 429 after 10.
"""

from django.test import TestCase

from audit.models import AuditAction, AuditEvent
from operator_core.conf import operator_settings
from tests.audit.support import only_event
from tests.factories import PASSWORD, make_user
from tests.support import pinned_clock

ADMIN_SIGN_IN = "/admin/login/"
SERVICE_SIGN_IN = "/api/auth/sign-in"


class AdminSignInLimitTests(TestCase):
    def setUp(self) -> None:
        self.clock = self.enterContext(pinned_clock())  # every attempt of a test in one window
        self.staff = make_user(email="staff@acme.test", is_staff=True, is_superuser=True)
        self.limit = operator_settings().sign_in_attempts_per_minute

    def sign_in(self, *, email: str = "staff@acme.test", password: str = "wrong", address: str = "10.0.0.1"):
        return self.client.post(ADMIN_SIGN_IN, {"username": email, "password": password}, REMOTE_ADDR=address)

    def test_the_eleventh_attempt_from_one_address_is_refused_with_429_unchecked(self) -> None:
        for number in range(self.limit):
            self.assertEqual(self.sign_in(email=f"other{number}@acme.test").status_code, 200)

        response = self.sign_in(password=PASSWORD)

        self.assertContains(response, "Too many sign-in attempts", status_code=429)
        self.assertTrue(1 <= int(response["Retry-After"]) <= 60)
        self.assertNotIn("_auth_user_id", self.client.session)  # the right password was never checked

    def test_the_eleventh_attempt_at_one_email_is_refused_from_any_address(self) -> None:
        for number in range(self.limit):
            self.sign_in(address=f"10.0.1.{number + 1}")

        response = self.sign_in(password=PASSWORD, address="10.0.2.1")

        self.assertEqual(response.status_code, 429)
        self.assertNotIn("_auth_user_id", self.client.session)

    def test_a_full_width_spelling_of_the_email_shares_its_count(self) -> None:
        # The admin's form signs in NFKC-normalised usernames: "ｓｔａｆｆ" is "staff" to it.
        for number in range(self.limit):
            self.sign_in(address=f"10.0.1.{number + 1}")

        response = self.sign_in(email="ｓｔａｆｆ@acme.test", password=PASSWORD, address="10.0.2.1")

        self.assertEqual(response.status_code, 429)
        self.assertNotIn("_auth_user_id", self.client.session)

    def test_the_refusal_is_audited_naming_the_account_and_the_page(self) -> None:
        for _ in range(self.limit):
            self.sign_in()

        self.sign_in()

        event = only_event(self, action=AuditAction.SIGN_IN_REFUSAL)
        self.assertEqual(event.outcome, "rate_limited")
        self.assertEqual(event.person_id, self.staff.pk)
        self.assertEqual(event.detail, {"page": "admin"})

    def test_a_flood_of_refusals_is_audited_once_a_minute_per_address(self) -> None:
        for _ in range(self.limit + 5):
            self.sign_in()
        self.assertEqual(AuditEvent.objects.filter(action=AuditAction.SIGN_IN_REFUSAL).count(), 1)

        self.clock.advance(61)
        for _ in range(self.limit + 1):
            self.sign_in()

        self.assertEqual(AuditEvent.objects.filter(action=AuditAction.SIGN_IN_REFUSAL).count(), 2)

    def test_guesses_at_the_service_sign_in_count_against_the_admin(self) -> None:
        for _ in range(self.limit):
            self.client.post(SERVICE_SIGN_IN, {"email": "staff@acme.test", "password": "wrong"}, REMOTE_ADDR="10.0.0.1")

        response = self.sign_in(password=PASSWORD)

        self.assertEqual(response.status_code, 429)

    def test_the_right_password_within_the_limit_signs_in(self) -> None:
        response = self.sign_in(password=PASSWORD)

        self.assertEqual(response.status_code, 302)
        self.assertEqual(int(self.client.session["_auth_user_id"]), self.staff.pk)


class ServiceSignInRefusalAuditTests(TestCase):
    def test_a_refusal_at_the_service_sign_in_is_audited_with_its_page(self) -> None:
        self.enterContext(pinned_clock())
        limit = operator_settings().sign_in_attempts_per_minute
        for _ in range(limit + 1):
            self.client.post(SERVICE_SIGN_IN, {"email": "nobody@acme.test", "password": "wrong"})

        event = only_event(self, action=AuditAction.SIGN_IN_REFUSAL)
        self.assertIsNone(event.person_id)  # no account has that email, and the email is never stored
        self.assertEqual(event.detail, {"page": "sign_in"})
