"""Consents and token events leave exactly the audit record described, and never a secret
(docs/operations.md#audit-trail)."""

from urllib.parse import parse_qs, urlsplit

from audit.models import OUTCOME_OK, AuditAction, AuditEvent
from oauth.models import Application, RefreshToken
from organizations.models import Role
from tests.audit.support import assert_holds_no_secret, only_event
from tests.factories import make_membership, make_organization
from tests.oauth.support import REVOKE, OAuthTestCase

SCOPES = ["mcp:operator.read"]


class AuditTrailTestCase(OAuthTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.client_id = self.register(client_name="Acme Agent")["client_id"]
        self.membership = make_membership(role=Role.MEMBER)
        self.person = self.membership.user
        self.organization = self.membership.organization
        self.sign_in(self.person)

    def assertNamesTheClient(self, event: AuditEvent) -> None:
        self.assertEqual((event.client_id, event.client_name), (self.client_id, "Acme Agent"))

    def assertNamesThePerson(self, event: AuditEvent) -> None:
        self.assertEqual((event.person_id, event.organization_id), (self.person.pk, self.organization.pk))


class ConsentRecordTests(AuditTrailTestCase):
    def test_an_allowed_consent_records_the_organization_chosen(self) -> None:
        other = make_organization()
        make_membership(user=self.person, organization=other, role=Role.ADMIN)

        authorization = self.authorize(self.client_id, organization=other)

        event = only_event(self, action=AuditAction.AUTHORIZATION)
        self.assertEqual(event.outcome, OUTCOME_OK)
        self.assertEqual((event.person_id, event.organization_id), (self.person.pk, other.pk))
        self.assertNamesTheClient(event)
        self.assertEqual(event.detail, {"scopes": SCOPES})
        self.assertNotEqual(event.request_id, "")
        assert_holds_no_secret(self, authorization.code, authorization.verifier)

    def test_a_denied_consent_records_access_denied_with_the_organization_chosen(self) -> None:
        response, _ = self.consent(self.client_id, allow=False)

        self.assertEqual(parse_qs(urlsplit(response["Location"]).query)["error"], ["access_denied"])
        event = only_event(self, action=AuditAction.AUTHORIZATION)
        self.assertEqual(event.outcome, "access_denied")
        self.assertNamesThePerson(event)
        self.assertNamesTheClient(event)


class TokenRecordTests(AuditTrailTestCase):
    def test_a_code_exchange_records_who_got_tokens_for_which_organization_and_client(self) -> None:
        authorization = self.authorize(self.client_id)

        tokens = self.exchange(self.client_id, authorization).json()

        event = only_event(self, action=AuditAction.CODE_EXCHANGE)
        self.assertEqual(event.outcome, OUTCOME_OK)
        self.assertNamesThePerson(event)
        self.assertNamesTheClient(event)
        self.assertEqual(event.detail, {"scopes": SCOPES})
        assert_holds_no_secret(
            self, authorization.code, authorization.verifier, tokens["access_token"], tokens["refresh_token"]
        )
        self.assertIsNotNone(Application.objects.get(client_id=self.client_id).last_used_at)

    def test_a_refresh_records_one_refresh(self) -> None:
        tokens = self.tokens_for(self.client_id)

        rotated = self.refresh(self.client_id, tokens["refresh_token"]).json()

        event = only_event(self, action=AuditAction.REFRESH)
        self.assertEqual(event.outcome, OUTCOME_OK)
        self.assertNamesThePerson(event)
        self.assertNamesTheClient(event)
        assert_holds_no_secret(self, tokens["refresh_token"], rotated["access_token"], rotated["refresh_token"])

    def test_a_reused_refresh_token_records_invalid_grant_with_its_family_revoked(self) -> None:
        tokens = self.tokens_for(self.client_id)
        rotated = self.refresh(self.client_id, tokens["refresh_token"]).json()
        # Its successor used: the first token's grace window no longer applies (oauth/refresh_grace.py).
        self.refresh(self.client_id, rotated["refresh_token"])

        reuse = self.refresh(self.client_id, tokens["refresh_token"])

        self.assertEqual(reuse.status_code, 400)
        event = only_event(self, action=AuditAction.REFRESH_REUSE)
        self.assertEqual(event.outcome, "invalid_grant")
        self.assertEqual(event.detail, {"reason": "successor_used"})
        self.assertNamesThePerson(event)
        self.assertNamesTheClient(event)
        self.assertEqual(AuditEvent.objects.filter(action=AuditAction.REFRESH).count(), 2)
        self.assertFalse(RefreshToken.objects.filter(revoked__isnull=True).exists())
        assert_holds_no_secret(self, tokens["refresh_token"], rotated["refresh_token"])

    def test_a_retried_refresh_within_the_grace_window_records_a_refresh_not_a_reuse(self) -> None:
        tokens = self.tokens_for(self.client_id)
        first = self.refresh(self.client_id, tokens["refresh_token"]).json()

        retry = self.refresh(self.client_id, tokens["refresh_token"])

        self.assertEqual(retry.json()["refresh_token"], first["refresh_token"])
        self.assertEqual(AuditEvent.objects.filter(action=AuditAction.REFRESH).count(), 2)
        self.assertFalse(AuditEvent.objects.filter(action=AuditAction.REFRESH_REUSE).exists())

    def test_an_unknown_refresh_token_is_no_reuse(self) -> None:
        self.tokens_for(self.client_id)

        self.refresh(self.client_id, "not-a-token-we-issued")

        self.assertFalse(AuditEvent.objects.filter(action=AuditAction.REFRESH_REUSE).exists())

    def test_a_replayed_code_records_invalid_grant_with_its_tokens_revoked(self) -> None:
        authorization = self.authorize(self.client_id)
        self.exchange(self.client_id, authorization)

        self.exchange(self.client_id, authorization)

        event = only_event(self, action=AuditAction.CODE_REPLAY)
        self.assertEqual(event.outcome, "invalid_grant")
        self.assertNamesThePerson(event)
        self.assertNamesTheClient(event)
        assert_holds_no_secret(self, authorization.code)

    def test_a_revocation_records_the_token_type_and_its_holder(self) -> None:
        tokens = self.tokens_for(self.client_id)

        response = self.api.post(REVOKE, {"token": tokens["refresh_token"], "client_id": self.client_id})

        self.assertEqual(response.status_code, 200)
        event = only_event(self, action=AuditAction.REVOCATION)
        self.assertEqual(event.detail, {"token_type": "refresh_token"})
        self.assertNamesThePerson(event)
        self.assertNamesTheClient(event)
        assert_holds_no_secret(self, tokens["refresh_token"])

    def test_revoking_an_unknown_token_records_nothing(self) -> None:
        response = self.api.post(REVOKE, {"token": "nothing-we-issued", "client_id": self.client_id})

        self.assertEqual(response.status_code, 200)
        self.assertFalse(AuditEvent.objects.filter(action=AuditAction.REVOCATION).exists())
