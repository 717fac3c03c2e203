"""`manage.py identity_provider add|list|remove`: organizations' providers as configuration (docs/single-sign-on.md).

    manage.py identity_provider add --organization SLUG --issuer URL --client-id ID \\
        --client-secret-file PATH --domain DOMAIN [--domain ...] [--required] [--create-requesters] \\
        [--enterprise-managed [--ema-clients ID,...] [--link-by-email]]
    manage.py identity_provider list
    manage.py identity_provider remove --organization SLUG --issuer URL

`add` of an issuer the organization has already sets that provider to exactly
what is given (client ID, secret, domains, every flag), so re-running the same
command changes nothing. The secret file holds the secret on one line; one
final line break is dropped. Every refusal is one line and writes nothing. Each
change is audited with no actor and `"via": "command"`. `--enterprise-managed` trusts
the provider's ID-JAGs (docs/authentication.md#enterprise-managed-authorization) for the
clients `--ema-clients` lists, or for any client registered here without it.
"""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from identity_providers.client_secrets import ClientSecretUnavailable, unseal_client_secret
from identity_providers.models import IdentityProvider
from identity_providers.selectors import provider_or_none, providers_with_domains
from identity_providers.services import (
    MAX_CLIENT_SECRET_LENGTH,
    VIA_COMMAND,
    add_provider,
    change_provider,
    remove_provider,
    valid_settings,
)
from operator_core.errors import OperatorError
from organizations.models import Organization
from organizations.selectors import organization_by_slug_or_none


def read_secret_file(path: str) -> str:
    """The secret in the file at `path`: UTF-8, without one final line break (`echo` writes one)."""
    try:
        with Path(path).open("rb") as stream:
            raw = stream.read(MAX_CLIENT_SECRET_LENGTH + 3)
    except OSError as error:
        raise CommandError(f"Cannot read the client secret file {path}: {error.strerror or error}.") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CommandError(f"The client secret file {path} is not UTF-8 text.") from None
    return text.removesuffix("\n").removesuffix("\r")


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _ema_clients(provider: IdentityProvider) -> str:
    if not provider.enterprise_managed:
        return "-"
    return ",".join(provider.ema_client_ids) or "any registered"


def _secret_state(provider: IdentityProvider) -> str:
    try:
        unseal_client_secret(provider.client_secret_sealed)
    except ClientSecretUnavailable:
        return "unreadable"
    return "sealed"


class Command(BaseCommand):
    help = "Add, list or remove organizations' OpenID Connect identity providers (docs/single-sign-on.md)."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="add|list|remove")
        add = actions.add_parser("add", help="Add a provider, or set an existing one to exactly these values.")
        add.add_argument("--organization", required=True, metavar="SLUG")
        add.add_argument("--issuer", required=True, metavar="URL", help="Exactly as the provider states it.")
        add.add_argument("--client-id", required=True, metavar="ID")
        add.add_argument("--client-secret-file", required=True, metavar="PATH", help="A file holding the secret.")
        add.add_argument("--domain", required=True, action="append", metavar="DOMAIN", help="Repeat for each.")
        add.add_argument("--required", action="store_true", help="Refuse password sign-in for these domains.")
        add.add_argument(
            "--create-requesters", action="store_true", help="Give a person without a membership a requester one."
        )
        add.add_argument(
            "--enterprise-managed",
            action="store_true",
            help="Accept this provider's ID-JAGs as grants for the organization (off by default).",
        )
        add.add_argument(
            "--ema-clients",
            default="",
            metavar="ID,...",
            help="The client IDs its ID-JAGs may name, comma-separated; without it, any client registered here.",
        )
        add.add_argument(
            "--link-by-email",
            action="store_true",
            help="Link an ID-JAG's unlinked subject to the account of its email, as a first sign-in does.",
        )
        actions.add_parser("list", help="List every provider; never a secret.")
        remove = actions.add_parser("remove", help="Remove one provider and its domains.")
        remove.add_argument("--organization", required=True, metavar="SLUG")
        remove.add_argument("--issuer", required=True, metavar="URL")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["action"] == "add":
                self._add(options)
            elif options["action"] == "list":
                self._list()
            else:
                self._remove(options)
        except OperatorError as error:
            raise CommandError(error.message) from None

    def _add(self, options: dict[str, Any]) -> None:
        secret = read_secret_file(options["client_secret_file"])
        organization = _organization(options["organization"])
        settings = valid_settings(
            client_id=options["client_id"],
            domains=options["domain"],
            required=options["required"],
            create_requesters=options["create_requesters"],
            enterprise_managed=options["enterprise_managed"],
            ema_client_ids=options["ema_clients"].split(","),
            link_by_email=options["link_by_email"],
        )
        existing = provider_or_none(organization_slug=organization.slug, issuer=options["issuer"].strip())
        if existing is None:
            added = add_provider(
                organization=organization,
                issuer=options["issuer"],
                client_secret=secret,
                settings=settings,
                changed_by=None,
                via=VIA_COMMAND,
            )
            self.stdout.write(f"Added {added.issuer} to {organization.slug}: {', '.join(settings.domains)}.")
            return
        changed = change_provider(
            provider=existing, client_secret=secret, settings=settings, changed_by=None, via=VIA_COMMAND
        )
        if changed:
            self.stdout.write(f"Updated {existing.issuer} of {organization.slug}: {', '.join(changed)}.")
        else:
            self.stdout.write(f"Unchanged: {existing.issuer} of {organization.slug}.")

    def _list(self) -> None:
        providers = list(providers_with_domains())
        if not providers:
            self.stdout.write("No identity providers.")
            return
        self.stdout.write(
            "organization\tissuer\tclient ID\tdomains\trequired\tcreate requesters\t"
            "enterprise-managed\tema clients\tlink by email\tsecret"
        )
        for provider in providers:
            domains = ",".join(domain.domain for domain in provider.domains.all())
            self.stdout.write(
                f"{provider.organization.slug}\t{provider.issuer}\t{provider.client_id}\t{domains}\t"
                f"{_yes(provider.required)}\t{_yes(provider.create_requesters)}\t"
                f"{_yes(provider.enterprise_managed)}\t{_ema_clients(provider)}\t{_yes(provider.link_by_email)}\t"
                f"{_secret_state(provider)}"
            )

    def _remove(self, options: dict[str, Any]) -> None:
        organization = _organization(options["organization"])
        provider = provider_or_none(organization_slug=organization.slug, issuer=options["issuer"].strip())
        if provider is None:
            raise CommandError(f"{organization.slug} has no provider with the issuer {options['issuer']!r}.")
        remove_provider(provider=provider, changed_by=None, via=VIA_COMMAND)
        self.stdout.write(f"Removed {provider.issuer} from {organization.slug}.")


def _organization(slug: str) -> Organization:
    organization = organization_by_slug_or_none(slug)
    if organization is None:
        raise CommandError(f"No organization with the slug {slug!r}.")
    return organization
