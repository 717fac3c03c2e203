"""`manage.py createsuperuser`: a staff superuser named by their email (docs/operations.md#admin).

Replaces django.contrib.auth's command (accounts comes first in INSTALLED_APPS),
which asks for a username the service does not use. Interactive, it asks for
the email and the password twice; with `--noinput`, it reads `--email` (or
DJANGO_SUPERUSER_EMAIL) and DJANGO_SUPERUSER_PASSWORD, as Django's does.
"""

import getpass
import os
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core import exceptions
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.core.validators import validate_email

from accounts.emails import EMAIL_MAX_LENGTH, normalized_email, people_with_email
from accounts.forms import EMAIL_TAKEN


class Command(BaseCommand):
    help = "Create a staff superuser who signs in with an email and a password."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--email", help="The superuser's email (their identity).")
        parser.add_argument(
            "--noinput",
            "--no-input",
            action="store_false",
            dest="interactive",
            help="Ask nothing: the email from --email or DJANGO_SUPERUSER_EMAIL, the password from "
            "DJANGO_SUPERUSER_PASSWORD.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["interactive"]:
            email = options["email"] or input("Email: ")
            email = self._checked_email(email)
            password = getpass.getpass("Password: ")
            if password != getpass.getpass("Password (again): "):
                raise CommandError("The two passwords differ.")
        else:
            email = self._checked_email(options["email"] or os.environ.get("DJANGO_SUPERUSER_EMAIL", ""))
            password = os.environ.get("DJANGO_SUPERUSER_PASSWORD", "")
            if not password:
                raise CommandError("Set DJANGO_SUPERUSER_PASSWORD: a superuser signs in with a password.")
        user_model = get_user_model()
        try:
            validate_password(password, user_model(email=email))
        except exceptions.ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None
        user_model.objects.create_superuser(username=email, email=email, password=password)
        self.stdout.write("Superuser created.")

    def _checked_email(self, email: str) -> str:
        email = normalized_email(email)
        try:
            validate_email(email)
        except exceptions.ValidationError:
            raise CommandError("Enter a valid email address.") from None
        if len(email) > EMAIL_MAX_LENGTH:
            raise CommandError(f"The email must be at most {EMAIL_MAX_LENGTH} characters.")
        if people_with_email(email).exists():
            raise CommandError(EMAIL_TAKEN)
        return email
