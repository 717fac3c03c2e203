"""A person is their email everywhere: sign-in pages, the admin's forms, createsuperuser, the headless path (issue 32).

Before: the admin's "Add user" asked for a username, and sign-in matched the
username, so a person added as docs/deploy.md said could not sign in.
"""

import io
import os
from unittest import mock

from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction
from django.test import Client, TestCase

from accounts.forms import EMAIL_TAKEN
from agent_auth.selectors import active_user_for_email_or_none
from oauth.selectors import person_id_for_email_or_none
from tests.factories import PASSWORD, make_user

SIGN_IN = "/api/auth/sign-in"
ADMIN_SIGN_IN = "/admin/login/"
ADD_USER = "/admin/auth/user/add/"


class SignInByEmailTests(TestCase):
    def test_the_sign_in_page_finds_the_person_by_email_in_any_case(self) -> None:
        make_user(email="Dana@Acme.test")

        response = self.client.post(SIGN_IN, {"email": "  DANA@acme.TEST ", "password": PASSWORD})

        self.assertTrue(response.context["signed_in"])

    def test_a_username_that_is_not_the_email_does_not_sign_in(self) -> None:
        user = make_user(email="dana@acme.test")
        get_user_model().objects.filter(pk=user.pk).update(username="dana")

        response = self.client.post(SIGN_IN, {"email": "dana", "password": PASSWORD})

        self.assertEqual(response.status_code, 400)

    def test_the_admin_sign_in_asks_for_the_email_and_signs_in_by_it(self) -> None:
        make_user(email="staff@acme.test", is_staff=True)
        self.assertContains(self.client.get(ADMIN_SIGN_IN), "Email")

        response = self.client.post(ADMIN_SIGN_IN, {"username": "Staff@ACME.test", "password": PASSWORD})

        self.assertEqual(response.status_code, 302)

    def test_an_account_with_no_email_still_signs_in_to_the_admin_with_its_username(self) -> None:
        get_user_model().objects.create_superuser(username="root", email="", password=PASSWORD)

        response = self.client.post(ADMIN_SIGN_IN, {"username": "root", "password": PASSWORD})

        self.assertEqual(response.status_code, 302)

    def test_the_headless_and_oauth_lookups_use_the_same_normal_form(self) -> None:
        user = make_user(email="erin@acme.test")

        self.assertEqual(active_user_for_email_or_none(" ERIN@Acme.Test"), user)
        self.assertEqual(person_id_for_email_or_none("ｅｒｉｎ@acme.test"), user.pk)


class StoredIdentityTests(TestCase):
    def test_every_save_stores_the_email_normalised_as_the_username(self) -> None:
        user = get_user_model().objects.create_user(username="whatever", email=" Fay@Acme.Test", password="x")

        user.refresh_from_db()
        self.assertEqual((user.email, user.username), ("fay@acme.test", "fay@acme.test"))
        user.email = "Fay.New@Acme.test"
        user.save()
        user.refresh_from_db()
        self.assertEqual(user.username, "fay.new@acme.test")
        user.email = "fay.again@acme.test"
        user.save(update_fields=["email"])
        user.refresh_from_db()
        self.assertEqual(user.username, "fay.again@acme.test")

    def test_the_database_refuses_a_second_account_with_the_email_in_another_case(self) -> None:
        make_user(email="gus@acme.test")
        other = make_user(email="other@acme.test")

        with self.assertRaises(IntegrityError), transaction.atomic():
            # An UPDATE skips every save hook: the unique index on LOWER(email) still holds.
            get_user_model().objects.filter(pk=other.pk).update(email="GUS@acme.test")


class AdminFormTests(TestCase):
    def setUp(self) -> None:
        self.staff = make_user(email="staff@acme.test", is_staff=True, is_superuser=True)
        self.client.force_login(self.staff)

    def add(self, email: str) -> object:
        password = "a-long-enough-passphrase"
        return self.client.post(
            ADD_USER, {"email": email, "usable_password": "true", "password1": password, "password2": password}
        )

    def test_add_user_asks_for_the_email_and_the_person_can_sign_in(self) -> None:
        page = self.client.get(ADD_USER)
        self.assertContains(page, 'name="email"')
        self.assertNotContains(page, 'name="username"')

        self.assertEqual(self.add("New.Person@Acme.test").status_code, 302)

        person = get_user_model().objects.get(email="new.person@acme.test")
        self.assertEqual(person.username, "new.person@acme.test")
        response = Client().post(SIGN_IN, {"email": "new.person@acme.test", "password": "a-long-enough-passphrase"})
        self.assertTrue(response.context["signed_in"])

    def test_add_user_refuses_an_email_taken_in_another_case(self) -> None:
        response = self.add("STAFF@acme.test")

        self.assertContains(response, EMAIL_TAKEN)
        self.assertEqual(get_user_model().objects.count(), 1)

    def test_the_change_form_keeps_the_username_in_step_with_the_email(self) -> None:
        person = make_user(email="hal@acme.test")
        url = f"/admin/auth/user/{person.pk}/change/"
        page = self.client.get(url)
        self.assertNotContains(page, 'name="username"')
        form = {
            "email": "Hal.Renamed@Acme.test",
            "is_active": "on",
            "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00",
        }

        response = self.client.post(url, form)

        self.assertEqual(response.status_code, 302)
        person.refresh_from_db()
        self.assertEqual((person.email, person.username), ("hal.renamed@acme.test", "hal.renamed@acme.test"))


class CreateSuperuserTests(TestCase):
    def test_createsuperuser_asks_for_the_email_not_a_username(self) -> None:
        environment = {"DJANGO_SUPERUSER_PASSWORD": "a-long-enough-passphrase"}
        with mock.patch.dict(os.environ, environment):
            call_command("createsuperuser", "--noinput", "--email", "Root@Acme.test", stdout=io.StringIO())

        root = get_user_model().objects.get(email="root@acme.test")
        self.assertEqual((root.username, root.is_superuser, root.is_staff), ("root@acme.test", True, True))
        self.assertTrue(Client().login(username="ROOT@acme.test", password="a-long-enough-passphrase"))

    def test_createsuperuser_refuses_an_email_taken_in_another_case(self) -> None:
        make_user(email="root@acme.test")
        with (
            mock.patch.dict(os.environ, {"DJANGO_SUPERUSER_PASSWORD": "a-long-enough-passphrase"}),
            self.assertRaisesMessage(CommandError, EMAIL_TAKEN),
        ):
            call_command("createsuperuser", "--noinput", "--email", "Root@acme.test")
