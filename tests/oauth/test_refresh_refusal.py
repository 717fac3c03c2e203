"""A refresh refused because of the role or the client policy ends its connection for good
(docs/managing-connections.md#how-access-ends).

Every call goes through the real token endpoint, whose one transaction per
request (`oauth.endpoint_views.TokenView`) is a savepoint inside each test's:
had a refused request rolled its revocation back, the token would work again
here. The client is answered `invalid_grant` either way; what these tests pin
is that giving the role back, or loosening the policy, does not revive the
same refresh token.
"""

from django.core.cache import cache

from audit.models import AuditAction, AuditEvent
from oauth.client_policy import set_client_policy
from oauth.models import AccessToken, RefreshRotation, RefreshToken
from oauth.refresh_grace import EVENT_REPLAY_REFUSED, REASON_FAMILY_REVOKED
from organizations.models import Membership, Role
from tests.factories import make_membership, make_organization
from tests.oauth.support import OAuthTestCase

AUDIT_LOGGER = "operator.audit"


class RefreshRefusalTestCase(OAuthTestCase):
    def setUp(self) -> None:
        super().setUp()
        cache.clear()
        self.membership = make_membership(role=Role.MEMBER)
        self.organization = self.membership.organization
        self.admin = make_membership(role=Role.ADMIN, organization=self.organization).user
        self.client_id = self.register()["client_id"]
        self.sign_in(self.membership.user)
        self.tokens = self.tokens_for(self.client_id, organization=self.organization)

    def set_policy(self, *, only_listed: bool) -> None:
        set_client_policy(
            organization=self.organization,
            actor=self.admin,
            only_listed=only_listed,
            dynamic_clients=False,
            metadata_hosts=[],
            applications=[],
        )

    def set_role(self, role: str) -> None:
        Membership.objects.filter(pk=self.membership.pk).update(role=role)

    def assertInvalidGrant(self, response) -> None:
        self.assertEqual(response.status_code, 400, response.content)
        self.assertEqual(response.json()["error"], "invalid_grant")

    def refused_again(self, refresh_token: str) -> None:
        """Present a token of the ended connection: refused, with nothing live left to revoke."""
        with self.assertLogs(AUDIT_LOGGER) as logged:
            self.assertInvalidGrant(self.refresh(self.client_id, refresh_token))
        self.assertIn(f"{EVENT_REPLAY_REFUSED} ({REASON_FAMILY_REVOKED})", logged.output[-1])

    @property
    def connection(self) -> tuple[object, ...]:
        return (self.membership.user_id, self.organization.pk, self.client_id)

    def refresh_events(self) -> list[tuple[object, ...]]:
        fields = ("outcome", "detail", "person_id", "organization_id", "client_id")
        return list(AuditEvent.objects.filter(action=AuditAction.REFRESH).values_list(*fields))

    def live_refresh_tokens(self) -> int:
        return RefreshToken.objects.filter(revoked__isnull=True).count()


class ClientPolicyRefusalTests(RefreshRefusalTestCase):
    def test_a_refresh_refused_by_the_policy_stays_refused_once_the_policy_is_loosened(self) -> None:
        self.set_policy(only_listed=True)
        self.assertInvalidGrant(self.refresh(self.client_id, self.tokens["refresh_token"]))
        self.set_policy(only_listed=False)

        self.refused_again(self.tokens["refresh_token"])

    def test_the_refusal_revokes_the_refresh_token_and_its_access_tokens(self) -> None:
        self.set_policy(only_listed=True)

        self.assertInvalidGrant(self.refresh(self.client_id, self.tokens["refresh_token"]))

        self.assertEqual(self.live_refresh_tokens(), 0)
        self.assertFalse(AccessToken.objects.exists())

    def test_the_refusal_is_an_audit_event_naming_the_client_policy(self) -> None:
        self.set_policy(only_listed=True)

        self.refresh(self.client_id, self.tokens["refresh_token"])

        self.assertEqual(self.refresh_events(), [("invalid_grant", {"reason": "client_policy"}, *self.connection)])

    def test_a_rotated_token_refused_within_its_grace_window_ends_its_successor_too(self) -> None:
        rotated = self.refresh(self.client_id, self.tokens["refresh_token"])
        self.assertEqual(rotated.status_code, 200, rotated.content)
        successor = rotated.json()["refresh_token"]
        self.set_policy(only_listed=True)

        self.assertInvalidGrant(self.refresh(self.client_id, self.tokens["refresh_token"]))
        self.set_policy(only_listed=False)

        self.refused_again(successor)
        self.refused_again(self.tokens["refresh_token"])
        self.assertFalse(RefreshRotation.objects.exists())
        self.assertEqual(self.live_refresh_tokens(), 0)

    def test_a_policy_that_admits_the_client_ends_nothing(self) -> None:
        self.set_policy(only_listed=False)

        response = self.refresh(self.client_id, self.tokens["refresh_token"])

        self.assertEqual(response.status_code, 200, response.content)
        self.assertEqual(self.live_refresh_tokens(), 1)


class RoleRefusalTests(RefreshRefusalTestCase):
    def test_a_refresh_refused_for_a_learner_stays_refused_once_the_role_is_restored(self) -> None:
        self.set_role(Role.LEARNER)
        self.assertInvalidGrant(self.refresh(self.client_id, self.tokens["refresh_token"]))
        self.set_role(Role.MEMBER)

        self.refused_again(self.tokens["refresh_token"])

    def test_a_refresh_refused_after_removal_stays_refused_once_the_person_is_added_again(self) -> None:
        Membership.objects.filter(pk=self.membership.pk).delete()
        self.assertInvalidGrant(self.refresh(self.client_id, self.tokens["refresh_token"]))
        make_membership(user=self.membership.user, organization=self.organization, role=Role.MEMBER)

        self.refused_again(self.tokens["refresh_token"])

    def test_the_refusal_is_an_audit_event_naming_the_role(self) -> None:
        self.set_role(Role.LEARNER)

        self.refresh(self.client_id, self.tokens["refresh_token"])

        self.assertEqual(self.refresh_events(), [("invalid_grant", {"reason": "role"}, *self.connection)])

    def test_only_the_refused_connection_ends(self) -> None:
        other = make_organization()
        make_membership(user=self.membership.user, organization=other, role=Role.MEMBER)
        elsewhere = self.tokens_for(self.client_id, organization=other)
        self.set_role(Role.LEARNER)

        self.assertInvalidGrant(self.refresh(self.client_id, self.tokens["refresh_token"]))

        self.assertEqual(self.refresh(self.client_id, elsewhere["refresh_token"]).status_code, 200)
