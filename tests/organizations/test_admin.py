from django.contrib.admin.models import CHANGE, LogEntry
from django.test import TestCase, override_settings
from django.urls import reverse

from organizations.models import Membership, Role
from tests.factories import make_membership, make_module, make_source, make_user


@override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"])
class AdminTestCase(TestCase):
    def setUp(self) -> None:
        self.staff = make_user(is_staff=True, is_superuser=True)
        self.client.force_login(self.staff)


class AdminAccessTests(AdminTestCase):
    def test_every_page_loads_for_staff(self) -> None:
        membership = make_membership(role=Role.MEMBER)
        module = make_module(organization=membership.organization)
        source = make_source(organization=membership.organization)
        pages = [
            reverse("admin:organizations_organization_changelist"),
            reverse("admin:organizations_organization_add"),
            reverse("admin:organizations_organization_change", args=[membership.organization_id]),
            reverse("admin:organizations_membership_changelist") + "?role__exact=member&q=example",
            reverse("admin:organizations_membership_add"),
            reverse("admin:organizations_membership_change", args=[membership.pk]),
            reverse("admin:knowledge_module_changelist") + "?status__exact=published",
            reverse("admin:knowledge_module_add"),
            reverse("admin:knowledge_module_change", args=[module.pk]),
            reverse("admin:knowledge_source_changelist") + "?status__exact=processed",
            reverse("admin:knowledge_source_add"),
            reverse("admin:knowledge_source_change", args=[source.pk]),
        ]

        for page in pages:
            with self.subTest(page=page):
                self.assertEqual(self.client.get(page).status_code, 200)

    def test_a_member_who_is_not_staff_is_refused(self) -> None:
        member = make_membership(role=Role.ADMIN).user
        self.client.force_login(member)

        response = self.client.get(reverse("admin:organizations_membership_changelist"))

        self.assertEqual(response.status_code, 302)
        self.assertTrue(response["Location"].startswith(reverse("admin:login")))


class AdminRoleChangeTests(AdminTestCase):
    def test_role_change_on_the_membership_page_writes_a_log_entry_naming_both_roles(self) -> None:
        membership = make_membership(role=Role.MEMBER)
        url = reverse("admin:organizations_membership_change", args=[membership.pk])

        response = self.client.post(url, {"role": Role.LEARNER, "_save": "Save"})

        self.assertEqual(response.status_code, 302)
        membership.refresh_from_db()
        self.assertEqual(membership.role, Role.LEARNER)
        entries = LogEntry.objects.filter(object_id=str(membership.pk), action_flag=CHANGE)
        self.assertEqual([entry.get_change_message() for entry in entries], ["Role changed from member to learner."])
        self.assertEqual(entries.get().user_id, self.staff.pk)

    def test_role_change_inline_on_the_organization_page_writes_the_same_entry(self) -> None:
        membership = make_membership(role=Role.ADMIN)
        organization = membership.organization
        url = reverse("admin:organizations_organization_change", args=[organization.pk])

        response = self.client.post(
            url,
            {
                "name": organization.name,
                "slug": organization.slug,
                "time_zone": organization.time_zone,
                "memberships-TOTAL_FORMS": "1",
                "memberships-INITIAL_FORMS": "1",
                "memberships-MIN_NUM_FORMS": "0",
                "memberships-MAX_NUM_FORMS": "1000",
                "memberships-0-id": str(membership.pk),
                "memberships-0-organization": str(organization.pk),
                "memberships-0-user": str(membership.user_id),
                "memberships-0-role": Role.REQUESTER,
                "_save": "Save",
            },
        )

        self.assertEqual(response.status_code, 302)
        membership.refresh_from_db()
        self.assertEqual(membership.role, Role.REQUESTER)
        entry = LogEntry.objects.get(content_type__model="membership", object_id=str(membership.pk))
        self.assertEqual(entry.get_change_message(), "Role changed from admin to requester.")

    def test_adding_a_membership_on_its_page_creates_it(self) -> None:
        user, organization = make_user(), make_membership().organization

        response = self.client.post(
            reverse("admin:organizations_membership_add"),
            {"user": user.pk, "organization": organization.pk, "role": Role.MEMBER},
        )

        self.assertEqual(response.status_code, 302)
        self.assertEqual(Membership.objects.get(user=user).role, Role.MEMBER)

    def test_adding_a_membership_inline_on_the_organization_page_creates_it(self) -> None:
        organization = make_module().organization
        user = make_user()

        response = self.client.post(
            reverse("admin:organizations_organization_change", args=[organization.pk]),
            {
                "name": organization.name,
                "slug": organization.slug,
                "time_zone": organization.time_zone,
                "memberships-TOTAL_FORMS": "1",
                "memberships-INITIAL_FORMS": "0",
                "memberships-MIN_NUM_FORMS": "0",
                "memberships-MAX_NUM_FORMS": "1000",
                "memberships-0-organization": str(organization.pk),
                "memberships-0-user": str(user.pk),
                "memberships-0-role": Role.ADMIN,
                "_save": "Save",
            },
        )

        self.assertEqual(response.status_code, 302)
        self.assertEqual(Membership.objects.get(user=user, organization=organization).role, Role.ADMIN)

    def test_adding_an_existing_member_inline_is_refused_by_the_form(self) -> None:
        membership = make_membership(role=Role.MEMBER)
        organization = membership.organization

        response = self.client.post(
            reverse("admin:organizations_organization_change", args=[organization.pk]),
            {
                "name": organization.name,
                "slug": organization.slug,
                "time_zone": organization.time_zone,
                "memberships-TOTAL_FORMS": "2",
                "memberships-INITIAL_FORMS": "1",
                "memberships-MIN_NUM_FORMS": "0",
                "memberships-MAX_NUM_FORMS": "1000",
                "memberships-0-id": str(membership.pk),
                "memberships-0-organization": str(organization.pk),
                "memberships-0-user": str(membership.user_id),
                "memberships-0-role": Role.MEMBER,
                "memberships-1-organization": str(organization.pk),
                "memberships-1-user": str(membership.user_id),
                "memberships-1-role": Role.ADMIN,
                "_save": "Save",
            },
        )

        self.assertEqual(response.status_code, 200)
        self.assertEqual(list(Membership.objects.values_list("role", flat=True)), [Role.MEMBER])

    def test_adding_a_membership_twice_is_refused_by_the_form(self) -> None:
        membership = make_membership(role=Role.MEMBER)

        response = self.client.post(
            reverse("admin:organizations_membership_add"),
            {"user": membership.user_id, "organization": membership.organization_id, "role": Role.ADMIN},
        )

        self.assertEqual(response.status_code, 200)
        self.assertEqual(Membership.objects.count(), 1)
