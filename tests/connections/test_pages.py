"""The connections pages through the test client: who sees what, that nothing on them ends a
connection, the client policy (docs/managing-connections.md). The browser flows are in
tests/flows/test_browser_connections.py."""

from django.test import Client

from agent_auth.models import Claim
from audit.models import AuditAction, AuditEvent
from audit.services import record_tool_call
from oauth.models import Application, ClientPolicy
from organizations.models import Role
from organizations.services import record_role_change
from tests.agent_auth.support import HeadlessTestCase
from tests.factories import PASSWORD, make_membership, make_organization
from tests.mcp_requests import envelope, post_mcp
from tests.oauth.support import OAuthTestCase

MINE = "/account/connections/"


def organization_page(organization) -> str:
    return f"/organizations/{organization.slug}/connections/"


class ConnectionsTestCase(OAuthTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.organization = make_organization(slug="acme", name="Acme")
        self.member = make_membership(role=Role.MEMBER, organization=self.organization).user
        self.admin = make_membership(role=Role.ADMIN, organization=self.organization).user
        self.client_id = self.register(client_name="Member Agent")["client_id"]
        self.sign_in(self.member)
        self.tokens = self.tokens_for(self.client_id)
        self.page = Client()

    def as_person(self, user) -> Client:
        self.assertTrue(self.page.login(username=user.email, password=PASSWORD))
        return self.page

    def tool_call_status(self) -> int:
        return post_mcp(self.api, envelope("server/discover"), token=self.tokens["access_token"]).status_code


class MyConnectionsTests(ConnectionsTestCase):
    def test_a_person_sees_their_connection_with_its_registration_organization_and_scopes(self) -> None:
        response = self.as_person(self.member).get(MINE)

        self.assertEqual(response.status_code, 200)
        (row,) = response.context["rows"]
        self.assertEqual((row.client_name, row.organization), ("Member Agent", self.organization))
        self.assertEqual(row.registration, "Dynamic registration (name not verified)")
        self.assertEqual(row.scopes, ["mcp:operator.read"])
        self.assertLessEqual(row.authorized_at, row.last_used_at)
        self.assertContains(response, "Member Agent")

    def test_first_authorized_is_the_consent_and_survives_refreshes(self) -> None:
        (before,) = self.as_person(self.member).get(MINE).context["rows"]

        self.assertEqual(self.refresh(self.client_id, self.tokens["refresh_token"]).status_code, 200)

        (after,) = self.as_person(self.member).get(MINE).context["rows"]
        self.assertEqual(after.authorized_at, before.authorized_at)
        self.assertLess(after.authorized_at, after.last_used_at)

    def test_a_person_without_connections_sees_none(self) -> None:
        response = self.as_person(self.admin).get(MINE)

        self.assertEqual(response.context["rows"], [])
        self.assertContains(response, 'id="no-connections"')

    def test_a_visitor_who_is_not_signed_in_is_sent_to_sign_in(self) -> None:
        response = self.page.get(MINE)

        self.assertEqual(response.status_code, 302)
        self.assertTrue(response["Location"].startswith("/api/auth/sign-in?next="))

    def test_the_page_offers_no_disconnect_and_says_how_access_ends(self) -> None:
        response = self.as_person(self.member).get(MINE)

        self.assertNotContains(response, "<form")
        self.assertContains(response, 'id="how-access-ends"')
        self.assertContains(response, "remove it in your AI client")
        self.assertEqual(self.page.post(f"{MINE}disconnect").status_code, 404)
        self.assertEqual(self.refresh(self.client_id, self.tokens["refresh_token"]).status_code, 200)

    def test_the_front_page_links_to_the_connections_pages(self) -> None:
        response = self.as_person(self.admin).get("/")

        self.assertContains(response, f'href="{MINE}"')
        self.assertContains(response, f'href="{organization_page(self.organization)}"')


class OrganizationConnectionsTests(ConnectionsTestCase):
    def test_an_admin_sees_who_connected_which_client_and_its_tool_calls(self) -> None:
        for _ in range(3):
            record_tool_call(
                person_id=self.member.pk,
                organization_id=self.organization.pk,
                client_id=self.client_id,
                tool="list_modules",
                outcome="ok",
                duration_ms=1.0,
            )

        response = self.as_person(self.admin).get(organization_page(self.organization))

        self.assertEqual(response.status_code, 200)
        (row,) = response.context["rows"]
        self.assertEqual((row.person_email, row.client_name, row.tool_calls), (self.member.email, "Member Agent", 3))

    def test_a_member_gets_403(self) -> None:
        response = self.as_person(self.member).get(organization_page(self.organization))

        self.assertEqual(response.status_code, 403)

    def test_an_admin_of_another_organization_gets_404_as_for_none(self) -> None:
        stranger = make_membership(role=Role.ADMIN).user

        response = self.as_person(stranger).get(organization_page(self.organization))
        missing = self.as_person(stranger).get("/organizations/no-such-org/connections/")

        self.assertEqual((response.status_code, missing.status_code), (404, 404))
        self.assertNotContains(response, "Acme", status_code=404)

    def test_the_role_is_read_on_every_request(self) -> None:
        browser = self.as_person(self.admin)
        self.assertEqual(browser.get(organization_page(self.organization)).status_code, 200)
        self.admin.memberships.update(role=Role.MEMBER)

        self.assertEqual(browser.get(organization_page(self.organization)).status_code, 403)

    def test_a_member_cannot_change_the_policy(self) -> None:
        response = self.as_person(self.member).post(f"{organization_page(self.organization)}policy", {"mode": "listed"})

        self.assertEqual(response.status_code, 403)
        self.assertFalse(ClientPolicy.objects.exists())

    def test_the_only_form_is_the_client_policy_and_no_disconnect_address_exists(self) -> None:
        browser = self.as_person(self.admin)
        base = organization_page(self.organization)

        response = browser.get(base)

        self.assertEqual(response.content.decode().count("<form"), 1)
        self.assertContains(response, f'<form method="post" action="{base}policy" id="client-policy">')
        self.assertContains(response, 'id="how-access-ends"')
        for path in ["disconnect", "disconnect-client"]:
            with self.subTest(path=path):
                self.assertEqual(browser.post(f"{base}{path}", {"client_id": self.client_id}).status_code, 404)
        self.assertEqual(self.tool_call_status(), 200)
        self.assertEqual(self.refresh(self.client_id, self.tokens["refresh_token"]).status_code, 200)

    def test_an_admin_restricts_the_organization_and_the_next_refresh_is_refused(self) -> None:
        response = self.as_person(self.admin).post(
            f"{organization_page(self.organization)}policy", {"mode": "listed", "hosts": "claude.ai\nVSCode.dev"}
        )

        self.assertEqual(response.status_code, 302)
        policy = ClientPolicy.objects.get(organization=self.organization)
        self.assertEqual((policy.only_listed, policy.metadata_hosts), (True, ["claude.ai", "vscode.dev"]))
        self.assertEqual(self.refresh(self.client_id, self.tokens["refresh_token"]).status_code, 400)
        event = AuditEvent.objects.get(action=AuditAction.CLIENT_POLICY_CHANGE)
        self.assertEqual(event.actor_id, self.admin.pk)

    def test_an_admin_lists_a_registered_client_by_its_id(self) -> None:
        self.as_person(self.admin).post(
            f"{organization_page(self.organization)}policy", {"mode": "listed", "clients": [self.client_id]}
        )

        listed = ClientPolicy.objects.get(organization=self.organization).applications.get()
        self.assertEqual(listed.client_id, self.client_id)
        self.assertEqual(self.refresh(self.client_id, self.tokens["refresh_token"]).status_code, 200)

    def test_a_bad_host_or_client_is_refused_and_changes_nothing(self) -> None:
        browser = self.as_person(self.admin)
        base = organization_page(self.organization)

        bad_host = browser.post(f"{base}policy", {"mode": "listed", "hosts": "claude.ai/oauth"})
        unknown_client = browser.post(f"{base}policy", {"mode": "listed", "clients": ["no-such-client"]})
        bad_mode = browser.post(f"{base}policy", {"mode": "everything"})
        nul = browser.post(f"{base}policy", {"mode": "listed", "hosts": "claude\x00.ai", "clients": ["a\x00b"]})

        statuses = [bad_host.status_code, unknown_client.status_code, bad_mode.status_code, nul.status_code]
        self.assertEqual(statuses, [400, 400, 400, 400])
        self.assertContains(bad_host, "is not a host name", status_code=400)
        self.assertFalse(ClientPolicy.objects.exists())
        self.assertFalse(AuditEvent.objects.filter(action=AuditAction.CLIENT_POLICY_CHANGE).exists())


class EndedConnectionTests(ConnectionsTestCase):
    """A refresh refused by the client policy or the role ends the connection: it leaves both pages,
    and stays off them when the policy is loosened or the role given back."""

    def post_policy(self, mode: str) -> None:
        response = self.as_person(self.admin).post(f"{organization_page(self.organization)}policy", {"mode": mode})
        self.assertEqual(response.status_code, 302)

    def assert_ended_on_both_pages(self) -> None:
        organization = self.as_person(self.admin).get(organization_page(self.organization))
        self.assertEqual(organization.context["rows"], [])
        self.assertContains(organization, 'id="no-connections"')
        mine = self.as_person(self.member).get(MINE)
        self.assertEqual(mine.context["rows"], [])
        self.assertContains(mine, 'id="no-connections"')

    def test_a_connection_refused_by_the_policy_stays_ended_once_the_policy_is_loosened(self) -> None:
        self.post_policy("listed")
        self.assertEqual(self.refresh(self.client_id, self.tokens["refresh_token"]).status_code, 400)

        self.post_policy("any")

        self.assert_ended_on_both_pages()

    def test_a_connection_refused_for_the_role_stays_ended_once_the_role_is_given_back(self) -> None:
        membership = self.member.memberships.get(organization=self.organization)
        record_role_change(membership=membership, role=Role.LEARNER, changed_by=self.admin)
        self.assertEqual(self.refresh(self.client_id, self.tokens["refresh_token"]).status_code, 400)

        record_role_change(membership=membership, role=Role.MEMBER, changed_by=self.admin)

        self.assert_ended_on_both_pages()

    def test_a_tightened_policy_leaves_a_connection_listed_until_its_next_refresh(self) -> None:
        self.post_policy("listed")

        (row,) = self.as_person(self.admin).get(organization_page(self.organization)).context["rows"]

        self.assertEqual(row.client_id, self.client_id)


class PolicyPageTests(ConnectionsTestCase):
    """What the policy page says it cannot tell apart, and which clients it marks public
    (docs/managing-connections.md#what-the-policy-cannot-tell-apart)."""

    MARK = "a public client: any local app can present its ID"

    def choice_label(self, response, client_id: str) -> str:
        html = response.content.decode()
        start = html.index(f'name="clients" value="{client_id}"')
        return html[start : html.index("</label>", start)]

    def test_the_page_says_what_it_cannot_tell_apart_and_marks_public_clients_only(self) -> None:
        confidential = Application.objects.create(
            name="Staff Server",
            client_type=Application.CLIENT_CONFIDENTIAL,
            authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
            redirect_uris="https://staff.example.test/callback",
        )

        response = self.as_person(self.admin).get(organization_page(self.organization))

        self.assertContains(response, 'id="public-clients"')
        self.assertContains(response, "any app on a person's computer can present the ID of a public client")
        self.assertContains(response, "RFC 8252 &sect;7.3")
        self.assertContains(response, 'id="headless-path"')
        self.assertContains(response, "The headless path (an agent signing in with an email code) does not go through")
        self.assertIn(self.MARK, self.choice_label(response, self.client_id))
        self.assertNotIn(self.MARK, self.choice_label(response, confidential.client_id))


class DjangoAdminTests(ConnectionsTestCase):
    def test_the_client_list_shows_registration_kind_and_last_use(self) -> None:
        self.admin.is_staff = self.admin.is_superuser = True
        self.admin.save()

        response = self.as_person(self.admin).get("/admin/oauth/application/")

        self.assertEqual(response.status_code, 200)
        self.assertContains(response, "Dynamic Client Registration")
        self.assertContains(response, "column-last_used_at")
        self.assertIsNotNone(Application.objects.get(client_id=self.client_id).last_used_at)


class HeadlessConnectionTests(HeadlessTestCase):
    def test_a_headless_connection_is_listed_until_its_token_expires(self) -> None:
        membership = make_membership(role=Role.MEMBER)
        claim_token, code = self.start_and_read_code(membership.user.email)
        self.assertEqual(self.complete(claim_token, code).status_code, 200)
        claim = Claim.objects.get(user=membership.user)
        page = Client()
        page.login(username=membership.user.email, password=PASSWORD)

        (row,) = page.get(MINE).context["rows"]

        self.assertEqual((row.registration, row.client_name), ("Headless path (email code)", "Headless agent"))
        self.assertEqual(row.authorized_at, claim.completed_at)
