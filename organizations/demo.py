"""The demo data behind `manage.py seed_demo` (docs/development/decisions.md#operating).

Idempotent: people are keyed by email, organizations by slug, sources by
(organization, kind, origin), modules by (organization, title); anything that
exists is left alone, except that a demo file whose text changed is reprocessed
and a demo membership with another role is set back. The sources' prose lives in
`demo_content/<slug>/*.md` and goes through the same import service as
`import_sources`. Acme is a software company, Globex a manufacturer, so a leak
of one organization's text into the other's results is easy to see.
"""

import contextlib
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from operator_core.errors import InvalidArguments
from organizations.extraction import read_document
from organizations.models import (
    Membership,
    Module,
    ModuleStatus,
    Organization,
    Role,
    Source,
    SourceChunk,
    SourceKind,
)
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

DEMO_PASSWORD = "operator-demo"
CONTENT_DIR = Path(__file__).resolve().parent / "demo_content"
STAFF_EMAIL = "staff@operator.test"

ORGANIZATIONS = (("acme", "Acme Corporation"), ("globex", "Globex Industries"))

# email -> {organization slug: role}
PEOPLE: dict[str, dict[str, Role]] = {
    "alice@acme.test": {"acme": Role.ADMIN},
    "bob@acme.test": {"acme": Role.MEMBER},
    "carol@acme.test": {"acme": Role.LEARNER},
    "dave@acme.test": {"acme": Role.REQUESTER},
    "erin@multi.test": {"acme": Role.MEMBER, "globex": Role.ADMIN},
    "frank@nowhere.test": {},
    STAFF_EMAIL: {},
}

# Sources that exist but are not processed: tools must never show them.
# (title, kind, origin, text, process) - processing an empty text fails.
UNPROCESSED_SOURCES: dict[str, tuple[tuple[str, str, str, str, bool], ...]] = {
    "acme": (
        (
            "Roadmap draft (awaiting processing)",
            SourceKind.URL,
            "https://wiki.acme.test/roadmap-draft",
            "Unreleased roadmap codename Quasarwing: not yet processed, never visible to tools.",
            False,
        ),
        ("Scanned vendor contract", SourceKind.FILE, "vendor-contract-scan.pdf", "", True),
    ),
    "globex": (
        (
            "Plant expansion memo (awaiting processing)",
            SourceKind.URL,
            "https://intranet.globex.test/expansion-memo",
            "Confidential plant expansion codename Ironheron: not yet processed, never visible to tools.",
            False,
        ),
        ("Scanned supplier certificate", SourceKind.FILE, "supplier-certificate-scan.pdf", "", True),
    ),
}


@dataclass(frozen=True)
class DemoModule:
    title: str
    summary: str
    status: ModuleStatus
    sections: tuple[tuple[str, str], ...]
    source_files: tuple[str, ...]


@dataclass(frozen=True)
class SeedSummary:
    users: int
    organizations: int
    modules: int
    sources: int
    chunks: int


def seed_demo_data() -> SeedSummary:
    """Create whatever part of the demo data is missing; return the demo row counts."""
    from organizations.demo_modules import MODULES

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
