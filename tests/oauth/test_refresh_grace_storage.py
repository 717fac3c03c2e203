"""What the grace window keeps at rest: a sealed answer only the rotated token opens, for the window only."""

import io
from datetime import timedelta

from cryptography.exceptions import InvalidTag
from django.core.management import call_command
from django.utils import timezone

from oauth.models import RefreshRotation, RefreshToken
from oauth.refresh_grace import open_answer
from organizations.models import Role
from tests.factories import make_membership
from tests.oauth.support import OAuthTestCase


class KeptAnswerTests(OAuthTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.client_id = self.register()["client_id"]
        self.sign_in(make_membership(role=Role.MEMBER).user)
        self.first = self.tokens_for(self.client_id)
        self.rotated = self.refresh(self.client_id, self.first["refresh_token"]).json()
        self.rotation = RefreshRotation.objects.get()

    def test_one_answer_is_kept_per_rotation_beside_the_rotated_token(self) -> None:
        rotated = RefreshToken.objects.get(revoked__isnull=False)
        successor = RefreshToken.objects.get(revoked__isnull=True)

        self.assertEqual(self.rotation.rotated, rotated)
        self.assertEqual(self.rotation.successor, successor)

    def test_the_answer_is_kept_for_the_window(self) -> None:
        self.assertEqual(self.rotation.expires - self.rotation.created, timedelta(seconds=60))
        self.assertAlmostEqual((self.rotation.expires - timezone.now()).total_seconds(), 60, delta=10)

    def test_the_kept_row_holds_no_token_in_plaintext(self) -> None:
        stored = b"".join(
            bytes(value) if isinstance(value, bytes | memoryview) else str(value).encode()
            for value in RefreshRotation.objects.values_list().get()
        )

        for token in (self.first["refresh_token"], self.rotated["refresh_token"], self.rotated["access_token"]):
            self.assertNotIn(token.encode(), stored)

    def test_the_rotated_token_opens_the_answer(self) -> None:
        answer = open_answer(self.rotation, refresh_token=self.first["refresh_token"])

        self.assertEqual(answer["refresh_token"], self.rotated["refresh_token"])
        self.assertEqual(answer["access_token"], self.rotated["access_token"])

    def test_neither_the_successor_nor_the_stored_digest_opens_the_answer(self) -> None:
        digest = RefreshToken.objects.get(revoked__isnull=False).token_checksum

        for key in (self.rotated["refresh_token"], digest):
            with self.assertRaises(InvalidTag):
                open_answer(self.rotation, refresh_token=key)

    def test_an_answer_moved_onto_another_rotation_does_not_open(self) -> None:
        self.rotation.successor_id = RefreshToken.objects.get(revoked__isnull=False).pk

        with self.assertRaises(InvalidTag):
            open_answer(self.rotation, refresh_token=self.first["refresh_token"])

    def test_the_next_token_request_deletes_answers_whose_window_ended(self) -> None:
        RefreshRotation.objects.update(expires=timezone.now() - timedelta(seconds=1))

        self.tokens_for(self.client_id)

        self.assertFalse(RefreshRotation.objects.exists())

    def test_the_next_token_request_keeps_answers_within_their_window(self) -> None:
        self.tokens_for(self.client_id)

        self.assertTrue(RefreshRotation.objects.filter(pk=self.rotation.pk).exists())

    def test_purge_expired_deletes_answers_whose_window_ended(self) -> None:
        RefreshRotation.objects.update(expires=timezone.now() - timedelta(seconds=1))
        out = io.StringIO()

        call_command("purge_expired", stdout=out)

        self.assertFalse(RefreshRotation.objects.exists())
        self.assertIn("1 refresh answers", out.getvalue())
