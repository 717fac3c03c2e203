"""The PostgreSQL search: one statement per call, prepared like the other reads (operator_core/sql.py).

It calls the PL/pgSQL function SEARCH_FUNCTION that migrations create
(knowledge/search/schema.py) for the best chunk ids, then joins their titles
and chunk texts for those rows only (the snippets are cut in Python,
knowledge/search/snippets.py), dropping any row whose source
is not processed. The function matches through the organization-keyed GIN
index and ranks with `ts_rank_cd` over the first nested set of matches (tiers
of word counts) that fills the page; why, and what it costs:
docs/development/architecture.md#search.
"""

# ruff: noqa: S608 - SQL here is built from module constants only; values are always parameters

import uuid

from knowledge.search.schema import SEARCH_FUNCTION
from operator_core.sql import fetch

_SQL = f"""
    SELECT top.chunk_source, s.title, top.chunk_index, c.text, top.chunk_score
    FROM {SEARCH_FUNCTION}(%(organization)s, %(query)s, %(limit)s, %(source_ids)s::uuid[]) AS top
    JOIN organizations_sourcechunk c ON c.id = top.chunk_id
    JOIN organizations_source s ON s.id = top.chunk_source AND s.status = %(status)s
    ORDER BY top.chunk_score DESC, top.chunk_source ASC, top.chunk_index ASC
"""


def postgres_rows(
    *, organization_id: uuid.UUID, query: str, source_ids: list[uuid.UUID] | None, limit: int
) -> list[tuple]:
    """(source id, title, chunk index, chunk text, score) of the best `limit` chunks, best first."""
    params = {
        "query": query,
        "organization": organization_id,
        "limit": limit,
        "source_ids": None if source_ids is None else list(source_ids),
        "status": "processed",
    }
    # Prepared, like the other reads of a tool call: planning the join cost PostgreSQL
    # about 0.3 ms of CPU per search (docs/development/performance.md). The call's last
    # read (search_knowledge): its audit record may go with it (operator_core/sql.py).
    return fetch(_SQL, params, settles_call=True)
