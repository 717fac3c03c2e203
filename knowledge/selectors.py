"""Reads of an organization's modules, sources and chunks (docs/development/code-style.md#layout).

Every read takes the organization first and filters on it, so a row of another
organization is unreachable from here. An id that is malformed, missing or owned
by another organization raises the same `NotFound`; `DoesNotExist` never leaves
this module. Only processed sources are ever returned.
"""

import uuid
from datetime import datetime
from typing import Any

from django.db.models import Field

from knowledge.models import Module, Source, SourceStatus
from knowledge.search.query import ChunkHit, search_chunk_rows
from operator_core.errors import NotFound
from operator_core.ids import uuid_or_none
from operator_core.sql import (
    INTEGER_MAX,
    SucceedsIf,
    contains_condition,
    contains_param,
    datetime_param,
    fetch,
    row_converter,
    uuid_param,
)
from organizations.models import Organization

__all__ = [
    "ChunkHit",
    "KeysetPosition",
    "module_in_organization",
    "modules_for_organization",
    "processed_source_in_organization",
    "processed_sources_for_organization",
    "search_chunks",
]


# The last row of a page in a (-moment, -id) ordering: listing resumes after it.
KeysetPosition = tuple[datetime, uuid.UUID]


# A row is a plain dict of typed values (UUIDs, aware datetimes): a tool call builds no model
# instance. The SQL is written by hand (operator_core.sql): compiling these reads through the
# ORM cost more than running them (docs/development/performance.md).
MODULE_ROW_FIELDS = ("id", "title", "summary", "status", "updated_at", "section_count", "source_ids")
SOURCE_ROW_FIELDS = ("id", "title", "kind", "origin", "processed_at", "chunk_count", "characters")
MODULE_DETAIL_FIELDS = ("id", "title", "summary", "status", "created_at", "updated_at", "sections", "sources")
SOURCE_DETAIL_FIELDS = ("id", "title", "kind", "origin", "processed_at", "chunk_count", "chunks")


def _listing_filters(
    alias: str, *, moment: str, after: KeysetPosition | None, query: str | None, text_columns: tuple[str, str]
) -> tuple[str, list[object]]:
    """The keyset and text conditions shared by both listings, as SQL and its parameters."""
    conditions, params = "", []
    if after is not None:
        # Keyset pagination: stable while rows change, and an index range scan instead of an OFFSET.
        conditions += f" AND ({alias}.{moment} < %s OR ({alias}.{moment} = %s AND {alias}.id < %s))"
        params += [datetime_param(after[0]), datetime_param(after[0]), uuid_param(after[1])]
    if query:
        first, second = (contains_condition(f"{alias}.{column}") for column in text_columns)
        conditions += f" AND ({first} OR {second})"
        params += [contains_param(query)] * 2
    return conditions, params


def modules_for_organization(
    organization: Organization,
    *,
    limit: int,
    query: str | None = None,
    status: str | None = None,
    after: KeysetPosition | None = None,
) -> list[dict[str, Any]]:
    """The first `limit` modules of one organization as rows (`MODULE_ROW_FIELDS`), in one query.

    Newest `updated_at` first (ties: id descending); `after` resumes after that
    page position. `query` matches the title or summary case-insensitively;
    `source_ids` are the processed sources each module was built from, by title then id.
    """
    conditions, params = _listing_filters(
        "m", moment="updated_at", after=after, query=query, text_columns=("title", "summary")
    )
    if status:
        conditions += " AND m.status = %s"
        params.append(status)
    # The page is cut first; only its modules are joined to their sources.
    sql = f"""
        SELECT page.id, page.title, page.summary, page.status, page.updated_at, page.section_count, src.id
        FROM (
            SELECT m.id, m.title, m.summary, m.status, m.updated_at,
                   (SELECT COUNT(*) FROM organizations_modulesection sec WHERE sec.module_id = m.id) AS section_count
            FROM organizations_module m
            WHERE m.organization_id = %s{conditions}
            ORDER BY m.updated_at DESC, m.id DESC
            LIMIT %s
        ) page
        LEFT JOIN organizations_module_sources link ON link.module_id = page.id
        LEFT JOIN organizations_source src ON src.id = link.source_id AND src.status = %s
        ORDER BY page.updated_at DESC, page.id DESC, src.title, src.id
    """  # noqa: S608 - only placeholders and fixed conditions are interpolated
    # The call's last read (list_modules): its audit record may go with it (operator_core/sql.py).
    rows = fetch(sql, [uuid_param(organization.pk), *params, limit, SourceStatus.PROCESSED], settles_call=True)
    # A module stands on one row per source: convert its columns once, on its first row.
    module_row = row_converter([_field(Module, "id"), None, None, None, _field(Module, "updated_at"), None])
    source_id = row_converter([_field(Source, "id")])
    modules: dict[object, dict[str, Any]] = {}
    for *module, source in rows:
        row = modules.get(module[0])
        if row is None:
            row = modules[module[0]] = dict(zip(MODULE_ROW_FIELDS, [*module_row(module), []], strict=True))
        if source is not None:
            row["source_ids"].append(source_id([source])[0])
    return list(modules.values())


def module_in_organization(organization: Organization, *, module_id: str | uuid.UUID) -> dict[str, Any]:
    """One module (`MODULE_DETAIL_FIELDS`) with its sections (position, title, body; by position)
    and processed sources (id, title; by title, then id), in one query.

    Raises NotFound("Module not found.") for a malformed, missing or foreign id.
    """
    parsed = uuid_or_none(module_id)
    rows = []
    if parsed is not None:
        key = uuid_param(parsed)
        # The module stands on one row per part, a section (kind 1) or a source (kind 2), or on one
        # row with no part; a module of another organization, on none.
        rows = fetch(
            """
            SELECT m.id, m.title, m.summary, m.status, m.created_at, m.updated_at,
                   part.kind, part.position, part.id AS part_id, part.title AS part_title, part.body
            FROM organizations_module m
            LEFT JOIN (
                SELECT 1 AS kind, sec.position, NULL AS id, sec.title, sec.body
                FROM organizations_modulesection sec
                WHERE sec.module_id = %s
                UNION ALL
                SELECT 2, NULL, src.id, src.title, NULL
                FROM organizations_module_sources link
                JOIN organizations_source src ON src.id = link.source_id
                WHERE link.module_id = %s AND src.status = %s
            ) part ON 1 = 1
            WHERE m.organization_id = %s AND m.id = %s
            ORDER BY part.kind, part.position, part.title, part.id
            """,
            [key, key, SourceStatus.PROCESSED, uuid_param(organization.pk), key],
            # The call's one read: get_module answers exactly when it found the module, and its
            # audit record may go with it (operator_core/sql.py).
            settles_call=SucceedsIf("reading.id IS NOT NULL"),
        )
    if not rows:
        raise NotFound("Module not found.")
    # The module's columns are converted from its first row only.
    convert = row_converter(
        [_field(Module, "id"), None, None, None, _field(Module, "created_at"), _field(Module, "updated_at")]
    )
    source_id = row_converter([_field(Source, "id")])
    sections, sources = [], []
    for *_, kind, position, part_id, title, body in rows:
        if kind == 1:
            sections.append({"position": position, "title": title, "body": body})
        elif kind == 2:
            sources.append({"id": source_id([part_id])[0], "title": title})
    return dict(zip(MODULE_DETAIL_FIELDS, [*convert(rows[0][:6]), sections, sources], strict=True))


def processed_sources_for_organization(
    organization: Organization,
    *,
    limit: int,
    query: str | None = None,
    kind: str | None = None,
    after: KeysetPosition | None = None,
) -> list[dict[str, Any]]:
    """The first `limit` processed sources of one organization as rows (`SOURCE_ROW_FIELDS`), in one query.

    Newest `processed_at` first (ties: id descending); `after` resumes after that
    page position. `query` matches the title or origin case-insensitively;
    `characters` is the length of the text. Chunks are counted for the page's rows only.
    """
    conditions, params = _listing_filters(
        "s", moment="processed_at", after=after, query=query, text_columns=("title", "origin")
    )
    if kind:
        conditions += " AND s.kind = %s"
        params.append(kind)
    sql = f"""
        SELECT s.id, s.title, s.kind, s.origin, s.processed_at,
               (SELECT COUNT(*) FROM organizations_sourcechunk c WHERE c.source_id = s.id) AS chunk_count,
               LENGTH(s.text) AS characters
        FROM organizations_source s
        WHERE s.organization_id = %s AND s.status = %s{conditions}
        ORDER BY s.processed_at DESC, s.id DESC
        LIMIT %s
    """  # noqa: S608 - only placeholders and fixed conditions are interpolated
    rows = fetch(
        sql,
        [uuid_param(organization.pk), SourceStatus.PROCESSED, *params, limit],
        fields=[_field(Source, "id"), None, None, None, _field(Source, "processed_at"), None, None],
        settles_call=True,  # the call's last read (list_sources): its audit record may go with it
    )
    return [dict(zip(SOURCE_ROW_FIELDS, row, strict=True)) for row in rows]


def processed_source_in_organization(
    organization: Organization, *, source_id: str | uuid.UUID, start: int, limit: int
) -> dict[str, Any]:
    """One processed source (`SOURCE_DETAIL_FIELDS`) with its chunk count and, by index, up to
    `limit` of its chunks (index, text) from index `start`, in one query.

    Raises NotFound("Source not found.") for a malformed, missing, foreign or
    unprocessed id.
    """
    parsed = uuid_or_none(source_id)
    rows = []
    if parsed is not None:
        key = uuid_param(parsed)
        first = min(max(0, start), INTEGER_MAX)
        rows = fetch(
            """
            SELECT s.id, s.title, s.kind, s.origin, s.processed_at,
                   (SELECT COUNT(*) FROM organizations_sourcechunk WHERE source_id = %s) AS chunk_count,
                   c."index", c.text
            FROM organizations_source s
            LEFT JOIN (
                SELECT "index", text FROM organizations_sourcechunk
                WHERE source_id = %s AND "index" >= %s
                ORDER BY "index"
                LIMIT %s
            ) c ON 1 = 1
            WHERE s.organization_id = %s AND s.id = %s AND s.status = %s
            ORDER BY c."index"
            """,
            [key, key, first, max(0, limit), uuid_param(organization.pk), key, SourceStatus.PROCESSED],
            # The call's one read: fetch_knowledge answers when the source is found and `start` is
            # its first chunk or before its last (mcp_operator/tools/fetch_knowledge.py), and its
            # audit record may go with it (operator_core/sql.py).
            settles_call=SucceedsIf("%s = 0 OR %s < reading.chunk_count", (first, first)),
        )
    if not rows:
        raise NotFound("Source not found.")
    # The source stands on every chunk's row: its columns are converted from the first only.
    source = row_converter([_field(Source, "id"), None, None, None, _field(Source, "processed_at"), None])(rows[0][:6])
    chunks = [{"index": index, "text": text} for *_, index, text in rows if index is not None]
    return dict(zip(SOURCE_DETAIL_FIELDS, [*source, chunks], strict=True))


def _field(model: type, name: str) -> Field:
    return model._meta.get_field(name)  # type: ignore[attr-defined]


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
        parsed_ids = [parsed for parsed in (uuid_or_none(value) for value in source_ids) if parsed is not None]
    if not query or not query.strip() or limit <= 0:
        return []
    return search_chunk_rows(organization_id=organization.id, query=query, source_ids=parsed_ids, limit=limit)
