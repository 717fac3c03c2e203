"""The PostgreSQL search query (organizations/search.py; docs/development/architecture.md#search).

The query is `websearch_to_tsquery('english', …)`, matched through the GIN index
whose keys are the chunks' lexemes behind their organization's key, so only
the organization's index entries are read. Ranking is `ts_rank_cd`, snippets `ts_headline`, both computed from the
rows; a ranked row costs a few microseconds, and ranking every chunk that holds
a very common word is what made search slow in a large organization.

So a query of plain words (no quoted phrase, "or" or -word) looks at nested sets
of its matches, smallest first, each found through the index by the tier
lexemes of organizations/search_schema.py:

- every word at least 16 times in the chunk, then 12, 8, 6, 4, 3 and 2 times;
- every word, and one of them at least twice (queries of two words or more);
- every word: all the matches.

It ranks, by `ts_rank_cd`, the first set that holds at least `limit` chunks
(the last set otherwise). While a query matches fewer than `limit` chunks in a
set, the next one is read, so a query that is selective enough (as every query
on a small corpus is) is ranked over all its matches, exactly as without the
sets; a single word always is, since its rank only grows with its count. Other
queries rank the chunks where their words occur most often, and rank a few
thousand rows at most on the benchmark corpus
(docs/development/architecture.md#search). Phrases, "or" and -word are ranked
over all their matches.

The sets hold every chunk that matches, whatever its source's status: only
processed sources have chunks (organizations/services.py writes chunks and the
status together), and the rows returned are checked against the status again.
"""

# ruff: noqa: S608 - SQL here is built from module constants only; values are always parameters

import uuid

from django.db import connection

from organizations.search_schema import KEYS_FUNCTION, QUERY_FUNCTION, TERM_FREQUENCY_TIERS

_TIERS = sorted(TERM_FREQUENCY_TIERS, reverse=True)
# A lexeme in the text form of a tsquery: between single quotes, a quote inside doubled.
_LEXEME = "'((?:[^']|'')+)'"
_QUOTED = "'(?:[^']|'')*'"


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _tier_query(tier: int, operator: str) -> str:
    """The plain query's lexemes, each as its tier lexeme '<lexeme> <tier>', joined by `operator`."""
    return (
        f"(SELECT string_agg('''' || lexeme || ' {tier}''', ' {operator} ') "
        "FROM unnest(plain.lexemes) AS lexeme)::tsquery"
    )


def _search_sql(source_filter: str) -> str:
    # Each set's query, smallest set first. A scalar subquery, so that the planner
    # sees one value and searches the index with it. The index holds lexemes behind
    # the organization's key (organizations/search_schema.py); the query's own
    # lexemes then check positions (phrases), and the organization id settles
    # two organizations whose keys coincide.
    matches = [f"(SELECT tier_{tier} FROM sets)" for tier in _TIERS]
    matches += ["(SELECT one_twice FROM sets)", "(SELECT query FROM words)"]
    # found_n: the rows of the first set of 1..n that holds `limit` rows, or all of set n.
    found = []
    for number, match in enumerate(matches, start=1):
        rows = f"""SELECT c.id, c.source_id, c."index" AS idx,
                   ROUND(ts_rank_cd(c.search_vector, (SELECT query FROM words))::numeric, 6) AS score
            FROM organizations_sourcechunk c
            WHERE {KEYS_FUNCTION}(c.organization_id, c.search_vector) @@ {QUERY_FUNCTION}(%(organization)s, {match})
              AND c.search_vector @@ {match} AND c.organization_id = %(organization)s {source_filter}"""
        if number > 1:
            earlier = f"found_{number - 1}"
            rows = f"""SELECT * FROM {earlier} WHERE (SELECT count(*) FROM {earlier}) >= %(limit)s
            UNION ALL
            {rows}
              AND (SELECT count(*) FROM {earlier}) < %(limit)s"""
        found.append(f"found_{number} AS MATERIALIZED (\n            {rows}\n        )")
    found_ctes = ",\n        ".join(found)
    tier_columns = ",\n                   ".join(f"{_tier_query(tier, '&')} AS tier_{tier}" for tier in _TIERS)
    # `plain`: the query's lexemes when it is only lexemes joined by &; NULL otherwise, and then
    # every tier query is NULL too and matches nothing, so only the last set is read.
    return f"""
        WITH words AS MATERIALIZED (SELECT websearch_to_tsquery('english', %(query)s) AS query),
        plain AS MATERIALIZED (
            SELECT array_agg(found[1]) AS lexemes
            FROM words, regexp_matches(words.query::text, {_sql_string(_LEXEME)}, 'g') AS found
            WHERE regexp_replace(words.query::text, {_sql_string(_QUOTED)}, '', 'g') ~ '^[ &]*$'
        ),
        sets AS MATERIALIZED (
            SELECT {tier_columns},
                   CASE WHEN cardinality(plain.lexemes) > 1
                        THEN words.query && {_tier_query(min(_TIERS), "|")} END AS one_twice
            FROM words, plain
        ),
        {found_ctes},
        top AS (
            SELECT id, source_id, idx, score FROM found_{len(matches)}
            ORDER BY score DESC, source_id ASC, idx ASC
            LIMIT %(limit)s
        )
        SELECT top.source_id, s.title, top.idx,
               ts_headline('english', c.text, (SELECT query FROM words), %(headline)s) AS snippet, top.score
        FROM top
        JOIN organizations_sourcechunk c ON c.id = top.id
        JOIN organizations_source s ON s.id = top.source_id AND s.status = %(status)s
        ORDER BY top.score DESC, top.source_id ASC, top.idx ASC
    """


_SQL = {False: _search_sql(""), True: _search_sql("AND c.source_id = ANY(%(source_ids)s)")}


def postgres_rows(
    *, organization_id: uuid.UUID, query: str, source_ids: list[uuid.UUID] | None, limit: int, headline: str
) -> list[tuple]:
    """(source id, title, chunk index, snippet, score) of the best `limit` chunks, best first."""
    params: dict[str, object] = {
        "query": query,
        "organization": organization_id,
        "status": "processed",
        "limit": limit,
        "headline": headline,
    }
    if source_ids is not None:
        params["source_ids"] = list(source_ids)
    with connection.cursor() as cursor:
        cursor.execute(_SQL[source_ids is not None], params)
        return cursor.fetchall()
