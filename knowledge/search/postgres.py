"""The PostgreSQL search (knowledge/search/query.py; docs/development/architecture.md#search).

One statement, prepared like the other reads of a tool call (operator_core/sql.py),
calls the PL/pgSQL function SEARCH_FUNCTION that migrations create
(knowledge/search/schema.py) for the best chunk ids, then joins their
titles and snippets (`ts_headline`) for those rows only.

The function takes the query as `websearch_to_tsquery('english', …)` and finds
matches through the GIN index whose keys are the chunks' lexemes behind their
organization's key, so only the organization's index entries are read.
Ranking is `ts_rank_cd`, computed from each row's vector; a ranked row costs a
few microseconds, and ranking every chunk that holds a very common word is what
made search slow in a large organization.

So a query of plain words (no quoted phrase, "or" or -word) looks at nested sets
of its matches, smallest first, each found through the index by the tier
lexemes of knowledge/search/schema.py:

- every word at least 16 times in the chunk, then 12, 8, 6, 4, 3 and 2 times;
- every word, and one of them at least twice (queries of two words or more);
- every word: all the matches.

It ranks each set in turn by `ts_rank_cd` and keeps the first that fills the
page (the last set otherwise). A set too small to fill it costs at most a page
of rows, so a query that is selective enough (as every query on a small corpus
is) is ranked over all its matches, exactly as without the sets. Ranking a set
at once, rather than counting it first, reads its index entries once.

A single word keeps its exact ranking too: its rank grows with its count
alone, so when fewer than a page of chunks hold it twice, the page is those
chunks and then the chunks that hold it once, whose ranks are all equal, in
(source id, chunk index) order; only the page's rows are ranked. Finding the
first of those in that order means reading every match, unless they lie among
the sources whose ids begin with 0: the index keys each chunk by its source's
first hex digit too, so the function looks there first (with the chunks that
hold the word twice) and reads all the matches only when that sixteenth does
not fill the page. Other queries
rank the chunks where their words occur most often, and rank a few thousand
rows at most on the benchmark corpus (bench/README.md). Phrases, "or" and
-word are ranked over all their matches.

The sets hold every chunk that matches, whatever its source's status: only
processed sources have chunks (knowledge/services.py writes chunks and the
status together), and the rows returned are checked against the status again.
"""

# ruff: noqa: S608 - SQL here is built from module constants only; values are always parameters

import uuid

from knowledge.search.schema import SEARCH_FUNCTION
from operator_core.sql import fetch

_SQL = f"""
    SELECT top.chunk_source, s.title, top.chunk_index,
           ts_headline('english', c.text, websearch_to_tsquery('english', %(query)s), %(headline)s),
           top.chunk_score
    FROM {SEARCH_FUNCTION}(%(organization)s, %(query)s, %(limit)s, %(source_ids)s::uuid[]) AS top
    JOIN organizations_sourcechunk c ON c.id = top.chunk_id
    JOIN organizations_source s ON s.id = top.chunk_source AND s.status = %(status)s
    ORDER BY top.chunk_score DESC, top.chunk_source ASC, top.chunk_index ASC
"""


def postgres_rows(
    *, organization_id: uuid.UUID, query: str, source_ids: list[uuid.UUID] | None, limit: int, headline: str
) -> list[tuple]:
    """(source id, title, chunk index, snippet, score) of the best `limit` chunks, best first."""
    params = {
        "query": query,
        "organization": organization_id,
        "limit": limit,
        "source_ids": None if source_ids is None else list(source_ids),
        "status": "processed",
        "headline": headline,
    }
    # Prepared, like the other reads of a tool call: planning the join cost PostgreSQL
    # about 0.3 ms of CPU per search (docs/development/performance.md).
    return fetch(_SQL, params)
