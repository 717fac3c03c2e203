"""Full-text search over SourceChunk: the SQLite query, and the parts both vendors share.

The structures are created by migrations (knowledge/search/schema.py);
PostgreSQL's query is knowledge/search/postgres.py. User input never reaches
FTS5 syntax: it is reduced to word tokens, English stop words are dropped and
each token is quoted; all must match. Both vendors search only processed
sources of the given organization, round scores to 6 decimals and break ties by
(source id, chunk index), so the same query on the same data returns the same
list, with the chunk text of the returned rows only, from which
knowledge/search/snippets.py cuts the snippets. The design:
docs/development/architecture.md#search.
"""

import unicodedata
import uuid
from dataclasses import dataclass

from django.db import connection

from knowledge.search.postgres import postgres_rows
from knowledge.search.schema import FTS_TABLE, WORD, organization_word_key
from knowledge.search.snippets import query_pattern, snippet
from operator_core.sql import fetch

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


@dataclass(frozen=True)
class ChunkHit:
    source_id: str
    source_title: str
    chunk_index: int
    snippet: str
    score: float


def fts5_match_expression(query: str, *, key: str = "") -> str:
    """A safe FTS5 MATCH expression for free text: quoted word tokens, each behind `key`, ANDed.

    Returns "" when the query has no searchable word (then nothing matches).
    """
    tokens = [token for token in WORD.findall(query.lower()) if token not in ENGLISH_STOP_WORDS]
    return " AND ".join(f'"{key}{token}"' for token in dict.fromkeys(tokens))


def search_chunk_rows(
    *, organization_id: uuid.UUID, query: str, source_ids: list[uuid.UUID] | None, limit: int
) -> list[ChunkHit]:
    """One query: the best `limit` chunks of processed sources of one organization."""
    if source_ids is not None and not source_ids:
        return []
    query = unicodedata.normalize("NFC", query)  # as the indexed text is (knowledge/processing.py)
    if connection.vendor == "postgresql":
        rows = _postgres_rows(organization_id, query, source_ids, limit)
    elif connection.vendor == "sqlite":
        rows = _sqlite_rows(organization_id, query, source_ids, limit)
    else:  # pragma: no cover - settings only allow the two vendors
        raise NotImplementedError(f"no full-text search for {connection.vendor}")
    # Both vendors return each hit's chunk text; one builder cuts the snippets (search/snippets.py).
    pattern = query_pattern(query, ENGLISH_STOP_WORDS)
    return [
        ChunkHit(
            source_id=str(uuid.UUID(str(source_id))),
            source_title=title,
            chunk_index=int(index),
            snippet=snippet(text or "", pattern),
            # bm25 of SQLite is negative-better; "+ 0.0" turns -0.0 into 0.0.
            score=round(float(score), 6) + 0.0,
        )
        for source_id, title, index, text, score in rows
    ]


def _sqlite_rows(organization_id: uuid.UUID, query: str, source_ids: list[uuid.UUID] | None, limit: int) -> list[tuple]:
    # The index holds every word behind its organization's key: so does the query.
    key = organization_word_key(organization_id.hex)
    expression = fts5_match_expression(query, key=key)
    if not expression:
        return []
    params: list[object] = [expression, organization_id.hex, "processed"]
    source_filter = ""
    if source_ids is not None:
        source_filter = f"AND c.source_id IN ({', '.join('%s' for _ in source_ids)})"
        params.extend(source_id.hex for source_id in source_ids)
    # Rank and cut first; the chunk's plain text, for its snippet, is read for the returned rows only.
    sql = f"""
        WITH top AS (
            SELECT {FTS_TABLE}.rowid AS id, c.source_id, c."index" AS idx,
                   ROUND(-bm25({FTS_TABLE}), 6) AS score
            FROM {FTS_TABLE}
            JOIN organizations_sourcechunk c ON c.id = {FTS_TABLE}.rowid
            JOIN organizations_source s ON s.id = c.source_id
            WHERE {FTS_TABLE} MATCH %s AND c.organization_id = %s AND s.status = %s {source_filter}
            ORDER BY score DESC, c.source_id ASC, c."index" ASC
            LIMIT %s
        )
        SELECT top.source_id, s.title, top.idx, c.text, top.score
        FROM top
        JOIN organizations_source s ON s.id = top.source_id
        JOIN organizations_sourcechunk c ON c.id = top.id
        ORDER BY top.score DESC, top.source_id ASC, top.idx ASC
    """  # noqa: S608 - only placeholders and constants are interpolated
    return fetch(sql, [*params, limit])


def _postgres_rows(
    organization_id: uuid.UUID, query: str, source_ids: list[uuid.UUID] | None, limit: int
) -> list[tuple]:
    if not WORD.search(query):
        return []
    return postgres_rows(organization_id=organization_id, query=query, source_ids=source_ids, limit=limit)
