"""An organization's client policy at consent, code exchange and refresh.

docs/managing-connections.md#the-client-policy says what a person and an admin see.
"""

import html
import re

from django.core.cache import cache

from audit.models import AuditAction, AuditEvent
from oauth.client_policy import client_admitted, normalise_metadata_hosts, set_client_policy
from oauth.models import Application
from operator_core.conf import operator_settings
from operator_core.errors import InvalidArguments
from organizations.models import Role
from tests.factories import make_membership
from tests.oauth.support import AUTHORIZE, REDIRECT_URI, OAuthTestCase, pkce_pair, query_of
from tests.oauth.test_cimd import CLIENT_ID as CIMD_CLIENT_ID
from tests.oauth.test_cimd import with_fetcher

LOCAL_FETCHER = "tests.oauth.test_cimd.LocalDocumentFetcher"


class ClientPolicyTestCase(OAuthTestCase):
    def setUp(self) -> None:
        super().setUp()
        cache.clear()
        self.membership = make_membership(role=Role.MEMBER)
        self.organization = self.membership.organization
        self.admin = make_membership(role=Role.ADMIN, organization=self.organization).user
        self.sign_in(self.membership.user)

    def restrict(self, **policy: object) -> None:
        set_client_policy(
            organization=self.organization,
            actor=self.admin,
            only_listed=True,
            dynamic_clients=policy.get("dynamic_clients", False),
            metadata_hosts=policy.get("metadata_hosts", []),
            applications=policy.get("applications", []),
        )


class ConsentTests(ClientPolicyTestCase):
    def test_without_a_policy_any_client_connects(self) -> None:
        client_id = self.register()["client_id"]

        self.assertIn("access_token", self.tokens_for(client_id))

    def test_a_dynamically_registered_client_is_refused_while_the_class_is_off(self) -> None:
        client_id = self.register(client_name="Claude")["client_id"]
        self.restrict(metadata_hosts=["claude.ai"])

        response, _ = self.consent(client_id)

        self.assertEqual(response.status_code, 403)
        self.assertContains(response, "does not allow this application", status_code=403)
        self.assertContains(response, "clients whose metadata document is served by claude.ai", status_code=403)
        self.assertFalse(response.has_header("Location"))
        refusal = AuditEvent.objects.get(action=AuditAction.AUTHORIZATION)
        self.assertEqual((refusal.outcome, refusal.detail), ("access_denied", {"reason": "client_policy"}))

    def test_the_refusal_page_links_back_to_the_client_with_access_denied(self) -> None:
        client_id = self.register(client_name="Claude")["client_id"]
        self.restrict()

        response, _ = self.consent(client_id)

        link = re.search(r'<a href="([^"]+)" id="return-to-application">', response.content.decode())
        location = html.unescape(link.group(1))
        self.assertTrue(location.startswith(REDIRECT_URI + "?"), location)
        query = query_of(location)
        self.assertEqual(query["error"], ["access_denied"])
        self.assertIn("client policy", query["error_description"][0])
        self.assertEqual(query["state"], ["state-123"])
        self.assertEqual(query["iss"], [operator_settings().issuer])

    def test_a_refusal_for_an_unregistered_redirect_uri_links_nowhere(self) -> None:
        client_id = self.register()["client_id"]
        self.restrict()
        page = self.browser.get(AUTHORIZE, self.authorize_params(client_id, pkce_pair()[1]))
        form = {key: value for key, value in page.context["form"].initial.items() if value is not None}
        form.update(organization=str(self.organization.pk), allow="true", redirect_uri="https://attacker.test/cb")

        response = self.browser.post(AUTHORIZE, form)

        self.assertNotContains(response, 'href="https://attacker.test', status_code=response.status_code)
        self.assertNotContains(response, "return-to-application", status_code=response.status_code)
        self.assertFalse(response.has_header("Location"))

    def test_the_dynamic_class_switched_on_admits_a_dynamically_registered_client(self) -> None:
        client_id = self.register()["client_id"]
        self.restrict(dynamic_clients=True)

        self.assertIn("access_token", self.tokens_for(client_id))

    def test_a_listed_client_connects(self) -> None:
        client_id = self.register()["client_id"]
        self.restrict(applications=[Application.objects.get(client_id=client_id)])

        self.assertIn("access_token", self.tokens_for(client_id))

    def test_the_name_of_a_listed_client_never_admits_another(self) -> None:
        listed = Application.objects.get(client_id=self.register(client_name="Claude")["client_id"])
        impostor = self.register(client_name="Claude")["client_id"]
        self.restrict(applications=[listed])

        response, _ = self.consent(impostor)

        self.assertEqual(response.status_code, 403)

    def test_a_metadata_document_client_of_a_listed_host_connects(self) -> None:
        self.restrict(metadata_hosts=["agent.example"])

        with self.settings(OAUTH2_PROVIDER=with_fetcher(LOCAL_FETCHER)):
            body = self.tokens_for(CIMD_CLIENT_ID)

        self.assertIn("access_token", body)

    def test_a_metadata_document_client_of_another_host_is_refused(self) -> None:
        self.restrict(metadata_hosts=["claude.ai"])

        with self.settings(OAUTH2_PROVIDER=with_fetcher(LOCAL_FETCHER)):
            response, _ = self.consent(CIMD_CLIENT_ID)

        self.assertEqual(response.status_code, 403)

    def test_the_policy_applies_to_the_organization_chosen_only(self) -> None:
        other = make_membership(role=Role.MEMBER, user=self.membership.user).organization
        client_id = self.register()["client_id"]
        self.restrict()

        self.assertIn("access_token", self.tokens_for(client_id, organization=other))


class TokenEndpointTests(ClientPolicyTestCase):
    def test_a_policy_tightened_after_consent_refuses_the_code_exchange(self) -> None:
        client_id = self.register()["client_id"]
        authorization = self.authorize(client_id)
        self.restrict()

        response = self.exchange(client_id, authorization)

        self.assertEqual(response.status_code, 400)
        self.assertEqual(response.json()["error"], "invalid_grant")

    def test_a_policy_tightened_after_connecting_refuses_the_next_refresh(self) -> None:
        client_id = self.register()["client_id"]
        tokens = self.tokens_for(client_id)
        self.restrict(metadata_hosts=["claude.ai"])

        response = self.refresh(client_id, tokens["refresh_token"])

        self.assertEqual(response.status_code, 400)
        self.assertEqual(response.json()["error"], "invalid_grant")

    def test_a_policy_that_still_admits_the_client_lets_it_refresh(self) -> None:
        client_id = self.register()["client_id"]
        tokens = self.tokens_for(client_id)
        self.restrict(dynamic_clients=True)

        response = self.refresh(client_id, tokens["refresh_token"])

        self.assertEqual(response.status_code, 200, response.content)


class PolicyRuleTests(ClientPolicyTestCase):
    def test_a_client_registered_by_the_operators_is_admitted_only_when_listed(self) -> None:
        manual = Application.objects.create(
            name="Staff client",
            client_type=Application.CLIENT_PUBLIC,
            authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
            redirect_uris="http://127.0.0.1:8765/callback",
        )
        self.restrict(dynamic_clients=True, metadata_hosts=["claude.ai"])
        self.assertFalse(client_admitted(manual, organization_id=self.organization.pk))

        self.restrict(applications=[manual])

        self.assertTrue(client_admitted(manual, organization_id=self.organization.pk))

    def test_every_change_is_an_audit_record_naming_the_admin_and_the_new_policy(self) -> None:
        self.restrict(metadata_hosts=["claude.ai"], dynamic_clients=True)

        event = AuditEvent.objects.get(action=AuditAction.CLIENT_POLICY_CHANGE)
        self.assertEqual((event.actor_id, event.organization_id), (self.admin.pk, self.organization.pk))
        self.assertEqual(
            event.detail,
            {"only_listed": True, "dynamic_clients": True, "metadata_hosts": ["claude.ai"], "client_ids": []},
        )


class MetadataHostTests(OAuthTestCase):
    def test_hosts_are_lowercased_deduplicated_and_taken_from_pasted_urls(self) -> None:
        hosts = normalise_metadata_hosts(["Claude.AI", " claude.ai ", "", "https://vscode.dev/oauth/client.json"])

        self.assertEqual(hosts, ["claude.ai", "vscode.dev"])

    def test_anything_but_a_host_name_is_refused(self) -> None:
        for value in ["claude.ai/path", "exa mple.com", "a;b", "-bad.example", "x" * 300]:
            with self.subTest(value=value), self.assertRaises(InvalidArguments):
                normalise_metadata_hosts([value])
