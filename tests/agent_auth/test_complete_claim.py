"""POST /api/agent/auth/claim/complete: code check, organization choice, claim states (docs/headless.md)."""

import time
from datetime import timedelta

from django.utils import timezone

from agent_auth.models import Claim, ClaimStatus
from oauth.tokens import verify_access_token
from organizations.models import Role
from tests.agent_auth.support import HeadlessTestCase, wrong_code
from tests.factories import make_membership, make_organization, make_user

SEVEN_DAYS = 7 * 24 * 3600


class CompleteClaimTests(HeadlessTestCase):
    def test_right_code_returns_a_seven_day_token_for_the_only_organization(self) -> None:
        membership = make_membership(role=Role.ADMIN)
        claim_token, code = self.start_and_read_code(membership.user.email)

        response = self.complete(claim_token, code)

        self.assertEqual(response.status_code, 200)
        body = response.json()
        self.assertEqual(set(body), {"access_token", "token_type", "expires_in", "scope", "organization"})
        self.assertEqual(body["token_type"], "Bearer")
        self.assertEqual(body["expires_in"], SEVEN_DAYS)
        self.assertEqual(body["scope"], "mcp:operator.read mcp:operator.write")
        organization = membership.organization
        self.assertEqual(
            body["organization"], {"id": str(organization.id), "slug": organization.slug, "name": organization.name}
        )
        claims = verify_access_token(body["access_token"])
        self.assertEqual(claims.user_id, membership.user.pk)
        self.assertEqual(claims.organization_id, str(organization.id))
        self.assertEqual(claims.scopes, {"mcp:operator.read", "mcp:operator.write"})
        self.assertAlmostEqual(claims.expires_at, time.time() + SEVEN_DAYS, delta=60)
        self.assertEqual(response["Cache-Control"], "no-store")
        self.assertEqual(Claim.objects.get(user=membership.user).status, ClaimStatus.COMPLETED)

    def test_several_organizations_and_no_choice_answers_organization_required(self) -> None:
        first = make_membership(role=Role.MEMBER)
        second = make_membership(role=Role.ADMIN, user=first.user, organization=make_organization(name="Aardvark"))
        make_membership(role=Role.LEARNER, user=first.user)
        claim_token, code = self.start_and_read_code(first.user.email)

        response = self.complete(claim_token, code)

        self.assertEqual(response.status_code, 409)
        error = response.json()["error"]
        self.assertEqual(error["code"], "organization_required")
        self.assertEqual(
            error["organizations"],
            [
                {"id": str(org.id), "slug": org.slug, "name": org.name}
                for org in (second.organization, first.organization)
            ],
        )
        claim = Claim.objects.get(user=first.user)
        self.assertEqual((claim.status, claim.attempts), (ClaimStatus.PENDING, 0))

    def test_retry_with_organization_id_binds_the_token_to_that_organization(self) -> None:
        first = make_membership(role=Role.MEMBER)
        second = make_membership(role=Role.ADMIN, user=first.user)
        claim_token, code = self.start_and_read_code(first.user.email)
        self.assertEqual(self.complete(claim_token, code).status_code, 409)

        response = self.complete(claim_token, code, organization_id=str(second.organization.id))

        self.assertEqual(response.status_code, 200)
        self.assertEqual(response.json()["organization"]["id"], str(second.organization.id))
        self.assertEqual(
            verify_access_token(response.json()["access_token"]).organization_id, str(second.organization.id)
        )

    def test_organization_without_an_operator_role_answers_invalid_organization(self) -> None:
        membership = make_membership(role=Role.MEMBER)
        learner_of = make_membership(role=Role.LEARNER, user=membership.user).organization
        claim_token, code = self.start_and_read_code(membership.user.email)

        response = self.complete(claim_token, code, organization_id=str(learner_of.id))

        self.assertEqual(response.status_code, 400)
        self.assertEqual(response.json()["error"]["code"], "invalid_organization")
        self.assertEqual(response.json()["error"]["field"], "organization_id")
        self.assertEqual(Claim.objects.get(user=membership.user).status, ClaimStatus.PENDING)

    def test_person_without_admin_or_member_role_is_forbidden(self) -> None:
        learner = make_membership(role=Role.LEARNER).user
        claim_token, code = self.start_and_read_code(learner.email)

        response = self.complete(claim_token, code)

        self.assertEqual(response.status_code, 403)
        self.assertEqual(response.json()["error"]["code"], "forbidden")
        self.assertNotIn("access_token", response.json())
        self.assertEqual(Claim.objects.get(user=learner).status, ClaimStatus.PENDING)

    def test_wrong_code_answers_invalid_code_with_attempts_remaining(self) -> None:
        user = make_membership().user
        claim_token, code = self.start_and_read_code(user.email)

        response = self.complete(claim_token, wrong_code(code))

        self.assertEqual(response.status_code, 400)
        self.assertEqual(response.json()["error"]["code"], "invalid_code")
        self.assertEqual(response.json()["error"]["attemptsRemaining"], 4)
        claim = Claim.objects.get(user=user)
        self.assertEqual((claim.status, claim.attempts), (ClaimStatus.PENDING, 1))

    def test_wrong_code_reveals_nothing_about_organizations(self) -> None:
        first = make_membership()
        make_membership(user=first.user)
        claim_token, code = self.start_and_read_code(first.user.email)

        response = self.complete(claim_token, wrong_code(code))

        self.assertEqual(response.json()["error"]["code"], "invalid_code")
        self.assertNotIn("organizations", response.json()["error"])

    def test_fifth_wrong_code_ends_the_claim(self) -> None:
        user = make_membership().user
        claim_token, code = self.start_and_read_code(user.email)
        for _ in range(4):
            self.complete(claim_token, wrong_code(code))

        response = self.complete(claim_token, wrong_code(code))

        self.assertEqual(response.json()["error"]["code"], "invalid_code")
        self.assertEqual(response.json()["error"]["attemptsRemaining"], 0)
        claim = Claim.objects.get(user=user)
        self.assertEqual((claim.status, claim.attempts), (ClaimStatus.ENDED, 5))

    def test_right_code_after_five_wrong_codes_answers_claim_ended(self) -> None:
        user = make_membership().user
        claim_token, code = self.start_and_read_code(user.email)
        for _ in range(5):
            self.complete(claim_token, wrong_code(code))

        response = self.complete(claim_token, code)

        self.assertEqual(response.status_code, 410)
        self.assertEqual(response.json()["error"]["code"], "claim_ended")
        claim = Claim.objects.get(user=user)
        self.assertEqual((claim.status, claim.attempts), (ClaimStatus.ENDED, 5))

    def test_expired_claim_answers_claim_expired(self) -> None:
        user = make_membership().user
        claim_token, code = self.start_and_read_code(user.email)
        Claim.objects.filter(user=user).update(expires_at=timezone.now() - timedelta(seconds=1))

        response = self.complete(claim_token, code)

        self.assertEqual(response.status_code, 410)
        self.assertEqual(response.json()["error"]["code"], "claim_expired")
        claim = Claim.objects.get(user=user)
        self.assertEqual((claim.status, claim.attempts), (ClaimStatus.PENDING, 0))

    def test_used_claim_answers_claim_used(self) -> None:
        user = make_membership().user
        claim_token, code = self.start_and_read_code(user.email)
        self.assertEqual(self.complete(claim_token, code).status_code, 200)

        response = self.complete(claim_token, code)

        self.assertEqual(response.status_code, 410)
        self.assertEqual(response.json()["error"]["code"], "claim_used")
        self.assertNotIn("access_token", response.json())
        self.assertEqual(Claim.objects.get(user=user).status, ClaimStatus.COMPLETED)

    def test_unknown_claim_token_answers_invalid_claim(self) -> None:
        response = self.complete("no-such-claim-token", "123456")

        self.assertEqual(response.status_code, 404)
        self.assertEqual(response.json()["error"]["code"], "invalid_claim")
        self.assertFalse(Claim.objects.exists())

    def test_claim_of_an_unknown_email_never_completes(self) -> None:
        claim_token = self.start("nobody@example.test").json()["claim_token"]

        response = self.complete(claim_token, "000000")

        self.assertEqual(response.json()["error"]["code"], "invalid_code")
        self.assertEqual(Claim.objects.get().attempts, 1)

    def test_code_expires_ten_minutes_after_the_start(self) -> None:
        user = make_user()
        before = timezone.now()

        self.start(user.email)

        claim = Claim.objects.get(user=user)
        self.assertAlmostEqual((claim.expires_at - before).total_seconds(), 600, delta=5)
