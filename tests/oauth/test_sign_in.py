from django.conf import settings
from django.core.cache import cache
from django.test import SimpleTestCase, TestCase

from oauth.services import count_sign_in_attempt
from operator_core.conf import operator_settings
from operator_core.errors import RateLimited
from tests.factories import PASSWORD, make_user
from tests.support import pinned_clock

SIGN_IN = "/api/auth/sign-in"
NEXT = "/api/auth/oauth2/authorize?client_id=abc"


class SignInTests(TestCase):
    def setUp(self) -> None:
        cache.clear()
        self.enterContext(pinned_clock())  # every attempt of a test in one window
        self.user = make_user()

    def sign_in(self, *, email: str | None = None, password: str = PASSWORD, next_url: str = NEXT, **extra):
        return self.client.post(
            SIGN_IN, {"email": email or self.user.email, "password": password, "next": next_url}, **extra
        )

    def test_page_has_a_csrf_protected_form(self) -> None:
        response = self.client.get(SIGN_IN, {"next": NEXT})

        self.assertEqual(response.status_code, 200)
        self.assertContains(response, 'name="csrfmiddlewaretoken"')
        self.assertContains(response, f'value="{NEXT}"')
        self.assertEqual(response["X-Frame-Options"], "DENY")

    def test_correct_password_signs_in_and_returns_to_next(self) -> None:
        response = self.sign_in()

        self.assertEqual(response.status_code, 302)
        self.assertEqual(response["Location"], NEXT)
        self.assertEqual(int(self.client.session["_auth_user_id"]), self.user.pk)

    def test_wrong_password_is_refused_without_naming_the_reason(self) -> None:
        response = self.sign_in(password="wrong")

        self.assertEqual(response.status_code, 400)
        self.assertContains(response, "do not match an account", status_code=400)
        self.assertNotIn("_auth_user_id", self.client.session)

    def test_unknown_email_gets_the_same_answer(self) -> None:
        response = self.sign_in(email="nobody@example.test")

        self.assertContains(response, "do not match an account", status_code=400)

    def test_next_on_another_host_is_not_followed(self) -> None:
        response = self.sign_in(next_url="https://attacker.example/")

        self.assertEqual(response.status_code, 200)
        self.assertContains(response, "You are signed in")

    def test_signing_in_without_next_offers_the_front_page_and_the_persons_connections(self) -> None:
        response = self.sign_in(next_url="")

        self.assertEqual(response.status_code, 200)
        self.assertContains(response, "You are signed in")
        self.assertContains(response, '<a href="/">The front page</a>', html=True)
        self.assertContains(response, '<a href="/account/connections/">Your connections</a>', html=True)

    def test_eleventh_attempt_in_a_minute_for_one_email_is_refused_with_429(self) -> None:
        limit = operator_settings().sign_in_attempts_per_minute
        for number in range(limit):
            self.sign_in(password="wrong", REMOTE_ADDR=f"10.0.0.{number + 1}")

        response = self.sign_in(REMOTE_ADDR="10.0.1.1")

        self.assertEqual(response.status_code, 429)
        self.assertContains(response, "Too many sign-in attempts", status_code=429)
        self.assertTrue(1 <= int(response["Retry-After"]) <= 60)  # what is left of the minute
        self.assertNotIn("_auth_user_id", self.client.session)

    def test_eleventh_attempt_in_a_minute_from_one_address_is_refused_with_429(self) -> None:
        limit = operator_settings().sign_in_attempts_per_minute
        for number in range(limit):
            self.sign_in(email=f"other{number}@example.test", password="wrong")

        response = self.sign_in()

        self.assertEqual(response.status_code, 429)
        self.assertNotIn("_auth_user_id", self.client.session)

    def test_limit_follows_the_setting(self) -> None:
        with self.settings(OPERATOR={**settings.OPERATOR, "sign_in_attempts_per_minute": 2}):
            self.sign_in(password="wrong")
            self.sign_in(password="wrong")

            response = self.sign_in()

        self.assertEqual(response.status_code, 429)


class CountSignInAttemptTests(SimpleTestCase):
    """The service takes the client address and the email as plain values; the view extracts them."""

    def setUp(self) -> None:
        cache.clear()
        self.enterContext(pinned_clock())

    def test_the_address_limit_counts_across_emails(self) -> None:
        limit = operator_settings().sign_in_attempts_per_minute
        for number in range(limit):
            count_sign_in_attempt(client_address="203.0.113.9", email=f"person{number}@example.test")

        with self.assertRaises(RateLimited) as raised:
            count_sign_in_attempt(client_address="203.0.113.9", email="someone@example.test")

        self.assertEqual(raised.exception.retry_after_seconds, 60)

    def test_the_email_limit_counts_across_addresses_and_ignores_case(self) -> None:
        limit = operator_settings().sign_in_attempts_per_minute
        for number in range(limit):
            count_sign_in_attempt(client_address=f"203.0.113.{number + 1}", email="Person@Example.test")

        with self.assertRaises(RateLimited):
            count_sign_in_attempt(client_address="198.51.100.1", email="person@example.test ")
