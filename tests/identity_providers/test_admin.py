"""Staff with the provider permissions manage providers in the admin: the secret is write-only,
every change is audited, and an organization's own admin reaches nothing
(docs/single-sign-on.md#add-the-provider-in-the-admin)."""

from typing import Any

from django.contrib.auth.models import Permission
from django.test import TestCase, override_settings
from django.urls import reverse

from audit.models import AuditAction, AuditEvent
from identity_providers.client_secrets import seal_client_secret, unseal_client_secret
from identity_providers.models import IdentityProvider, ProviderDomain
from organizations.models import Role
from tests.audit.support import assert_holds_no_secret
from tests.factories import make_membership, make_organization, make_user
from tests.identity_providers.support import provider_key

ISSUER = "https://login.microsoftonline.com/acme-tenant/v2.0"
SECRET = "entra-client-secret~0123456789"
ADD = reverse("admin:identity_providers_identityprovider_add")
CHANGELIST = reverse("admin:identity_providers_identityprovider_changelist")


def _change_url(provider: IdentityProvider) -> str:
    return reverse("admin:identity_providers_identityprovider_change", args=[provider.pk])


def _domains(*domains: str, initial: list[ProviderDomain] | None = None, delete: tuple[str, ...] = ()) -> dict:
    """The inline formset's fields: the existing rows first, then one new row per domain."""
    initial = initial or []
    data: dict[str, str] = {
        "domains-TOTAL_FORMS": str(len(initial) + len(domains)),
        "domains-INITIAL_FORMS": str(len(initial)),
        "domains-MIN_NUM_FORMS": "1",
        "domains-MAX_NUM_FORMS": "1000",
    }
    for index, row in enumerate(initial):
        data[f"domains-{index}-id"] = str(row.pk)
        data[f"domains-{index}-provider"] = str(row.provider_id)
        data[f"domains-{index}-domain"] = row.domain
        if row.domain in delete:
            data[f"domains-{index}-DELETE"] = "on"
    for offset, domain in enumerate(domains, start=len(initial)):
        data[f"domains-{offset}-domain"] = domain
    return data


@provider_key()
@override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"])
class ProviderAdminTestCase(TestCase):
    def setUp(self) -> None:
        self.staff = make_user(is_staff=True, is_superuser=True)
        self.client.force_login(self.staff)
        self.organization = make_organization(slug="acme")

    def add_form(self, **fields: Any) -> dict:
        return {
            "organization": str(self.organization.pk),
            "issuer": ISSUER,
            "client_id": "entra-app-id",
            "client_secret": SECRET,
            **_domains("Acme.Example"),
            "_save": "Save",
            **fields,
        }

    def make_provider(self, *domains: str) -> IdentityProvider:
        provider = IdentityProvider.objects.create(
            organization=self.organization,
            issuer=ISSUER,
            client_id="entra-app-id",
            client_secret_sealed=seal_client_secret(SECRET),
        )
        for domain in domains or ("acme.example",):
            ProviderDomain.objects.create(provider=provider, domain=domain)
        return provider

    def change_form(self, provider: IdentityProvider, *new_domains: str, **fields: Any) -> dict:
        return {
            "client_id": provider.client_id,
            "client_secret": "",
            **_domains(*new_domains, initial=list(provider.domains.all())),
            "_save": "Save",
            **fields,
        }

    def events(self) -> list[AuditEvent]:
        return list(AuditEvent.objects.filter(action=AuditAction.PROVIDER_CHANGE).order_by("id"))


class ProviderAdminAccessTests(ProviderAdminTestCase):
    def test_an_organization_admin_who_is_not_staff_reaches_no_provider_page(self) -> None:
        provider = self.make_provider()
        self.client.force_login(make_membership(role=Role.ADMIN, organization=self.organization).user)

        for url in (CHANGELIST, ADD, _change_url(provider)):
            with self.subTest(url=url):
                response = self.client.get(url)
                self.assertEqual(response.status_code, 302)
                self.assertTrue(response["Location"].startswith(reverse("admin:login")))
        response = self.client.post(ADD, self.add_form(issuer="https://evil.example"))
        self.assertEqual(response.status_code, 302)
        self.assertEqual(IdentityProvider.objects.count(), 1)

    def test_staff_without_the_provider_permissions_are_refused(self) -> None:
        provider = self.make_provider()
        self.client.force_login(make_user(is_staff=True))

        for url in (ADD, _change_url(provider), CHANGELIST):
            with self.subTest(url=url):
                self.assertEqual(self.client.get(url).status_code, 403)
        self.assertEqual(self.client.post(ADD, self.add_form(issuer="https://other.example")).status_code, 403)
        self.assertEqual(IdentityProvider.objects.count(), 1)

    def test_staff_granted_the_provider_permissions_alone_edit_providers_and_their_domains(self) -> None:
        granted = make_user(is_staff=True)
        granted.user_permissions.set(
            Permission.objects.filter(
                content_type__app_label="identity_providers", codename__endswith="identityprovider"
            )
        )
        self.client.force_login(granted)

        response = self.client.post(ADD, self.add_form())

        self.assertEqual(response.status_code, 302, response.content[:2000])
        self.assertEqual(list(ProviderDomain.objects.values_list("domain", flat=True)), ["acme.example"])


class ProviderAdminSecretTests(ProviderAdminTestCase):
    def test_adding_seals_the_secret_and_records_one_event_naming_the_staff_member(self) -> None:
        response = self.client.post(ADD, self.add_form(required="on"))

        self.assertEqual(response.status_code, 302, response.content[:2000])
        provider = IdentityProvider.objects.get()
        self.assertEqual(unseal_client_secret(provider.client_secret_sealed), SECRET)
        self.assertTrue(provider.required)
        [event] = self.events()
        self.assertEqual(event.actor_id, self.staff.pk)
        self.assertEqual(event.organization_id, self.organization.pk)
        self.assertEqual(event.detail["change"], "added")
        self.assertEqual(event.detail["via"], "admin")
        self.assertIn("client_secret", event.detail["fields"])
        assert_holds_no_secret(self, SECRET, provider.client_secret_sealed)

    def test_no_page_shows_the_secret_or_its_sealed_form(self) -> None:
        provider = self.make_provider()

        for url in (CHANGELIST, _change_url(provider), _change_url(provider) + "history/"):
            with self.subTest(url=url):
                page = self.client.get(url).content.decode()
                self.assertNotIn(SECRET, page)
                self.assertNotIn(provider.client_secret_sealed, page)
                self.assertNotIn(provider.client_secret_sealed[:40], page)

    def test_a_blank_secret_on_change_keeps_the_stored_one(self) -> None:
        provider = self.make_provider()
        sealed = provider.client_secret_sealed

        response = self.client.post(_change_url(provider), self.change_form(provider, required="on"))

        self.assertEqual(response.status_code, 302, response.content[:2000])
        provider.refresh_from_db()
        self.assertEqual(provider.client_secret_sealed, sealed)
        self.assertTrue(provider.required)
        [event] = self.events()
        self.assertEqual(event.detail["fields"], ["required"])

    def test_a_new_secret_on_change_replaces_it_and_is_named_but_not_held_by_the_event(self) -> None:
        provider = self.make_provider()

        self.client.post(_change_url(provider), self.change_form(provider, client_secret="new-secret-value"))

        provider.refresh_from_db()
        self.assertEqual(unseal_client_secret(provider.client_secret_sealed), "new-secret-value")
        [event] = self.events()
        self.assertEqual(event.detail["fields"], ["client_secret"])
        assert_holds_no_secret(self, SECRET, "new-secret-value", provider.client_secret_sealed)

    def test_adding_without_a_secret_is_refused(self) -> None:
        response = self.client.post(ADD, self.add_form(client_secret=""))

        self.assertEqual(response.status_code, 200)
        self.assertContains(response, "client secret must be one line")
        self.assertFalse(IdentityProvider.objects.exists())


class ProviderAdminChangeTests(ProviderAdminTestCase):
    def test_domains_added_and_removed_inline_are_one_audited_change(self) -> None:
        provider = self.make_provider("acme.example", "old.example")

        response = self.client.post(
            _change_url(provider),
            {
                **self.change_form(provider),
                **_domains("NEW.example", initial=list(provider.domains.all()), delete=("old.example",)),
            },
        )

        self.assertEqual(response.status_code, 302, response.content[:2000])
        self.assertEqual(list(provider.domains.values_list("domain", flat=True)), ["acme.example", "new.example"])
        [event] = self.events()
        self.assertEqual(
            (event.detail["fields"], event.detail["domains"]), (["domains"], ["acme.example", "new.example"])
        )

    def test_a_domain_another_provider_serves_is_refused_with_a_clear_error(self) -> None:
        rival = IdentityProvider.objects.create(
            organization=make_organization(slug="rival"),
            issuer="https://accounts.google.com",
            client_id="g",
            client_secret_sealed=seal_client_secret("g"),
        )
        ProviderDomain.objects.create(provider=rival, domain="acme.example")

        response = self.client.post(ADD, self.add_form())

        self.assertEqual(response.status_code, 200)
        self.assertContains(response, "Another provider serves this domain already")
        self.assertEqual(IdentityProvider.objects.count(), 1)
        self.assertEqual(self.events(), [])

    def test_a_bad_issuer_a_bad_domain_or_no_domain_is_refused(self) -> None:
        for fields, message in (
            ({"issuer": "http://login.microsoftonline.com/x/v2.0"}, "must start with https://"),
            ({"issuer": ISSUER + "#x"}, "no query and no fragment"),
            (_domains("*.acme.example"), "cannot be a wildcard"),
            (_domains(), "Give at least one email domain"),
        ):
            with self.subTest(fields=fields):
                response = self.client.post(ADD, self.add_form(**fields))
                self.assertEqual(response.status_code, 200)
                self.assertContains(response, message)
        self.assertFalse(IdentityProvider.objects.exists())
        self.assertEqual(self.events(), [])

    def test_removing_every_domain_is_refused(self) -> None:
        provider = self.make_provider()

        response = self.client.post(
            _change_url(provider),
            {**self.change_form(provider), **_domains(initial=list(provider.domains.all()), delete=("acme.example",))},
        )

        self.assertContains(response, "Give at least one email domain")
        self.assertEqual(list(provider.domains.values_list("domain", flat=True)), ["acme.example"])

    def test_the_organization_and_issuer_of_a_provider_cannot_be_changed(self) -> None:
        provider = self.make_provider()
        other = make_organization(slug="other")

        self.client.post(
            _change_url(provider),
            self.change_form(provider, organization=str(other.pk), issuer="https://evil.example"),
        )

        provider.refresh_from_db()
        self.assertEqual((provider.organization_id, provider.issuer), (self.organization.pk, ISSUER))

    def test_deleting_removes_the_provider_and_records_one_event(self) -> None:
        provider = self.make_provider()

        response = self.client.post(
            reverse("admin:identity_providers_identityprovider_delete", args=[provider.pk]), {"post": "yes"}
        )

        self.assertEqual(response.status_code, 302)
        self.assertFalse(IdentityProvider.objects.exists())
        [event] = self.events()
        self.assertEqual((event.detail["change"], event.actor_id), ("removed", self.staff.pk))

    def test_deleting_several_from_the_list_records_one_event_each(self) -> None:
        provider = self.make_provider()

        response = self.client.post(
            CHANGELIST, {"action": "delete_selected", "_selected_action": [str(provider.pk)], "post": "yes"}
        )

        self.assertEqual(response.status_code, 302)
        self.assertFalse(IdentityProvider.objects.exists())
        self.assertEqual([event.detail["change"] for event in self.events()], ["removed"])


class ProviderAdminEnterpriseManagedTests(ProviderAdminTestCase):
    def test_enterprise_managed_trust_and_its_clients_are_set_in_the_admin_and_audited(self) -> None:
        provider = self.make_provider()

        response = self.client.post(
            _change_url(provider),
            self.change_form(
                provider, enterprise_managed="on", ema_client_ids="vscode\n claude-desktop \n\n", link_by_email="on"
            ),
        )

        self.assertEqual(response.status_code, 302, response.content[:2000])
        provider.refresh_from_db()
        self.assertTrue(provider.enterprise_managed)
        self.assertTrue(provider.link_by_email)
        self.assertEqual(provider.ema_client_ids, ["claude-desktop", "vscode"])
        [event] = self.events()
        self.assertEqual(event.detail["fields"], ["enterprise_managed", "link_by_email", "ema_client_ids"])
        self.assertContains(self.client.get(_change_url(provider)), "claude-desktop\nvscode")

    def test_clients_or_linking_by_email_without_enterprise_managed_is_a_form_error(self) -> None:
        provider = self.make_provider()

        response = self.client.post(_change_url(provider), self.change_form(provider, link_by_email="on"))

        self.assertEqual(response.status_code, 200)
        self.assertContains(response, "apply only with enterprise-managed authorization on")
        provider.refresh_from_db()
        self.assertFalse(provider.link_by_email)
        self.assertEqual(self.events(), [])
