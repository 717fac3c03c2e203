"""Plumbing for the password reset tests: asking for a link, reading it from the mail, following it."""

import re
from typing import Any

from django.test import Client

from tests.agent_auth.support import ReceivedMail, SmtpMixin
from tests.oauth.support import OAuthTestCase

RESET = "/account/password-reset/"
SENT = "/account/password-reset/sent/"
DONE = "/account/password-reset/done/"
SIGN_IN = "/api/auth/sign-in"
LINK_RE = re.compile(r"http://testserver(/account/password-reset/[^/\s]+/[^/\s]+/)")
NEW_PASSWORD = "a-new-and-long-enough-passphrase"


def link_in(mail: ReceivedMail) -> str:
    """The path of the reset link in a mail."""
    match = LINK_RE.search(mail.body)
    assert match is not None, "no reset link in the mail"
    return match.group(1)


class ResetTestCase(SmtpMixin, OAuthTestCase):
    def request_reset(self, email: str, *, address: str | None = None) -> Any:
        with self.captureOnCommitCallbacks(execute=True):
            return Client().post(RESET, {"email": email}, REMOTE_ADDR=address or self.address)

    def set_password_through(self, link: str, password: str = NEW_PASSWORD) -> Any:
        """Follow a reset link in a fresh browser and choose `password`; the last response."""
        browser = Client()
        opened = browser.get(link)
        if opened.status_code != 302:
            return opened
        form_page = browser.get(opened["Location"])
        self.assertEqual(form_page.status_code, 200)
        return browser.post(opened["Location"], {"new_password1": password, "new_password2": password})

    def signs_in(self, email: str, password: str) -> bool:
        response = Client().post(SIGN_IN, {"email": email, "password": password}, REMOTE_ADDR=self.address)
        return response.status_code == 200 and response.context["signed_in"]
