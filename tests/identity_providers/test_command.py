"""`manage.py identity_provider` stores what it is given, sealed and audited, and refuses bad input
with one line, writing nothing (docs/single-sign-on.md#the-command)."""

import io
import tempfile
from pathlib import Path

from django.core.management import CommandError, call_command
from django.test import TestCase

from audit.models import AuditAction, AuditEvent
from identity_providers.client_secrets import unseal_client_secret
from identity_providers.models import IdentityProvider, ProviderDomain
from operator_core.signing_keys import generate_fernet_key
from tests.audit.support import assert_holds_no_secret, only_event
from tests.factories import make_organization
from tests.identity_providers.support import provider_key

ISSUER = "https://acme.okta.com/oauth2/default"
SECRET = "okta-client-secret-0123456789"
# A key that replaced the one secrets were sealed under, without it as a fallback.
PROVIDER_KEY_AFTER_LOSS = generate_fernet_key()


@provider_key()
class IdentityProviderCommandTests(TestCase):
    def setUp(self) -> None:
        self.organization = make_organization(slug="acme")
        self.folder = self.enterContext(tempfile.TemporaryDirectory())
        self.secret_file = self.write_secret(SECRET + "\n")

    def write_secret(self, content: str, name: str = "secret") -> str:
        path = Path(self.folder, name)
        path.write_text(content)
        return str(path)

    def run_command(self, *arguments: str) -> str:
        out = io.StringIO()
        call_command("identity_provider", *arguments, stdout=out, stderr=io.StringIO())
        return out.getvalue()

    def add(self, *extra: str, secret_file: str | None = None, organization: str = "acme") -> str:
        return self.run_command(
            "add",
            "--organization",
            organization,
            "--issuer",
            ISSUER,
            "--client-id",
            "0oa-client",
            "--client-secret-file",
            secret_file or self.secret_file,
            "--domain",
            "Acme.Example",
            "--domain",
            "acme-corp.example",
            *extra,
        )

    def assertRefused(self, message: str, *arguments: str) -> None:
        events_before = AuditEvent.objects.count()
        with self.assertRaises(CommandError) as raised:
            self.run_command(*arguments)
        self.assertIn(message, str(raised.exception))
        self.assertNotIn("\n", str(raised.exception))
        self.assertEqual(AuditEvent.objects.count(), events_before)

    def test_add_then_list_shows_what_was_stored_and_the_secret_unseals_to_the_file(self) -> None:
        self.add("--required")

        listing = self.run_command("list")

        provider = IdentityProvider.objects.get()
        self.assertEqual(unseal_client_secret(provider.client_secret_sealed), SECRET)
        self.assertNotIn(SECRET, provider.client_secret_sealed)
        self.assertEqual(
            listing.splitlines()[1].split("\t"),
            ["acme", ISSUER, "0oa-client", "acme-corp.example,acme.example", "yes", "no", "no", "-", "no", "sealed"],
        )
        self.assertNotIn(SECRET, listing)
        self.assertNotIn(provider.client_secret_sealed, listing)

    def test_add_is_audited_without_an_actor_and_without_the_secret(self) -> None:
        self.add("--create-requesters")

        event = only_event(self, action=AuditAction.PROVIDER_CHANGE)
        self.assertIsNone(event.actor_id)
        self.assertEqual(event.organization_id, self.organization.pk)
        self.assertEqual(event.detail["change"], "added")
        self.assertEqual(event.detail["via"], "command")
        self.assertEqual(event.detail["domains"], ["acme-corp.example", "acme.example"])
        assert_holds_no_secret(self, SECRET, IdentityProvider.objects.get().client_secret_sealed)

    def test_only_one_final_line_break_is_dropped_from_the_secret_file(self) -> None:
        self.add(secret_file=self.write_secret("  spaced secret  \r\n"))

        stored = IdentityProvider.objects.get().client_secret_sealed
        self.assertEqual(unseal_client_secret(stored), "  spaced secret  ")

    def test_a_missing_a_directory_empty_or_multi_line_secret_file_is_one_line_and_writes_nothing(self) -> None:
        cases = [
            (str(Path(self.folder, "missing")), "Cannot read the client secret file"),
            (self.folder, "Cannot read the client secret file"),
            (self.write_secret("", name="empty"), "client secret must be one line"),
            (self.write_secret("one\ntwo\n", name="two-lines"), "client secret must be one line"),
        ]
        for path, message in cases:
            with self.subTest(path=path):
                self.assertRefused(
                    message,
                    "add",
                    "--organization",
                    "acme",
                    "--issuer",
                    ISSUER,
                    "--client-id",
                    "0oa-client",
                    "--client-secret-file",
                    path,
                    "--domain",
                    "acme.example",
                )
        self.assertFalse(IdentityProvider.objects.exists())

    def test_an_unknown_organization_a_bad_issuer_or_a_bad_domain_is_refused_writing_nothing(self) -> None:
        base = ["add", "--client-id", "c", "--client-secret-file", self.secret_file]
        for message, arguments in (
            ("No organization with the slug 'nobody'", ["--organization", "nobody", "--issuer", ISSUER]),
            ("must start with https://", ["--organization", "acme", "--issuer", "http://acme.okta.com"]),
            ("no query", ["--organization", "acme", "--issuer", ISSUER + "?x=1"]),
        ):
            with self.subTest(message=message):
                self.assertRefused(message, *base, *arguments, "--domain", "acme.example")
        self.assertRefused(
            "cannot be a wildcard", *base, "--organization", "acme", "--issuer", ISSUER, "--domain", "*.acme.example"
        )
        self.assertFalse(IdentityProvider.objects.exists())

    def test_a_domain_another_organization_s_provider_serves_is_refused_writing_nothing(self) -> None:
        make_organization(slug="rival")
        self.add(organization="rival")

        self.assertRefused(
            "Already served by another provider: acme-corp.example, acme.example",
            "add",
            "--organization",
            "acme",
            "--issuer",
            "https://login.microsoftonline.com/tenant/v2.0",
            "--client-id",
            "c",
            "--client-secret-file",
            self.secret_file,
            "--domain",
            "ACME.example",
            "--domain",
            "acme-corp.example",
        )
        self.assertEqual(IdentityProvider.objects.get().organization.slug, "rival")

    def test_add_of_an_existing_issuer_sets_it_to_exactly_what_is_given(self) -> None:
        self.add()
        new_secret = self.write_secret("rotated-secret", name="rotated")

        output = self.run_command(
            "add",
            "--organization",
            "acme",
            "--issuer",
            ISSUER,
            "--client-id",
            "0oa-client",
            "--client-secret-file",
            new_secret,
            "--domain",
            "acme.example",
            "--required",
        )

        self.assertIn("Updated", output)
        provider = IdentityProvider.objects.get()
        self.assertTrue(provider.required)
        self.assertEqual(unseal_client_secret(provider.client_secret_sealed), "rotated-secret")
        self.assertEqual(list(ProviderDomain.objects.values_list("domain", flat=True)), ["acme.example"])
        event = AuditEvent.objects.filter(action=AuditAction.PROVIDER_CHANGE).order_by("-id").first()
        assert event is not None
        self.assertEqual(event.detail["change"], "changed")
        self.assertEqual(event.detail["fields"], ["required", "client_secret", "domains"])
        assert_holds_no_secret(self, SECRET, "rotated-secret")

    def test_running_the_same_add_again_changes_nothing_and_records_nothing(self) -> None:
        self.add()
        sealed = IdentityProvider.objects.get().client_secret_sealed

        output = self.add()

        self.assertIn("Unchanged", output)
        self.assertEqual(IdentityProvider.objects.get().client_secret_sealed, sealed)
        self.assertEqual(AuditEvent.objects.filter(action=AuditAction.PROVIDER_CHANGE).count(), 1)

    def test_remove_deletes_the_provider_and_its_domains_and_is_audited(self) -> None:
        self.add()

        self.run_command("remove", "--organization", "acme", "--issuer", ISSUER)

        self.assertFalse(IdentityProvider.objects.exists())
        self.assertFalse(ProviderDomain.objects.exists())
        removed = AuditEvent.objects.filter(action=AuditAction.PROVIDER_CHANGE, detail__change="removed").get()
        self.assertEqual(removed.detail["domains"], ["acme-corp.example", "acme.example"])
        self.assertIn("No identity providers.", self.run_command("list"))

    def test_remove_of_a_provider_that_does_not_exist_is_a_clear_error(self) -> None:
        self.add()
        self.assertRefused(
            "acme has no provider with the issuer", "remove", "--organization", "acme", "--issuer", ISSUER + "/"
        )
        self.assertRefused(
            "No organization with the slug 'nobody'", "remove", "--organization", "nobody", "--issuer", ISSUER
        )
        self.assertTrue(IdentityProvider.objects.exists())

    def test_enterprise_managed_trust_is_stored_listed_and_audited(self) -> None:
        self.add("--enterprise-managed", "--ema-clients", " claude-desktop,vscode,claude-desktop ", "--link-by-email")

        provider = IdentityProvider.objects.get()
        self.assertTrue(provider.enterprise_managed)
        self.assertTrue(provider.link_by_email)
        self.assertEqual(provider.ema_client_ids, ["claude-desktop", "vscode"])
        row = self.run_command("list").splitlines()[1].split("\t")
        self.assertEqual(row[6:9], ["yes", "claude-desktop,vscode", "yes"])
        event = only_event(self, action=AuditAction.PROVIDER_CHANGE)
        self.assertIn("enterprise_managed", event.detail["fields"])
        self.assertIn("ema_client_ids", event.detail["fields"])

    def test_enterprise_managed_without_a_client_list_admits_any_registered_client_and_is_off_by_default(self) -> None:
        self.add()
        self.assertFalse(IdentityProvider.objects.get().enterprise_managed)

        output = self.add("--enterprise-managed")

        self.assertIn("Updated", output)
        self.assertIn("enterprise_managed", output)
        provider = IdentityProvider.objects.get()
        self.assertEqual(provider.ema_client_ids, [])
        self.assertEqual(self.run_command("list").splitlines()[1].split("\t")[7], "any registered")

    def test_ema_clients_or_link_by_email_without_enterprise_managed_is_refused(self) -> None:
        for extra in (["--ema-clients", "vscode"], ["--link-by-email"]):
            with self.subTest(extra=extra):
                with self.assertRaises(CommandError) as raised:
                    self.add(*extra)
                self.assertIn("enterprise-managed", str(raised.exception))
                self.assertFalse(IdentityProvider.objects.exists())

    def test_a_client_id_with_a_blank_inside_is_refused(self) -> None:
        with self.assertRaises(CommandError) as raised:
            self.add("--enterprise-managed", "--ema-clients", "claude desktop")
        self.assertIn("is not a client ID", str(raised.exception))
        self.assertFalse(IdentityProvider.objects.exists())

    def test_list_says_when_a_secret_no_longer_unseals(self) -> None:
        self.add()
        with provider_key(PROVIDER_KEY_AFTER_LOSS):
            listing = self.run_command("list")
        self.assertEqual(listing.splitlines()[1].split("\t")[-1], "unreadable")
