"""POST /api/agent/auth: a claim token back, a six-digit code by real SMTP (docs/headless.md)."""

import hashlib

from django.utils import timezone

from agent_auth.models import Claim, ClaimStatus, VerificationEmail
from agent_auth.outbox import EMAIL_SUBJECT
from organizations.models import Role
from tests.agent_auth.support import HeadlessTestCase, make_retries_due, run_email_worker
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

        with self.settings(EMAIL_PORT=1), self.assertLogs("agent_auth.outbox", "ERROR") as logs:
            response = self.start(user.email)
            run_email_worker()

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


class EmailOutboxTests(HeadlessTestCase):
    """The email is written with the claim and sent by the worker, once (agent_auth.outbox)."""

    def test_the_email_waits_in_the_outbox_until_the_worker_runs(self) -> None:
        user = make_membership().user

        self.start(user.email)

        self.assertEqual(self.smtp.inbox.mails(), [])
        self.assertEqual(VerificationEmail.objects.get().sent_at, None)
        [mail] = self.mails()
        self.assertEqual(mail.recipients, (user.email,))

    def test_a_failed_attempt_is_retried_until_the_email_is_sent(self) -> None:
        user = make_membership().user
        self.start(user.email)
        with self.settings(EMAIL_PORT=1), self.assertLogs("agent_auth.outbox", "ERROR"):
            run_email_worker()

        make_retries_due()
        [mail] = self.mails()

        self.assertEqual(mail.recipients, (user.email,))
        email = VerificationEmail.objects.get()
        self.assertEqual((email.attempts, email.sealed_code), (2, ""))
        self.assertIsNotNone(email.sent_at)

    def test_no_attempt_sends_the_email_twice(self) -> None:
        user = make_membership().user
        self.start(user.email)
        self.assertEqual(len(self.mails()), 1)

        for _ in range(3):
            make_retries_due()
            run_email_worker()

        self.assertEqual(len(self.smtp.inbox.mails()), 1)

    def test_retries_stop_when_the_claim_expires(self) -> None:
        user = make_membership().user
        self.start(user.email)
        Claim.objects.update(expires_at=timezone.now())

        self.assertEqual(self.mails(), [])
        make_retries_due()
        self.assertEqual(run_email_worker(), 0)
        self.assertEqual(VerificationEmail.objects.get().sealed_code, "")

    def test_the_code_waits_sealed_and_is_erased_once_sent(self) -> None:
        user = make_membership().user
        self.start(user.email)
        sealed = VerificationEmail.objects.get().sealed_code

        [mail] = self.mails()

        self.assertNotIn(mail.code, sealed)
        self.assertEqual(VerificationEmail.objects.get().sealed_code, "")

    def test_an_unknown_email_makes_the_same_outbox_work_and_sends_nothing(self) -> None:
        self.start("nobody@example.test")

        self.assertEqual(VerificationEmail.objects.count(), 1)
        self.assertEqual(self.mails(), [])
        self.assertEqual(VerificationEmail.objects.get().sealed_code, "")


class RefusedRecipientTests(HeadlessTestCase):
    """A mail server's refusal is logged without the address; a permanent one ends the attempts."""

    def test_a_permanent_refusal_is_logged_without_the_address_and_not_retried(self) -> None:
        user = make_membership().user
        self.smtp.inbox.refuse(user.email, f"550 5.1.1 <{user.email}>: Recipient address rejected")
        self.start(user.email)

        with self.assertLogs(level="DEBUG") as logs:
            run_email_worker()
            make_retries_due()
            run_email_worker()

        self.assertNotIn(user.email.lower(), "\n".join(logs.output).lower())
        self.assertTrue(any("SMTPRecipientsRefused" in line and "550" in line for line in logs.output), logs.output)
        email = VerificationEmail.objects.get()
        self.assertEqual((email.attempts, email.sealed_code, email.sent_at), (1, "", None))
        self.assertEqual(self.smtp.inbox.mails(), [])

    def test_a_temporary_refusal_is_logged_without_the_address_and_retried(self) -> None:
        user = make_membership().user
        self.smtp.inbox.refuse(user.email, f"450 4.2.1 <{user.email}>: Mailbox busy, try again")
        self.start(user.email)
        with self.assertLogs(level="DEBUG") as logs:
            run_email_worker()
        self.smtp.inbox.reset()

        make_retries_due()
        [mail] = self.mails()

        self.assertNotIn(user.email.lower(), "\n".join(logs.output).lower())
        self.assertTrue(any("SMTPRecipientsRefused" in line and "450" in line for line in logs.output), logs.output)
        self.assertEqual(mail.recipients, (user.email,))
        self.assertEqual(VerificationEmail.objects.get().attempts, 2)
