"""Create whatever part of the demo data is missing, leaving the rest alone."""

import contextlib
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from operator_core.errors import InvalidArguments
from organizations.demo.accounts import DEMO_PASSWORD, ORGANIZATIONS, PEOPLE, STAFF_EMAIL
from organizations.demo.modules import MODULES, DemoModule
from organizations.demo.sources import CONTENT_DIR, UNPROCESSED_SOURCES
from organizations.extraction import read_document
from organizations.models import Membership, Module, Organization, Role, Source, SourceChunk
from organizations.selectors import membership_or_none, organization_by_slug_or_none
from organizations.services import (
    add_membership,
    create_module,
    create_organization,
    import_text_source,
    process_source,
    record_role_change,
    register_source,
)


@dataclass(frozen=True)
class SeedSummary:
    users: int
    organizations: int
    modules: int
    sources: int
    chunks: int


def seed_demo_data() -> SeedSummary:
    """Create whatever part of the demo data is missing; return the demo row counts."""
    with transaction.atomic():
        people = {email: _person(email) for email in PEOPLE}
        staff = people[STAFF_EMAIL]
        organizations = {slug: _organization(slug, name) for slug, name in ORGANIZATIONS}
        for email, roles in PEOPLE.items():
            for slug, role in roles.items():
                _membership(people[email], organizations[slug], role, changed_by=staff)
        for slug, organization in organizations.items():
            sources_by_file = _import_demo_files(organization, CONTENT_DIR / slug)
            _unprocessed_sources(organization, UNPROCESSED_SOURCES[slug])
            for module in MODULES[slug]:
                _module(organization, module, sources_by_file)
    demo_organizations = list(organizations.values())
    return SeedSummary(
        users=len(people),
        organizations=len(demo_organizations),
        modules=Module.objects.filter(organization__in=demo_organizations).count(),
        sources=Source.objects.filter(organization__in=demo_organizations).count(),
        chunks=SourceChunk.objects.filter(source__organization__in=demo_organizations).count(),
    )


def _person(email: str) -> AbstractBaseUser:
    user_model = get_user_model()
    user = user_model.objects.filter(username=email).first()
    if user is not None:
        return user
    if email == STAFF_EMAIL:
        return user_model.objects.create_superuser(username=email, email=email, password=DEMO_PASSWORD)
    return user_model.objects.create_user(username=email, email=email, password=DEMO_PASSWORD)


def _organization(slug: str, name: str) -> Organization:
    return organization_by_slug_or_none(slug) or create_organization(slug=slug, name=name)


def _membership(user: AbstractBaseUser, organization: Organization, role: Role, *, changed_by) -> Membership:
    membership = membership_or_none(user_id=user.pk, organization_id=organization.id)
    if membership is None:
        return add_membership(user=user, organization=organization, role=role)
    return record_role_change(membership=membership, role=role, changed_by=changed_by)


def _import_demo_files(organization: Organization, folder: Path) -> dict[str, Source]:
    sources: dict[str, Source] = {}
    for path in sorted(folder.glob("*.md")):
        document = read_document(path)
        outcome = import_text_source(
            organization=organization, title=document.title, origin=path.name, text=document.text
        )
        sources[path.name] = outcome.source
    return sources


def _unprocessed_sources(organization: Organization, specs: tuple[tuple[str, str, str, str, bool], ...]) -> None:
    for title, kind, origin, text, process in specs:
        if Source.objects.filter(organization=organization, kind=kind, origin=origin).exists():
            continue
        source = register_source(organization=organization, title=title, kind=kind, origin=origin, text=text)
        if process:
            # Expected to fail: this demo source shows what a failed extraction looks like.
            with contextlib.suppress(InvalidArguments):
                process_source(source)


def _module(organization: Organization, spec: DemoModule, sources_by_file: dict[str, Source]) -> None:
    if Module.objects.filter(organization=organization, title=spec.title).exists():
        return
    create_module(
        organization=organization,
        title=spec.title,
        summary=spec.summary,
        status=spec.status,
        sections=spec.sections,
        sources=[sources_by_file[name] for name in spec.source_files],
    )
