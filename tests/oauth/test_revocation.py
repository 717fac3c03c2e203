"""Revocation ends the grant (RFC 7009 §2.1, docs/authentication.md#revocation), on either database.

Each test starts, like the grace window's, from R0 rotated to R1, with R0's
grace window open: the client then revokes one member of the family at the
revocation endpoint. Nothing here depends on the database vendor: the CI run
on PostgreSQL runs the same tests.
"""

from audit.models import AuditAction, AuditEvent
from oauth.models import AccessToken, RefreshRotation
from tests.oauth.support import REVOKE
from tests.oauth.test_refresh_grace import GraceWindowTestCase


class RevocationEndsTheFamilyTests(GraceWindowTestCase):
    def revoke(self, token: str, *, client_id: str | None = None, **extra: str) -> None:
        response = self.api.post(REVOKE, {"token": token, "client_id": client_id or self.client_id, **extra})
        self.assertEqual(response.status_code, 200, response.content)

    def test_a_revoked_rotated_token_is_refused_within_its_window(self) -> None:
        self.revoke(self.r0, token_type_hint="refresh_token")

        response = self.refresh(self.client_id, self.r0)

        self.assertOAuthError(response, "invalid_grant")

    def test_revoking_a_rotated_token_ends_the_current_one(self) -> None:
        self.revoke(self.r0)

        self.assertOAuthError(self.refresh(self.client_id, self.r1), "invalid_grant")
        self.assertEqual(self.live_refresh_tokens(), 0)
        self.assertFalse(AccessToken.objects.exists())
        self.assertFalse(RefreshRotation.objects.exists())

    def test_a_revoked_current_token_is_refused_and_so_is_the_rotated_one(self) -> None:
        self.revoke(self.r1, token_type_hint="refresh_token")

        self.assertOAuthError(self.refresh(self.client_id, self.r1), "invalid_grant")
        self.assertOAuthError(self.refresh(self.client_id, self.r0), "invalid_grant")
        self.assertFalse(RefreshRotation.objects.exists())

    def test_revoking_one_member_ends_every_later_one(self) -> None:
        r2 = self.refresh(self.client_id, self.r1).json()["refresh_token"]

        self.revoke(self.r1, token_type_hint="access_token")

        # The newest first: presenting R0 or R1 first would revoke the family as a reuse.
        for token in (r2, self.r1, self.r0):
            self.assertOAuthError(self.refresh(self.client_id, token), "invalid_grant")
        self.assertEqual(self.live_refresh_tokens(), 0)

    def test_another_client_cannot_revoke_the_family(self) -> None:
        other_client = self.register()["client_id"]

        self.revoke(self.r0, client_id=other_client)

        self.assertEqual(self.live_refresh_tokens(), 1)
        self.assertEqual(self.refresh(self.client_id, self.r0).json()["refresh_token"], self.r1)

    def test_revoking_a_rotated_token_of_a_live_family_is_audited_once(self) -> None:
        self.revoke(self.r0)
        self.revoke(self.r1)

        [event] = AuditEvent.objects.filter(action=AuditAction.REVOCATION)
        self.assertEqual(event.detail, {"token_type": "refresh_token"})
        self.assertEqual(event.person_id, self.user.pk)

    def test_revoking_the_current_access_token_ends_the_family_too(self) -> None:
        self.revoke(self.rotated.json()["access_token"], token_type_hint="access_token")

        self.assertOAuthError(self.refresh(self.client_id, self.r0), "invalid_grant")
        self.assertEqual(self.live_refresh_tokens(), 0)
        self.assertFalse(RefreshRotation.objects.exists())
        [event] = AuditEvent.objects.filter(action=AuditAction.REVOCATION)
        self.assertEqual(event.detail, {"token_type": "access_token"})
