"""The grace window of a rotated refresh token, through the real token endpoint (docs/authentication.md#refresh-tokens).

Each test rotates R0 to R1 once, then presents R0 again. The window is the
default (60 seconds) unless a test says otherwise; a window that has ended is a
kept answer whose row was made expired, not a patched clock.
"""

from datetime import timedelta

from django.conf import settings
from django.test import override_settings
from django.utils import timezone

from oauth.models import AccessToken, IDToken, RefreshRotation, RefreshToken
from oauth.refresh_grace import EVENT_GRACE_REPLAY, EVENT_REPLAY_REFUSED, EVENT_REUSE_FAMILY_REVOKED
from oauth.tokens import verify_access_token
from organizations.models import Membership, Role
from tests.factories import make_membership, make_user
from tests.oauth.support import REVOKE, OAuthTestCase

AUDIT_LOGGER = "operator.audit"


def _operator(**changes: object) -> dict[str, object]:
    return {**settings.OPERATOR, **changes}


class GraceWindowTestCase(OAuthTestCase):
    scope = "mcp:operator.read"

    def setUp(self) -> None:
        super().setUp()
        self.client_id = self.register()["client_id"]
        self.user = make_user()
        self.membership = make_membership(user=self.user, role=Role.MEMBER)
        self.sign_in(self.user)
        self.first = self.tokens_for(self.client_id, scope=self.scope)
        self.r0 = self.first["refresh_token"]
        self.rotated = self.refresh(self.client_id, self.r0)
        self.assertEqual(self.rotated.status_code, 200, self.rotated.content)
        self.r1 = self.rotated.json()["refresh_token"]

    def assertOAuthError(self, response, error: str) -> None:
        self.assertEqual(response.status_code, 400, response.content)
        self.assertEqual(response.json()["error"], error)

    def end_the_window(self) -> None:
        ended = timezone.now() - timedelta(seconds=1)
        RefreshRotation.objects.update(created=ended - timedelta(seconds=60), expires=ended)

    def live_refresh_tokens(self) -> int:
        return RefreshToken.objects.filter(revoked__isnull=True).count()


class ReplayWithinTheWindowTests(GraceWindowTestCase):
    def test_a_retry_gets_the_same_refresh_token_and_access_token(self) -> None:
        retry = self.refresh(self.client_id, self.r0)

        self.assertEqual(retry.status_code, 200, retry.content)
        self.assertEqual(retry["Cache-Control"], "no-store")
        body = retry.json()
        self.assertEqual(body["refresh_token"], self.r1)
        self.assertEqual(body["access_token"], self.rotated.json()["access_token"])
        self.assertEqual(body["scope"], "mcp:operator.read")
        self.assertEqual(body["token_type"], "Bearer")
        self.assertTrue(3590 <= body["expires_in"] <= 3600, body["expires_in"])

    def test_the_answer_is_for_the_same_person_organization_and_audience(self) -> None:
        claims = verify_access_token(self.refresh(self.client_id, self.r0).json()["access_token"])

        self.assertEqual(claims.user_id, self.user.pk)
        self.assertEqual(claims.organization_id, str(self.membership.organization_id))
        self.assertEqual(claims.client_id, self.client_id)

    def test_a_replay_stores_and_revokes_nothing(self) -> None:
        counts = (AccessToken.objects.count(), RefreshToken.objects.count(), self.live_refresh_tokens())

        self.refresh(self.client_id, self.r0)

        self.assertEqual(
            (AccessToken.objects.count(), RefreshToken.objects.count(), self.live_refresh_tokens()), counts
        )

    def test_the_family_refreshes_on_after_a_replay(self) -> None:
        self.refresh(self.client_id, self.r0)

        response = self.refresh(self.client_id, self.r1)

        self.assertEqual(response.status_code, 200, response.content)
        self.assertNotEqual(response.json()["refresh_token"], self.r1)

    def test_a_replay_is_audited_as_a_grace_replay_without_any_token(self) -> None:
        with self.assertLogs(AUDIT_LOGGER, "INFO") as logs:
            self.refresh(self.client_id, self.r0)

        [record] = logs.records
        self.assertEqual(record.request["event"], EVENT_GRACE_REPLAY)
        self.assertEqual(record.request["client_id"], self.client_id)
        self.assertEqual(record.request["user_id"], self.user.pk)
        logged = repr(record.__dict__)
        for token in (self.r0, self.r1, self.rotated.json()["access_token"]):
            self.assertNotIn(token, logged)

    def test_a_foreign_resource_on_a_replay_is_invalid_target(self) -> None:
        response = self.refresh(self.client_id, self.r0, resource="https://elsewhere.example/")

        self.assertOAuthError(response, "invalid_target")

    def test_the_operator_resource_on_a_replay_is_accepted(self) -> None:
        response = self.refresh(self.client_id, self.r0, resource=self.operator_endpoint())

        self.assertEqual(response.status_code, 200, response.content)
        self.assertEqual(response.json()["refresh_token"], self.r1)


class OpenIdReplayTests(GraceWindowTestCase):
    scope = "openid email mcp:operator.read"

    def test_a_replay_answers_the_rotation_s_id_token_and_mints_none(self) -> None:
        id_tokens = IDToken.objects.count()

        body = self.refresh(self.client_id, self.r0).json()

        self.assertEqual(body["id_token"], self.rotated.json()["id_token"])
        self.assertEqual(IDToken.objects.count(), id_tokens)


class ReplayRefusedWithinTheWindowTests(GraceWindowTestCase):
    def test_another_client_is_refused_and_the_family_lives_on(self) -> None:
        other_client = self.register()["client_id"]

        with self.assertLogs(AUDIT_LOGGER, "INFO") as logs:
            response = self.refresh(other_client, self.r0)

        self.assertOAuthError(response, "invalid_grant")
        self.assertEqual(self.live_refresh_tokens(), 1)
        self.assertEqual(logs.records[0].request["event"], EVENT_REPLAY_REFUSED)
        self.assertEqual(logs.records[0].request["reason"], "other_client")
        self.assertEqual(self.refresh(self.client_id, self.r0).json()["refresh_token"], self.r1)

    def test_after_the_successor_was_revoked_it_is_refused(self) -> None:
        revoke = self.api.post(
            REVOKE, {"token": self.r1, "token_type_hint": "refresh_token", "client_id": self.client_id}
        )
        self.assertEqual(revoke.status_code, 200)

        response = self.refresh(self.client_id, self.r0)

        self.assertOAuthError(response, "invalid_grant")
        self.assertEqual(self.live_refresh_tokens(), 0)

    def test_after_the_person_left_the_organization_it_is_refused(self) -> None:
        Membership.objects.filter(pk=self.membership.pk).delete()

        response = self.refresh(self.client_id, self.r0)

        self.assertOAuthError(response, "invalid_grant")

    def test_after_the_person_became_learner_it_is_refused(self) -> None:
        Membership.objects.filter(pk=self.membership.pk).update(role=Role.LEARNER)

        response = self.refresh(self.client_id, self.r0)

        self.assertOAuthError(response, "invalid_grant")

    def test_past_its_thirty_days_it_is_refused(self) -> None:
        RefreshToken.objects.filter(revoked__isnull=False).update(created=timezone.now() - timedelta(days=30))

        response = self.refresh(self.client_id, self.r0)

        self.assertOAuthError(response, "invalid_grant")

    def test_an_altered_answer_is_refused(self) -> None:
        rotation = RefreshRotation.objects.get()
        sealed = bytearray(rotation.sealed_answer)
        sealed[0] ^= 1
        RefreshRotation.objects.filter(pk=rotation.pk).update(sealed_answer=bytes(sealed))

        with self.assertLogs(AUDIT_LOGGER, "INFO") as logs:
            response = self.refresh(self.client_id, self.r0)

        self.assertOAuthError(response, "invalid_grant")
        self.assertEqual(logs.records[0].request["reason"], "answer_unreadable")


class ReuseRevokesTheFamilyTests(GraceWindowTestCase):
    def test_after_the_successor_was_used_it_is_refused_and_the_newest_token_revoked(self) -> None:
        r2 = self.refresh(self.client_id, self.r1).json()["refresh_token"]

        with self.assertLogs(AUDIT_LOGGER, "INFO") as logs:
            response = self.refresh(self.client_id, self.r0)

        self.assertOAuthError(response, "invalid_grant")
        self.assertEqual(self.live_refresh_tokens(), 0)
        self.assertOAuthError(self.refresh(self.client_id, r2), "invalid_grant")
        self.assertEqual(logs.records[0].request["event"], EVENT_REUSE_FAMILY_REVOKED)
        self.assertEqual(logs.records[0].request["reason"], "successor_used")

    def test_after_the_window_it_is_refused_and_the_family_revoked(self) -> None:
        self.end_the_window()

        with self.assertLogs(AUDIT_LOGGER, "INFO") as logs:
            response = self.refresh(self.client_id, self.r0)

        self.assertOAuthError(response, "invalid_grant")
        self.assertEqual(self.live_refresh_tokens(), 0)
        self.assertOAuthError(self.refresh(self.client_id, self.r1), "invalid_grant")
        self.assertEqual(logs.records[0].request["event"], EVENT_REUSE_FAMILY_REVOKED)
        self.assertEqual(logs.records[0].request["reason"], "outside_window")

    def test_after_the_window_another_client_revokes_the_family_too(self) -> None:
        self.end_the_window()
        other_client = self.register()["client_id"]

        response = self.refresh(other_client, self.r0)

        self.assertOAuthError(response, "invalid_grant")
        self.assertEqual(self.live_refresh_tokens(), 0)

    def test_a_token_of_a_family_already_revoked_is_refused_as_such(self) -> None:
        self.end_the_window()
        self.refresh(self.client_id, self.r0)

        with self.assertLogs(AUDIT_LOGGER, "INFO") as logs:
            response = self.refresh(self.client_id, self.r1)

        self.assertOAuthError(response, "invalid_grant")
        self.assertEqual(logs.records[0].request["event"], EVENT_REPLAY_REFUSED)
        self.assertEqual(logs.records[0].request["reason"], "family_revoked")

    def test_a_revoked_family_forgets_its_kept_answers(self) -> None:
        self.end_the_window()

        self.refresh(self.client_id, self.r0)

        self.assertFalse(RefreshRotation.objects.exists())

    def test_setting_the_window_to_zero_ends_open_windows_at_once(self) -> None:
        with override_settings(OPERATOR=_operator(refresh_token_grace_seconds=0)):
            response = self.refresh(self.client_id, self.r0)

        self.assertOAuthError(response, "invalid_grant")
        self.assertEqual(self.live_refresh_tokens(), 0)


@override_settings(OPERATOR=_operator(refresh_token_grace_seconds=0))
class StrictSingleUseTests(GraceWindowTestCase):
    def test_no_answer_is_kept(self) -> None:
        self.assertFalse(RefreshRotation.objects.exists())

    def test_a_retry_at_once_is_refused_and_revokes_the_family(self) -> None:
        response = self.refresh(self.client_id, self.r0)

        self.assertOAuthError(response, "invalid_grant")
        self.assertOAuthError(self.refresh(self.client_id, self.r1), "invalid_grant")
