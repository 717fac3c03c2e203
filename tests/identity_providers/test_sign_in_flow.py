"""Single sign-on against a real OpenID Connect provider in its own process (docs/authentication.md#2-sign-in).

Our side runs in Django's test client; the provider is tests/identity_providers/provider_server.py
over real HTTP, steered before each sign-in to answer as a broken or hostile provider would.
"""

import time
from unittest import mock
from urllib.parse import parse_qs, urlsplit

from django.conf import settings
from django.core.cache import cache
from django.test import TestCase

from audit.models import AuditAction, AuditEvent
from identity_providers import fetching, sign_in
from identity_providers.models import IdentityLink
from organizations.models import Membership, Role
from tests.factories import make_membership, make_organization, make_user
from tests.identity_providers.support import (
    SIGN_IN,
    LiveProvider,
    callback_from_provider,
    configure_provider,
    provider_key,
    provider_url_of,
    sign_in_through_provider,
)
from tests.live_servers import free_port
from tests.support import pinned_clock

NEXT = "/api/auth/oauth2/authorize?client_id=abc"


class ProviderSignInTests(TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.live_provider = LiveProvider(cls)

    def setUp(self) -> None:
        cache.clear()
        self.enterContext(pinned_clock())
        self.enterContext(provider_key())
        self.acme = make_organization(slug="acme", name="Acme")
        self.provider = configure_provider(self.acme, self.live_provider.issuer)
        self.bob = make_user(email="bob@acme.test")
        make_membership(user=self.bob, organization=self.acme, role=Role.MEMBER)
        self.live_provider.person(sub="bob-1", email="bob@acme.test")

    def outcomes(self) -> list[str]:
        events = AuditEvent.objects.filter(action=AuditAction.PROVIDER_SIGN_IN).order_by("id")
        return [event.outcome for event in events]

    def assert_refused(self, response, reason: str, text: str, *, status: int = 403) -> None:
        self.assertEqual(response.status_code, status, response.content[:800])
        self.assertContains(response, text, status_code=status)
        self.assertIn("no-store", response["Cache-Control"])
        self.assertNotIn("_auth_user_id", self.client.session)
        self.assertEqual(self.outcomes()[-1], reason)

    # --- the happy path -------------------------------------------------------------

    def test_a_person_of_a_provider_domain_is_sent_there_with_pkce_state_nonce_and_login_hint(self) -> None:
        page = self.client.post(SIGN_IN, {"email": "Bob@ACME.test", "next": NEXT})

        self.assertEqual(page.status_code, 200)
        self.assertContains(page, 'http-equiv="refresh"')
        url = urlsplit(provider_url_of(page.content.decode()))
        query = {key: values[0] for key, values in parse_qs(url.query).items()}
        self.assertEqual(f"{url.scheme}://{url.netloc}{url.path}", f"{self.live_provider.issuer}/authorize")
        self.assertEqual(query["response_type"], "code")
        self.assertEqual(query["client_id"], "service-operator")
        self.assertEqual(query["scope"], "openid email profile")
        self.assertEqual(query["code_challenge_method"], "S256")
        self.assertEqual(query["login_hint"], "Bob@ACME.test")
        self.assertEqual(query["redirect_uri"], "http://testserver/api/auth/sso/callback")
        self.assertTrue(query["state"] and query["nonce"] and query["code_challenge"])

    def test_the_provider_signs_the_person_in_links_them_and_returns_to_next(self) -> None:
        _callback, response = sign_in_through_provider(self.client, "bob@acme.test", next_url=NEXT)

        self.assertEqual(response.status_code, 302)
        self.assertEqual(response["Location"], NEXT)
        self.assertEqual(int(self.client.session["_auth_user_id"]), self.bob.pk)
        link = IdentityLink.objects.get(user=self.bob)
        self.assertEqual((link.issuer, link.subject), (self.live_provider.issuer, "bob-1"))
        self.assertEqual(self.outcomes(), ["ok"])
        linked = AuditEvent.objects.get(action=AuditAction.IDENTITY_LINK)
        self.assertEqual((linked.person_id, linked.organization_id), (self.bob.pk, self.acme.pk))

    def test_a_later_sign_in_uses_the_link_and_links_nothing_new(self) -> None:
        sign_in_through_provider(self.client, "bob@acme.test")
        self.client.logout()

        sign_in_through_provider(self.client, "bob@acme.test")

        self.assertEqual(int(self.client.session["_auth_user_id"]), self.bob.pk)
        self.assertEqual(AuditEvent.objects.filter(action=AuditAction.IDENTITY_LINK).count(), 1)
        self.assertEqual(self.outcomes(), ["ok", "ok"])

    def test_a_rotated_key_is_fetched_once_and_the_sign_in_succeeds(self) -> None:
        sign_in_through_provider(self.client, "bob@acme.test")  # the first key set is cached
        self.client.logout()
        self.live_provider.person(sub="bob-1", email="bob@acme.test", rotate=True)

        _callback, response = sign_in_through_provider(self.client, "bob@acme.test", next_url=NEXT)

        self.assertEqual(response.status_code, 302)
        self.assertEqual(self.outcomes(), ["ok", "ok"])

    def test_next_on_another_host_is_not_followed_after_the_provider(self) -> None:
        _callback, response = sign_in_through_provider(self.client, "bob@acme.test", next_url="https://evil.example/")

        self.assertEqual(response.status_code, 200)
        self.assertContains(response, "You are signed in")

    def test_a_domain_without_a_provider_gets_the_password_field(self) -> None:
        response = self.client.post(SIGN_IN, {"email": "carol@elsewhere.test", "next": NEXT})

        self.assertEqual(response.status_code, 200)
        self.assertContains(response, 'name="password"')
        self.assertContains(response, 'value="carol@elsewhere.test"')

    def test_a_new_person_gets_an_account_and_the_requester_role_when_the_provider_creates_requesters(self) -> None:
        self.provider.create_requesters = True
        self.provider.save()
        self.live_provider.person(sub="dana-1", email="Dana@Acme.test")

        _callback, response = sign_in_through_provider(self.client, "dana@acme.test")

        self.assertEqual(response.status_code, 200)
        membership = Membership.objects.get(user__username="dana@acme.test")
        self.assertEqual((membership.organization, membership.role), (self.acme, Role.REQUESTER))
        self.assertFalse(membership.user.has_usable_password())
        self.assertEqual(membership.user.email, "dana@acme.test")

    # --- refusals ---------------------------------------------------------------------

    def test_password_sign_in_is_refused_for_a_domain_whose_provider_is_required(self) -> None:
        self.provider.required = True
        self.provider.save()

        response = self.client.post(SIGN_IN, {"email": "bob@acme.test", "password": "correct-horse-battery-staple"})

        self.assertContains(response, "does not accept a password", status_code=403)
        self.assertNotIn("_auth_user_id", self.client.session)

    def test_access_denied_by_the_provider_is_a_page(self) -> None:
        self.live_provider.steer(deny=True)

        _callback, response = sign_in_through_provider(self.client, "bob@acme.test")

        self.assert_refused(response, "provider_error", "access_denied")

    def test_a_replayed_state_is_refused(self) -> None:
        callback, first = sign_in_through_provider(self.client, "bob@acme.test")
        self.assertEqual(first.status_code, 200)

        response = self.client.get(callback)

        self.assertContains(response, "already used", status_code=403)
        self.assertEqual(self.outcomes(), ["ok", "invalid_state"])

    def test_a_sign_in_left_pending_too_long_is_refused(self) -> None:
        page = self.client.post(SIGN_IN, {"email": "bob@acme.test"})
        callback = callback_from_provider(provider_url_of(page.content.decode()))
        later = time.time() + sign_in.PENDING_SECONDS + 1

        with mock.patch.object(sign_in, "time", mock.Mock(time=mock.Mock(return_value=later))):
            response = self.client.get(callback)

        self.assert_refused(response, "invalid_state", "has expired")

    def test_a_forged_signature_is_refused(self) -> None:
        self.live_provider.person(sub="bob-1", email="bob@acme.test", forge=True)

        _callback, response = sign_in_through_provider(self.client, "bob@acme.test")

        self.assert_refused(response, "invalid_signature", "could not be verified")

    def test_an_expired_id_token_is_refused(self) -> None:
        past = int(time.time()) - 3600
        self.live_provider.person(sub="bob-1", email="bob@acme.test", claims={"exp": past, "iat": past - 60})

        _callback, response = sign_in_through_provider(self.client, "bob@acme.test")

        self.assert_refused(response, "expired_id_token", "had expired")

    def test_an_id_token_for_another_audience_is_refused(self) -> None:
        self.live_provider.person(sub="bob-1", email="bob@acme.test", claims={"aud": "another-client"})

        _callback, response = sign_in_through_provider(self.client, "bob@acme.test")

        self.assert_refused(response, "invalid_id_token", "not meant for this sign-in")

    def test_an_id_token_for_another_audience_is_refused_even_when_it_names_us_as_azp(self) -> None:
        claims = {"aud": "another-client", "azp": "service-operator"}
        self.live_provider.person(sub="bob-1", email="bob@acme.test", claims=claims)

        _callback, response = sign_in_through_provider(self.client, "bob@acme.test")

        self.assert_refused(response, "invalid_id_token", "(aud)")

    def test_an_id_token_authorized_for_another_party_is_refused(self) -> None:
        self.live_provider.person(sub="bob-1", email="bob@acme.test", claims={"azp": "another-client"})

        _callback, response = sign_in_through_provider(self.client, "bob@acme.test")

        self.assert_refused(response, "invalid_id_token", "(azp)")

    def test_an_id_token_with_another_nonce_is_refused(self) -> None:
        self.live_provider.person(sub="bob-1", email="bob@acme.test", claims={"nonce": "someone-elses"})

        _callback, response = sign_in_through_provider(self.client, "bob@acme.test")

        self.assert_refused(response, "invalid_id_token", "(nonce)")

    def test_an_id_token_from_another_issuer_is_refused(self) -> None:
        self.live_provider.person(sub="bob-1", email="bob@acme.test", claims={"iss": "https://evil.example"})

        _callback, response = sign_in_through_provider(self.client, "bob@acme.test")

        self.assert_refused(response, "invalid_id_token", "(iss)")

    def test_an_unverified_email_is_refused(self) -> None:
        self.live_provider.person(sub="bob-1", email="bob@acme.test", verified=False)

        _callback, response = sign_in_through_provider(self.client, "bob@acme.test")

        self.assert_refused(response, "email_unverified", "has not verified your email")

    def test_entra_s_domain_verified_claim_stands_for_a_missing_email_verified(self) -> None:
        self.live_provider.steer(identity={"sub": "bob-1", "email": "bob@acme.test", "xms_edov": True})

        _callback, response = sign_in_through_provider(self.client, "bob@acme.test", next_url=NEXT)

        self.assertEqual(response["Location"], NEXT)
        self.assertEqual(int(self.client.session["_auth_user_id"]), self.bob.pk)

    def test_an_email_neither_verified_nor_of_a_verified_domain_is_refused(self) -> None:
        cases = [
            {"email_verified": False, "xms_edov": True},  # an explicit false is never overridden
            {"xms_edov": False},
            {},
        ]
        for number, flags in enumerate(cases):
            with self.subTest(flags=flags):
                self.client.logout()
                self.live_provider.steer(identity={"sub": f"bob-{number}", "email": "bob@acme.test", **flags})

                _callback, response = sign_in_through_provider(self.client, "bob@acme.test")

                self.assert_refused(response, "email_unverified", "has not verified your email")

    def test_an_email_outside_the_providers_domains_is_refused(self) -> None:
        make_user(email="bob@globex.test")  # someone else's account, which Acme's provider must not reach
        self.live_provider.person(sub="bob-1", email="bob@globex.test")

        _callback, response = sign_in_through_provider(self.client, "bob@acme.test")

        self.assert_refused(response, "email_outside_domains", "outside the domains")

    def test_a_changed_email_for_a_linked_subject_is_refused_and_audited(self) -> None:
        sign_in_through_provider(self.client, "bob@acme.test")
        self.client.logout()
        make_user(email="robert@acme.test")
        self.live_provider.person(sub="bob-1", email="robert@acme.test")

        _callback, response = sign_in_through_provider(self.client, "robert@acme.test")

        self.assert_refused(response, "email_changed", "no longer matches")
        refusal = AuditEvent.objects.filter(action=AuditAction.PROVIDER_SIGN_IN).latest("id")
        self.assertEqual(refusal.person_id, self.bob.pk)

    def test_an_account_linked_to_another_subject_is_refused(self) -> None:
        sign_in_through_provider(self.client, "bob@acme.test")
        self.client.logout()
        self.live_provider.person(sub="someone-new", email="bob@acme.test")

        _callback, response = sign_in_through_provider(self.client, "bob@acme.test")

        self.assert_refused(response, "subject_changed", "linked to another person")

    def test_a_person_without_an_account_is_refused_by_default(self) -> None:
        self.live_provider.person(sub="dana-1", email="dana@acme.test")

        _callback, response = sign_in_through_provider(self.client, "dana@acme.test")

        self.assert_refused(response, "no_account", "you have no account here")

    def test_a_provider_that_does_not_answer_is_a_page(self) -> None:
        self.provider.issuer = f"http://127.0.0.1:{free_port()}"  # nothing listens there
        self.provider.save()

        response = self.client.post(SIGN_IN, {"email": "bob@acme.test"})

        self.assertContains(response, "did not answer in time", status_code=502)
        self.assertEqual(self.outcomes(), ["provider_unavailable"])

    def test_a_slow_token_endpoint_is_a_page_after_the_read_timeout(self) -> None:
        self.live_provider.person(sub="bob-1", email="bob@acme.test", token="slow", slow_seconds=3)

        with mock.patch.object(fetching, "READ_TIMEOUT_SECONDS", 0.5):
            _callback, response = sign_in_through_provider(self.client, "bob@acme.test")

        self.assert_refused(response, "provider_unavailable", "did not answer in time", status=502)

    def test_a_malformed_discovery_document_is_a_page(self) -> None:
        self.live_provider.steer(discovery="malformed")

        response = self.client.post(SIGN_IN, {"email": "bob@acme.test"})

        self.assertContains(response, "cannot read", status_code=502)
        self.assertEqual(self.outcomes(), ["provider_malformed"])

    def test_a_discovery_document_naming_another_issuer_is_a_page(self) -> None:
        self.live_provider.steer(discovery="another_issuer")

        response = self.client.post(SIGN_IN, {"email": "bob@acme.test"})

        self.assertContains(response, "cannot read", status_code=502)
        self.assertEqual(self.outcomes(), ["provider_malformed"])

    def test_a_malformed_key_set_is_a_page(self) -> None:
        self.live_provider.person(sub="bob-1", email="bob@acme.test", jwks="malformed")

        _callback, response = sign_in_through_provider(self.client, "bob@acme.test")

        self.assert_refused(response, "provider_malformed", "cannot read", status=502)

    def test_an_endless_token_answer_is_cut_short(self) -> None:
        self.live_provider.person(sub="bob-1", email="bob@acme.test", token="huge")

        _callback, response = sign_in_through_provider(self.client, "bob@acme.test")

        self.assert_refused(response, "provider_malformed", "cannot read", status=502)

    def test_refusals_count_against_the_sign_in_limit(self) -> None:
        self.live_provider.steer(deny=True)
        with self.settings(OPERATOR={**settings.OPERATOR, "sign_in_attempts_per_minute": 3}):
            # each round: the email step counts one attempt, the refusal another
            sign_in_through_provider(self.client, "bob@acme.test")
            page = self.client.post(SIGN_IN, {"email": "bob@acme.test"})
            callback = callback_from_provider(provider_url_of(page.content.decode()))
            response = self.client.get(callback)

        self.assertEqual(response.status_code, 429)
        self.assertContains(response, "Too many sign-in attempts", status_code=429)
