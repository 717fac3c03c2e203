"""Full-text search over SourceChunk, one implementation per database vendor.

- PostgreSQL: a generated, stored `tsvector` column (`to_tsvector('english', text)`)
  with a GIN index; queries use `websearch_to_tsquery('english', …)`, ranking
  `ts_rank_cd`, snippets `ts_headline`.
- SQLite: an FTS5 external-content table over the chunks, kept in sync by
  triggers; tokenizer `porter unicode61`; ranking `bm25()` (negated, so higher is
  better). User input never reaches FTS5 syntax: it is reduced to word tokens,
  English stop words are dropped (as PostgreSQL's `english` configuration does),
  and each remaining token is quoted. All tokens must match (AND), as with
  `websearch_to_tsquery` for plain words.

Both vendors: only processed sources of the given organization; scores are
rounded to 6 decimals and equal scores are ordered by (source id, chunk index),
so the same query on the same data always returns the same list. Snippets are
plain text around the matches on one line (runs of whitespace become one
space), with matched words between « and » and "…" where text was cut.

The schema statements live here (not only in the migration) so that a later
migration that rebuilds the chunk table on SQLite can reinstall the triggers.
"""

import re
import uuid
from dataclasses import dataclass

from django.db import connection
from django.db.backends.base.base import BaseDatabaseWrapper

FTS_TABLE = "organizations_sourcechunk_fts"
SNIPPET_START = "«"
SNIPPET_STOP = "»"
SNIPPET_ELLIPSIS = "…"

_SQLITE_INSTALL = (
    "CREATE VIRTUAL TABLE organizations_sourcechunk_fts USING fts5("
    "text, content='organizations_sourcechunk', content_rowid='id', "
    "tokenize='porter unicode61 remove_diacritics 2')",
    "CREATE TRIGGER organizations_sourcechunk_fts_insert AFTER INSERT ON organizations_sourcechunk BEGIN "
    "INSERT INTO organizations_sourcechunk_fts(rowid, text) VALUES (new.id, new.text); END",
    "CREATE TRIGGER organizations_sourcechunk_fts_delete AFTER DELETE ON organizations_sourcechunk BEGIN "
    "INSERT INTO organizations_sourcechunk_fts(organizations_sourcechunk_fts, rowid, text) "
    "VALUES ('delete', old.id, old.text); END",
    "CREATE TRIGGER organizations_sourcechunk_fts_update AFTER UPDATE ON organizations_sourcechunk BEGIN "
    "INSERT INTO organizations_sourcechunk_fts(organizations_sourcechunk_fts, rowid, text) "
    "VALUES ('delete', old.id, old.text); "
    "INSERT INTO organizations_sourcechunk_fts(rowid, text) VALUES (new.id, new.text); END",
    "INSERT INTO organizations_sourcechunk_fts(organizations_sourcechunk_fts) VALUES ('rebuild')",
)
_SQLITE_UNINSTALL = (
    "DROP TRIGGER IF EXISTS organizations_sourcechunk_fts_insert",
    "DROP TRIGGER IF EXISTS organizations_sourcechunk_fts_delete",
    "DROP TRIGGER IF EXISTS organizations_sourcechunk_fts_update",
    f"DROP TABLE IF EXISTS {FTS_TABLE}",
)
_POSTGRES_INSTALL = (
    "ALTER TABLE organizations_sourcechunk ADD COLUMN search_vector tsvector "
    "GENERATED ALWAYS AS (to_tsvector('english', text)) STORED",
    "CREATE INDEX organizations_sourcechunk_search_idx ON organizations_sourcechunk USING GIN (search_vector)",
)
_POSTGRES_UNINSTALL = (
    "DROP INDEX IF EXISTS organizations_sourcechunk_search_idx",
    "ALTER TABLE organizations_sourcechunk DROP COLUMN IF EXISTS search_vector",
)

# PostgreSQL's english.stop (the Snowball list), so both vendors ignore the same words.
ENGLISH_STOP_WORDS = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers
    herself it its itself they them their theirs themselves what which who whom this that these those am is
    are was were be been being have has had having do does did doing a an the and but if or because as until
    while of at by for with about against between into through during before after above below to from up
    down in out on off over under again further then once here there when where why how all any both each few
    more most other some such no nor not only own same so than too very s t can will just don should now
    """.split()  # noqa: SIM905 - a word list reads better as text
)
_TOKEN = re.compile(r"[^\W_]+")

_POSTGRES_HEADLINE_OPTIONS = (
    f"StartSel={SNIPPET_START}, StopSel={SNIPPET_STOP}, MaxWords=18, MinWords=8, "
    f'ShortWord=3, MaxFragments=2, FragmentDelimiter=" {SNIPPET_ELLIPSIS} "'
)


@dataclass(frozen=True)
class ChunkHit:
    source_id: str
    source_title: str
    chunk_index: int
    snippet: str
    score: float


def install_search_schema(db: BaseDatabaseWrapper) -> None:
    """Create the vendor's search structures (called by migration 0002)."""
    statements = {"sqlite": _SQLITE_INSTALL, "postgresql": _POSTGRES_INSTALL}.get(db.vendor, ())
    with db.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def uninstall_search_schema(db: BaseDatabaseWrapper) -> None:
    statements = {"sqlite": _SQLITE_UNINSTALL, "postgresql": _POSTGRES_UNINSTALL}.get(db.vendor, ())
    with db.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def fts5_match_expression(query: str) -> str:
    """A safe FTS5 MATCH expression for free text: quoted word tokens, ANDed.

    Returns "" when the query has no searchable word (then nothing matches).
    """
    tokens = [token for token in _TOKEN.findall(query.lower()) if token not in ENGLISH_STOP_WORDS]
    unique = list(dict.fromkeys(tokens))
    return " ".join(f'"{token}"' for token in unique)


def search_chunk_rows(
    *, organization_id: uuid.UUID, query: str, source_ids: list[uuid.UUID] | None, limit: int
) -> list[ChunkHit]:
    """One query: the best `limit` chunks of processed sources of one organization."""
    if source_ids is not None and not source_ids:
        return []
    if connection.vendor == "postgresql":
        rows = _postgres_rows(organization_id, query, source_ids, limit)
    elif connection.vendor == "sqlite":
        rows = _sqlite_rows(organization_id, query, source_ids, limit)
    else:  # pragma: no cover - settings only allow the two vendors
        raise NotImplementedError(f"no full-text search for {connection.vendor}")
    return [
        ChunkHit(
            source_id=str(uuid.UUID(str(source_id))),
            source_title=title,
            chunk_index=int(index),
            snippet=" ".join((snippet or "").split()),
            # bm25 of SQLite is negative-better; "+ 0.0" turns -0.0 into 0.0.
            score=round(float(score), 6) + 0.0,
        )
        for source_id, title, index, snippet, score in rows
    ]


def _sqlite_rows(organization_id: uuid.UUID, query: str, source_ids: list[uuid.UUID] | None, limit: int) -> list[tuple]:
    expression = fts5_match_expression(query)
    if not expression:
        return []
    params: list[object] = [expression, organization_id.hex, "processed"]
    source_filter = ""
    if source_ids is not None:
        source_filter = f"AND c.source_id IN ({', '.join('%s' for _ in source_ids)})"
        params.extend(source_id.hex for source_id in source_ids)
    params.append(limit)
    sql = f"""
        SELECT c.source_id, s.title, c."index",
               snippet({FTS_TABLE}, 0, %s, %s, %s, 32) AS snippet,
               ROUND(-bm25({FTS_TABLE}), 6) AS score
        FROM {FTS_TABLE}
        JOIN organizations_sourcechunk c ON c.id = {FTS_TABLE}.rowid
        JOIN organizations_source s ON s.id = c.source_id
        WHERE {FTS_TABLE} MATCH %s AND s.organization_id = %s AND s.status = %s {source_filter}
        ORDER BY score DESC, c.source_id ASC, c."index" ASC
        LIMIT %s
    """  # noqa: S608 - only placeholders and constants are interpolated
    with connection.cursor() as cursor:
        cursor.execute(sql, [SNIPPET_START, SNIPPET_STOP, SNIPPET_ELLIPSIS, *params])
        return cursor.fetchall()


def _postgres_rows(
    organization_id: uuid.UUID, query: str, source_ids: list[uuid.UUID] | None, limit: int
) -> list[tuple]:
    if not _TOKEN.search(query):
        return []
    params: list[object] = [query, organization_id, "processed"]
    source_filter = ""
    if source_ids is not None:
        source_filter = "AND c.source_id = ANY(%s)"
        params.append(list(source_ids))
    params.append(limit)
    # Rank and cut first, then build headlines for the few rows that remain.
    sql = f"""
        WITH q AS (SELECT websearch_to_tsquery('english', %s) AS query),
        hits AS (
            SELECT c.source_id, s.title, c."index" AS idx, c.text,
                   ROUND(ts_rank_cd(c.search_vector, q.query)::numeric, 6) AS score
            FROM organizations_sourcechunk c
            JOIN organizations_source s ON s.id = c.source_id
            CROSS JOIN q
            WHERE c.search_vector @@ q.query AND s.organization_id = %s AND s.status = %s {source_filter}
            ORDER BY score DESC, c.source_id ASC, c."index" ASC
            LIMIT %s
        )
        SELECT hits.source_id, hits.title, hits.idx,
               ts_headline('english', hits.text, q.query, %s) AS snippet, hits.score
        FROM hits CROSS JOIN q
        ORDER BY hits.score DESC, hits.source_id ASC, hits.idx ASC
    """  # noqa: S608 - only placeholders and constants are interpolated
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, _POSTGRES_HEADLINE_OPTIONS])
        return cursor.fetchall()
