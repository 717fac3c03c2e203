"""Create whatever part of the demo data is missing, leaving the rest alone."""

import contextlib
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction

from knowledge.demo.modules import MODULES, DemoModule
from knowledge.demo.sources import CONTENT_DIR, UNPROCESSED_SOURCES
from knowledge.extraction import read_document
from knowledge.models import Module, Source, SourceChunk
from knowledge.services import create_module, import_text_source, process_source, register_source
from operator_core.errors import InvalidArguments
from organizations.demo import seed_demo_accounts
from organizations.models import Organization


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
        accounts = seed_demo_accounts()
        for slug, organization in accounts.organizations.items():
            sources_by_file = _import_demo_files(organization, CONTENT_DIR / slug)
            _unprocessed_sources(organization, UNPROCESSED_SOURCES[slug])
            for module in MODULES[slug]:
                _module(organization, module, sources_by_file)
    demo_organizations = list(accounts.organizations.values())
    return SeedSummary(
        users=len(accounts.people),
        organizations=len(demo_organizations),
        modules=Module.objects.filter(organization__in=demo_organizations).count(),
        sources=Source.objects.filter(organization__in=demo_organizations).count(),
        chunks=SourceChunk.objects.filter(source__organization__in=demo_organizations).count(),
    )


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
