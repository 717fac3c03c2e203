"""Reads of organizations and their tenant data (docs/development/code-style.md#layout).

Every tenant read takes the organization first and filters on it, so a row of
another organization is unreachable from here. An id that is malformed, missing
or owned by another organization raises the same `NotFound`; `DoesNotExist`
never leaves this module. Only processed sources are ever returned.
"""

import uuid
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, IntegerField, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce, Length

from operator_core.errors import NotFound
from organizations.errors import IneligibleOrganization, NoEligibleOrganization, OrganizationChoiceRequired
from organizations.models import (
    OPERATOR_ROLES,
    Membership,
    Module,
    ModuleSection,
    Organization,
    Source,
    SourceChunk,
    SourceStatus,
)
from organizations.search import ChunkHit, search_chunk_rows

__all__ = [
    "ChunkHit",
    "KeysetPosition",
    "eligible_organizations",
    "holds_operator_role",
    "membership_or_none",
    "module_in_organization",
    "modules_for_organization",
    "organization_by_id_or_none",
    "organization_by_slug_or_none",
    "processed_source_ids_by_module",
    "processed_source_in_organization",
    "processed_sources_for_organization",
    "require_eligible_organization",
    "search_chunks",
    "source_chunks",
]


# The last row of a page in a (-moment, -id) ordering: listing resumes after it.
KeysetPosition = tuple[datetime, uuid.UUID]


def _rows_after(rows: QuerySet, *, moment_field: str, after: KeysetPosition | None) -> QuerySet:
    """Keyset pagination: stable while rows change, and an index range scan instead of an OFFSET."""
    if after is None:
        return rows
    moment, row_id = after
    return rows.filter(Q(**{f"{moment_field}__lt": moment}) | Q(**{moment_field: moment, "id__lt": row_id}))


def _uuid_or_none(value: object) -> uuid.UUID | None:
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except (TypeError, ValueError, AttributeError):
        return None


def organization_by_id_or_none(organization_id: str | uuid.UUID) -> Organization | None:
    """The organization with this id; None when missing or not a UUID."""
    parsed = _uuid_or_none(organization_id)
    if parsed is None:
        return None
    return Organization.objects.filter(id=parsed).first()


def organization_by_slug_or_none(slug: str) -> Organization | None:
    if not isinstance(slug, str) or not slug:
        return None
    return Organization.objects.filter(slug=slug).first()


def eligible_organizations(user: AbstractBaseUser) -> QuerySet[Organization]:
    """Organizations where `user` is admin or member (docs/data-model.md#people-and-roles), by name then id."""
    if user is None or not getattr(user, "pk", None):
        return Organization.objects.none()
    return Organization.objects.filter(memberships__user_id=user.pk, memberships__role__in=OPERATOR_ROLES).order_by(
        "name", "id"
    )


def require_eligible_organization(user: AbstractBaseUser, *, organization_id: str | None) -> Organization:
    """The organization `user` may connect to: the one chosen, or the only eligible one.

    With no choice (None or empty) and exactly one eligible organization, that
    one is used. Raises NoEligibleOrganization when the person is admin or
    member nowhere, OrganizationChoiceRequired when several are eligible and
    none was chosen, and IneligibleOrganization when the choice is not one of
    them (a forged or stale id). All three are `Forbidden`.
    """
    organizations = list(eligible_organizations(user))
    if not organizations:
        raise NoEligibleOrganization("You are not an admin or member of any organization.")
    if not organization_id:
        if len(organizations) == 1:
            return organizations[0]
        raise OrganizationChoiceRequired("Choose an organization to connect.", eligible=organizations)
    for organization in organizations:
        if str(organization.pk) == str(organization_id):
            return organization
    raise IneligibleOrganization("That organization is not available to you.", eligible=organizations)


def holds_operator_role(*, user_id: int, organization_id: object) -> bool:
    """True when the active person is admin or member of the organization right now (re-read, never cached)."""
    return Membership.objects.filter(
        user_id=user_id, organization_id=organization_id, role__in=OPERATOR_ROLES, user__is_active=True
    ).exists()


def membership_or_none(*, user_id: int, organization_id: str | uuid.UUID) -> Membership | None:
    """The membership of `user_id` in the organization whatever its role, or None."""
    parsed = _uuid_or_none(organization_id)
    if parsed is None:
        return None
    return Membership.objects.select_related("organization").filter(user_id=user_id, organization_id=parsed).first()


def _visible_sources() -> QuerySet[Source]:
    return Source.objects.filter(status=SourceStatus.PROCESSED).only("id", "title").order_by("title", "id")


# A listing row is a plain dict: a page of a listing tool builds no model instance.
MODULE_ROW_FIELDS = ("id", "title", "summary", "status", "updated_at", "section_count")
SOURCE_ROW_FIELDS = ("id", "title", "kind", "origin", "processed_at", "chunk_count", "characters")


def modules_for_organization(
    organization: Organization,
    *,
    query: str | None = None,
    status: str | None = None,
    after: KeysetPosition | None = None,
) -> QuerySet[dict[str, Any]]:
    """Modules of one organization as rows (`MODULE_ROW_FIELDS`), newest `updated_at` first
    (ties: id descending). `after` resumes after that page position; a page's
    sources come from `processed_source_ids_by_module`.
    """
    modules = _rows_after(Module.objects.filter(organization=organization), moment_field="updated_at", after=after)
    if query:
        modules = modules.filter(Q(title__icontains=query) | Q(summary__icontains=query))
    if status:
        modules = modules.filter(status=status)
    return modules.annotate(section_count=Count("sections")).order_by("-updated_at", "-id").values(*MODULE_ROW_FIELDS)


def processed_source_ids_by_module(module_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[uuid.UUID]]:
    """The processed sources each module was built from, ordered by title then id; one query."""
    links = (
        Module.sources.through.objects.filter(module_id__in=module_ids, source__status=SourceStatus.PROCESSED)
        .order_by("source__title", "source_id")
        .values_list("module_id", "source_id")
    )
    by_module: dict[uuid.UUID, list[uuid.UUID]] = {module_id: [] for module_id in module_ids}
    for module_id, source_id in links:
        by_module[module_id].append(source_id)
    return by_module


def module_in_organization(organization: Organization, *, module_id: str | uuid.UUID) -> Module:
    """One module with its sections (by position) and processed sources (by title, id).

    Raises NotFound("Module not found.") for a malformed, missing or foreign id.
    """
    parsed = _uuid_or_none(module_id)
    module = None
    if parsed is not None:
        module = (
            Module.objects.filter(organization=organization, id=parsed)
            .prefetch_related(
                Prefetch("sections", queryset=ModuleSection.objects.order_by("position")),
                Prefetch("sources", queryset=_visible_sources()),
            )
            .first()
        )
    if module is None:
        raise NotFound("Module not found.")
    return module


def _chunk_count() -> Coalesce:
    """Chunks of the outer source, as a correlated subquery: unlike a GROUP BY over
    every matching source, it is computed only for the rows a page returns."""
    counts = SourceChunk.objects.filter(source=OuterRef("pk")).order_by().values("source").annotate(count=Count("id"))
    return Coalesce(Subquery(counts.values("count"), output_field=IntegerField()), 0)


def processed_sources_for_organization(
    organization: Organization,
    *,
    query: str | None = None,
    kind: str | None = None,
    after: KeysetPosition | None = None,
) -> QuerySet[dict[str, Any]]:
    """Processed sources of one organization, newest `processed_at` first (ties: id descending).

    Rows (`SOURCE_ROW_FIELDS`) with `chunk_count` and `characters` (length of the
    text). `after` resumes after that page position.
    """
    sources = Source.objects.filter(organization=organization, status=SourceStatus.PROCESSED)
    sources = _rows_after(sources, moment_field="processed_at", after=after)
    if query:
        sources = sources.filter(Q(title__icontains=query) | Q(origin__icontains=query))
    if kind:
        sources = sources.filter(kind=kind)
    return (
        sources.annotate(chunk_count=_chunk_count(), characters=Length("text"))
        .order_by("-processed_at", "-id")
        .values(*SOURCE_ROW_FIELDS)
    )


def processed_source_in_organization(organization: Organization, *, source_id: str | uuid.UUID) -> Source:
    """One processed source, annotated `chunk_count`.

    Raises NotFound("Source not found.") for a malformed, missing, foreign or
    unprocessed id.
    """
    parsed = _uuid_or_none(source_id)
    source = None
    if parsed is not None:
        source = (
            Source.objects.filter(organization=organization, id=parsed, status=SourceStatus.PROCESSED)
            .annotate(chunk_count=_chunk_count())
            .first()
        )
    if source is None:
        raise NotFound("Source not found.")
    return source


def source_chunks(source: Source, *, start: int, limit: int) -> list[SourceChunk]:
    """Chunks `start` to `start + limit - 1` of a source (fewer at the end), by index."""
    if limit <= 0:
        return []
    return list(SourceChunk.objects.filter(source=source, index__gte=max(0, start)).order_by("index")[:limit])


def search_chunks(
    organization: Organization, *, query: str, source_ids: list[str] | None = None, limit: int = 10
) -> list[ChunkHit]:
    """Full-text search over the processed sources of one organization, in one query.

    Best first; equal scores ordered by (source id, chunk index). `source_ids`
    narrows the search; ids that are malformed or not this organization's simply
    match nothing. A query with no searchable word returns [].
    """
    parsed_ids = None
    if source_ids is not None:
        parsed_ids = [parsed for parsed in (_uuid_or_none(value) for value in source_ids) if parsed is not None]
    if not query or not query.strip() or limit <= 0:
        return []
    return search_chunk_rows(organization_id=organization.id, query=query, source_ids=parsed_ids, limit=limit)
