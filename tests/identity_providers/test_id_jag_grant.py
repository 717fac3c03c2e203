"""The token endpoint's JWT bearer grant with an ID-JAG (docs/authentication.md#enterprise-managed-authorization).

The enterprise's provider is tests/identity_providers/provider_server.py in its own
process: it publishes its key set over HTTP and signs each ID-JAG a test
describes (`POST /id-jag`), hostile ones included. Every check of
identity_providers/id_jag.py and oauth/id_jag_grant.py has a test here that
presents an ID-JAG failing that check alone.
"""

import time
import uuid
from typing import Any

import httpx
from django.core.cache import cache

from audit.models import AuditAction, AuditEvent
from identity_providers.models import IdentityLink
from oauth.client_policy import set_client_policy
from oauth.models import AccessToken
from oauth.tokens import verify_access_token
from operator_core.conf import operator_settings
from operator_core.scopes import SCOPE_OPERATOR_READ, SCOPE_OPERATOR_WRITE
from organizations.models import Membership, Role
from tests.factories import make_membership, make_organization, make_user
from tests.identity_providers.support import LiveProvider, configure_provider, provider_key
from tests.oauth.support import TOKEN, OAuthTestCase
from tests.support import pinned_clock

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


class IdJagGrantTestCase(OAuthTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.live_provider = LiveProvider(cls)

    def setUp(self) -> None:
        super().setUp()
        cache.clear()
        self.live_provider.steer()
        self.enterContext(pinned_clock())
        self.enterContext(provider_key())
        self.acme = make_organization(slug="acme", name="Acme")
        self.provider = configure_provider(self.acme, self.live_provider.issuer)
        self.provider.enterprise_managed = True
        self.provider.save()
        self.bob = make_user(email="bob@acme.test")
        self.membership = make_membership(user=self.bob, organization=self.acme, role=Role.MEMBER)
        IdentityLink.objects.create(user=self.bob, issuer=self.live_provider.issuer, subject="bob-1")
        registered = self.register(client_name="Enterprise Agent", token_endpoint_auth_method="client_secret_post")
        self.client_id, self.client_secret = registered["client_id"], registered["client_secret"]

    def claims(self, **changes: Any) -> dict[str, Any]:
        now = int(time.time())
        claims = {
            "iss": self.live_provider.issuer,
            "sub": "bob-1",
            "aud": operator_settings().issuer,
            "client_id": self.client_id,
            "resource": operator_settings().operator_endpoint_url,
            "scope": f"{SCOPE_OPERATOR_READ} {SCOPE_OPERATOR_WRITE}",
            "jti": uuid.uuid4().hex,
            "iat": now,
            "exp": now + 300,
            "email": "bob@acme.test",
            **changes,
        }
        return {name: value for name, value in claims.items() if value is not None}

    def id_jag(self, *, header: dict[str, Any] | None = None, forge: bool = False, **changes: Any) -> str:
        body = {"claims": self.claims(**changes), "header": header or {}, "forge": forge}
        response = httpx.post(f"{self.live_provider.issuer}/id-jag", json=body, timeout=10)
        response.raise_for_status()
        return str(response.json()["assertion"])

    def present(self, assertion: str, **fields: str) -> Any:
        form = {
            "grant_type": JWT_BEARER,
            "assertion": assertion,
            "client_id": self.client_id,
            "client_secret": self.client_secret,
            **fields,
        }
        return self.api.post(TOKEN, form)

    def assert_refused(self, response: Any, error: str, reason: str, *, status: int = 400) -> None:
        self.assertEqual(response.status_code, status, response.content)
        body = response.json()
        self.assertEqual(body["error"], error)
        self.assertTrue(body["error_description"])
        # Nothing of the assertion comes back.
        self.assertNotIn("bob-1", response.content.decode())
        self.assertNotIn("bob@acme.test", response.content.decode())
        self.assertEqual(response["Cache-Control"], "no-store")
        self.assertFalse(AccessToken.objects.exists())
        event = AuditEvent.objects.filter(action=AuditAction.ID_JAG_GRANT).order_by("-id").first()
        assert event is not None
        self.assertEqual((event.outcome, event.detail.get("reason")), (error, reason))
        self.assertEqual(event.client_id, self.client_id)


class IdJagGrantedTests(IdJagGrantTestCase):
    def test_an_id_jag_of_a_trusted_provider_gets_the_access_token_every_client_gets_and_no_refresh_token(
        self,
    ) -> None:
        response = self.present(self.id_jag(), scope=SCOPE_OPERATOR_READ)

        self.assertEqual(response.status_code, 200, response.content)
        body = response.json()
        self.assertNotIn("refresh_token", body)
        self.assertEqual((body["token_type"], body["scope"]), ("Bearer", SCOPE_OPERATOR_READ))
        claims = verify_access_token(body["access_token"])
        self.assertEqual((claims.user_id, claims.organization_id), (self.bob.pk, str(self.acme.pk)))
        self.assertEqual((claims.client_id, claims.scopes), (self.client_id, frozenset({SCOPE_OPERATOR_READ})))
        self.assertEqual(AccessToken.objects.get().organization_id, self.acme.pk)
        event = AuditEvent.objects.get(action=AuditAction.ID_JAG_GRANT)
        self.assertEqual((event.outcome, event.person_id, event.client_id), ("ok", self.bob.pk, self.client_id))
        self.assertEqual(event.detail["issuer"], self.live_provider.issuer)
        self.assertNotIn(body["access_token"], str(event.detail))

    def test_the_scopes_are_those_of_the_request_within_the_id_jag(self) -> None:
        response = self.present(
            self.id_jag(scope=SCOPE_OPERATOR_READ), scope=f"{SCOPE_OPERATOR_READ} {SCOPE_OPERATOR_WRITE}"
        )
        self.assertEqual(response.json()["scope"], SCOPE_OPERATOR_READ)

    def test_a_scope_wholly_outside_the_id_jag_is_invalid_scope(self) -> None:
        response = self.present(self.id_jag(scope=SCOPE_OPERATOR_READ), scope=SCOPE_OPERATOR_WRITE)
        self.assert_refused(response, "invalid_scope", "scope_not_granted")

    def test_link_by_email_links_a_person_with_no_link_yet(self) -> None:
        IdentityLink.objects.all().delete()
        self.provider.link_by_email = True
        self.provider.save()

        response = self.present(self.id_jag())

        self.assertEqual(response.status_code, 200, response.content)
        self.assertTrue(IdentityLink.objects.filter(user=self.bob, subject="bob-1").exists())


class IdJagRefusedTests(IdJagGrantTestCase):
    def test_a_forged_signature_is_refused(self) -> None:
        self.assert_refused(self.present(self.id_jag(forge=True)), "invalid_grant", "invalid_signature")

    def test_an_expired_id_jag_is_refused(self) -> None:
        now = int(time.time())
        assertion = self.id_jag(iat=now - 400, exp=now - 100)
        self.assert_refused(self.present(assertion), "invalid_grant", "expired")

    def test_an_id_jag_living_longer_than_the_maximum_is_refused(self) -> None:
        now = int(time.time())
        self.assert_refused(self.present(self.id_jag(exp=now + 3600)), "invalid_grant", "lifetime_too_long")

    def test_a_wrong_typ_is_refused(self) -> None:
        self.assert_refused(self.present(self.id_jag(header={"typ": "JWT"})), "invalid_grant", "wrong_type")

    def test_a_symmetric_algorithm_is_refused(self) -> None:
        assertion = self.id_jag(header={"alg": "HS256"})
        self.assert_refused(self.present(assertion), "invalid_grant", "wrong_algorithm")

    def test_a_wrong_audience_is_refused(self) -> None:
        assertion = self.id_jag(aud="https://another-server.example/api/auth")
        self.assert_refused(self.present(assertion), "invalid_grant", "wrong_audience")

    def test_a_client_id_claim_of_another_client_is_refused(self) -> None:
        self.assert_refused(self.present(self.id_jag(client_id="another-client")), "invalid_grant", "wrong_client")

    def test_a_resource_claim_naming_another_server_is_invalid_target(self) -> None:
        assertion = self.id_jag(resource="https://another-server.example/mcp")
        self.assert_refused(self.present(assertion), "invalid_target", "wrong_resource")

    def test_an_issuer_not_trusted_for_enterprise_managed_authorization_is_refused(self) -> None:
        self.provider.enterprise_managed = False
        self.provider.save()
        self.assert_refused(self.present(self.id_jag()), "invalid_grant", "untrusted_issuer")

    def test_an_issuer_trusted_for_another_organization_grants_nothing_here(self) -> None:
        other = make_organization(slug="other")
        self.provider.organization = other
        self.provider.save()
        self.assert_refused(self.present(self.id_jag()), "invalid_grant", "no_role")

    def test_a_replayed_jti_is_refused(self) -> None:
        assertion = self.id_jag()
        self.assertEqual(self.present(assertion).status_code, 200)
        AccessToken.objects.all().delete()

        self.assert_refused(self.present(assertion), "invalid_grant", "replayed")

    def test_an_unlinked_subject_is_refused_without_link_by_email(self) -> None:
        self.assert_refused(self.present(self.id_jag(sub="stranger")), "invalid_grant", "unlinked_subject")
        self.assertFalse(IdentityLink.objects.filter(subject="stranger").exists())

    def test_link_by_email_never_links_an_email_outside_the_provider_domains(self) -> None:
        IdentityLink.objects.all().delete()
        self.provider.link_by_email = True
        self.provider.save()
        make_user(email="eve@elsewhere.test")
        assertion = self.id_jag(sub="eve-1", email="eve@elsewhere.test")
        self.assert_refused(self.present(assertion), "invalid_grant", "unlinked_subject")

    def test_a_learner_or_a_removed_person_is_refused(self) -> None:
        self.membership.role = Role.LEARNER
        self.membership.save()
        self.assert_refused(self.present(self.id_jag()), "invalid_grant", "no_role")
        Membership.objects.all().delete()
        self.assert_refused(self.present(self.id_jag()), "invalid_grant", "no_role")

    def test_a_client_the_provider_may_not_name_is_refused(self) -> None:
        self.provider.ema_client_ids = ["claude-desktop"]
        self.provider.save()
        self.assert_refused(self.present(self.id_jag()), "unauthorized_client", "client_not_allowed")

    def test_a_client_outside_the_organization_allow_list_is_refused(self) -> None:
        admin = make_user(email="ada@acme.test")
        set_client_policy(
            organization=self.acme,
            actor=admin,
            only_listed=True,
            dynamic_clients=False,
            metadata_hosts=[],
            applications=[],
        )
        self.assert_refused(self.present(self.id_jag()), "unauthorized_client", "client_policy")

    def test_a_key_set_that_cannot_be_fetched_is_invalid_grant_with_a_log_line(self) -> None:
        self.live_provider.steer(jwks="malformed")
        with self.assertLogs("identity_providers.id_jag", level="WARNING") as logs:
            self.assert_refused(self.present(self.id_jag()), "invalid_grant", "keys_unavailable")
        self.assertIn(self.live_provider.issuer, logs.output[0])

    def test_a_wrong_client_secret_is_invalid_client_and_checks_nothing_else(self) -> None:
        response = self.present(self.id_jag(), client_secret="wrong")
        self.assertEqual(response.status_code, 401)
        self.assertEqual(response.json()["error"], "invalid_client")
        self.assertFalse(AuditEvent.objects.filter(action=AuditAction.ID_JAG_GRANT).exists())
