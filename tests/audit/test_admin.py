"""The audit trail in the Django admin: staff filter it, nobody edits it, members never see it."""

from django.contrib.auth.models import Permission
from django.test import TestCase, override_settings
from django.urls import reverse

from audit.models import OUTCOME_OK, AuditAction, AuditEvent
from audit.services import record_event, record_tool_call
from oauth.models import Application
from organizations.models import Role
from tests.factories import make_membership, make_organization, make_user

CHANGELIST = "admin:audit_auditevent_changelist"


def _tool_call(membership, *, tool: str = "list_modules", client_id: str = "claude", outcome: str = OUTCOME_OK) -> None:
    record_tool_call(
        outcome=outcome,
        person_id=membership.user_id,
        organization_id=membership.organization_id,
        client_id=client_id,
        tool=tool,
        duration_ms=2.5,
    )


@override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"])
class AuditAdminTests(TestCase):
    def setUp(self) -> None:
        self.staff = make_user(is_staff=True, is_superuser=True)
        self.client.force_login(self.staff)
        self.acme = make_organization(slug="acme", name="Acme")
        self.bob = make_membership(organization=self.acme, role=Role.MEMBER)
        self.carol = make_membership(organization=self.acme, role=Role.ADMIN)
        self.globex_member = make_membership(organization=make_organization(slug="globex"), role=Role.MEMBER)
        Application.objects.create(
            client_id="claude",
            name="Claude Desktop",
            client_type=Application.CLIENT_PUBLIC,
            authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
            redirect_uris="https://claude.example/callback",
        )
        _tool_call(self.bob, tool="search_knowledge")
        _tool_call(self.carol, tool="get_module", client_id="cursor", outcome="not_found")
        _tool_call(self.globex_member)
        record_event(AuditAction.ROLE_CHANGE, person_id=self.bob.user_id, organization_id=self.acme.pk)

    def rows(self, query: str = "") -> list[AuditEvent]:
        response = self.client.get(reverse(CHANGELIST) + query)
        self.assertEqual(response.status_code, 200)
        return list(response.context["cl"].result_list)

    def test_who_at_acme_called_which_tools_through_which_client_last_week_is_one_page(self) -> None:
        # the three clicks: organization "Acme", action "Tool call", date "Past 7 days"
        query = f"?organization__id__exact={self.acme.pk}&action__exact=tool_call"
        page = self.client.get(reverse(CHANGELIST) + query)
        (date_filter,) = [spec for spec in page.context["cl"].filter_specs if spec.title == "occurred at"]
        (past_week,) = [
            choice for choice in date_filter.choices(page.context["cl"]) if choice["display"] == "Past 7 days"
        ]
        query = past_week["query_string"]

        response = self.client.get(reverse(CHANGELIST) + query)

        rows = list(response.context["cl"].result_list)
        self.assertEqual(
            {(row.person_id, row.tool) for row in rows},
            {(self.bob.user_id, "search_knowledge"), (self.carol.user_id, "get_module")},
        )
        page = response.content.decode()
        for shown in (self.bob.user.email, self.carol.user.email, "search_knowledge", "Claude Desktop", "cursor"):
            self.assertIn(shown, page)

    def test_each_filter_narrows_the_rows(self) -> None:
        cases = {
            f"?organization__id__exact={self.acme.pk}": 3,
            f"?person__id__exact={self.bob.user_id}": 2,
            "?client_id=claude": 2,
            "?tool=get_module": 1,
            "?outcome=not_found": 1,
            "?action__exact=role_change": 1,
        }
        for query, count in cases.items():
            with self.subTest(query=query):
                self.assertEqual(len(self.rows(query)), count)

    def test_the_client_filter_lists_clients_by_name(self) -> None:
        response = self.client.get(reverse(CHANGELIST))

        (client_filter,) = [spec for spec in response.context["cl"].filter_specs if spec.title == "client"]
        self.assertEqual(client_filter.lookup_choices, [("claude", "Claude Desktop"), ("cursor", "cursor")])

    def test_an_event_can_be_read_but_not_added_changed_or_deleted(self) -> None:
        event = AuditEvent.objects.first()
        change_url = reverse("admin:audit_auditevent_change", args=[event.pk])

        self.assertEqual(self.client.get(change_url).status_code, 200)
        self.assertEqual(self.client.post(change_url, {"outcome": "tampered"}).status_code, 403)
        self.assertEqual(self.client.get(reverse("admin:audit_auditevent_add")).status_code, 403)
        self.assertEqual(self.client.post(reverse("admin:audit_auditevent_delete", args=[event.pk])).status_code, 403)
        response = self.client.post(reverse(CHANGELIST), {"action": "delete_selected", "_selected_action": [event.pk]})
        self.assertEqual(AuditEvent.objects.count(), 4)
        self.assertNotEqual(response.status_code, 500)

    def test_a_member_who_is_not_staff_is_refused(self) -> None:
        self.client.force_login(self.bob.user)

        response = self.client.get(reverse(CHANGELIST))

        self.assertEqual(response.status_code, 302)
        self.assertTrue(response["Location"].startswith(reverse("admin:login")))

    def test_staff_need_the_view_permission(self) -> None:
        staff = make_user(is_staff=True)
        self.client.force_login(staff)
        self.assertEqual(self.client.get(reverse(CHANGELIST)).status_code, 403)

        staff.user_permissions.add(Permission.objects.get(codename="view_auditevent"))

        self.assertEqual(self.client.get(reverse(CHANGELIST)).status_code, 200)
