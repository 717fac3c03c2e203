"""POST /api/agent/auth: a claim token back, a six-digit code by real SMTP (docs/headless.md)."""

import hashlib

from agent_auth.mailer import wait_for_outbox
from agent_auth.models import Claim, ClaimStatus
from agent_auth.services import EMAIL_SUBJECT
from organizations.models import Role
from tests.agent_auth.support import HeadlessTestCase
from tests.factories import make_membership, make_user


class StartClaimTests(HeadlessTestCase):
    def test_known_email_gets_a_claim_token_and_a_code_by_email(self) -> None:
        member = make_membership(role=Role.MEMBER).user

        response = self.start(member.email)

        self.assertEqual(response.status_code, 202)
        body = response.json()
        self.assertEqual(set(body), {"claim_token", "expires_in"})
        self.assertEqual(body["expires_in"], 600)
        [mail] = self.mails()
        self.assertEqual(mail.recipients, (member.email,))
        self.assertEqual(mail.subject, EMAIL_SUBJECT)
        self.assertRegex(mail.code, r"^\d{6}$")
        self.assertIn("10 minutes", mail.body)

    def test_unknown_email_gets_the_same_answer_and_no_email(self) -> None:
        known = self.start(make_membership().user.email)
        self.clear_inbox()

        response = self.start("nobody@example.test")

        self.assertEqual(response.status_code, known.status_code)
        self.assertEqual(set(response.json()), set(known.json()))
        self.assertEqual(response.json()["expires_in"], known.json()["expires_in"])
        self.assertEqual(len(response.json()["claim_token"]), len(known.json()["claim_token"]))
        self.assertEqual(self.mails(), [])
        self.assertEqual(Claim.objects.filter(user__isnull=True).count(), 1)

    def test_inactive_user_gets_no_email(self) -> None:
        user = make_user(is_active=False)

        response = self.start(user.email)

        self.assertEqual(response.status_code, 202)
        self.assertEqual(self.mails(), [])
        self.assertFalse(Claim.objects.filter(user=user).exists())

    def test_email_is_matched_without_regard_to_case(self) -> None:
        user = make_membership().user

        self.start(user.email.upper())

        [mail] = self.mails()
        self.assertEqual(mail.recipients, (user.email,))

    def test_neither_claim_token_nor_code_is_stored(self) -> None:
        user = make_membership().user

        claim_token, code = self.start_and_read_code(user.email)

        claim = Claim.objects.get(user=user)
        self.assertEqual(claim.token_hash, hashlib.sha256(claim_token.encode()).hexdigest())
        self.assertNotIn(code, claim.code_hash)
        self.assertEqual(claim.status, ClaimStatus.PENDING)
        self.assertEqual(claim.attempts, 0)

    def test_unreachable_mail_server_gives_the_same_answer(self) -> None:
        user = make_membership().user

        with self.settings(EMAIL_PORT=1), self.assertLogs("agent_auth.services", "ERROR") as logs:
            response = self.start(user.email)
            wait_for_outbox()

        self.assertEqual(response.status_code, 202)
        self.assertNotIn(user.email, "\n".join(logs.output))
        self.assertEqual(set(response.json()), {"claim_token", "expires_in"})
        self.assertTrue(Claim.objects.filter(user=user).exists())

    def test_answer_does_not_wait_for_the_mail_server(self) -> None:
        """No SMTP round trip in the answer's time, which would tell which emails have accounts."""
        member = make_membership()
        self.smtp.inbox.hold()
        try:
            response = self.start(member.user.email)

            self.assertEqual(response.status_code, 202)
            self.assertEqual(self.smtp.inbox.mails(), [])  # answered while delivery is still held
        finally:
            self.smtp.inbox.release()
        [mail] = self.mails()
        self.assertEqual(mail.recipients, (member.user.email,))
