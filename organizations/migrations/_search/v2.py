"""Search schema version 2, frozen (installed by migration 0003).

SQLite: an FTS5 table over a view adding a token naming the chunk's
organization. PostgreSQL: a search vector with term-frequency tier lexemes, and
a GIN index whose keys are its lexemes behind the organization's key, with the
PL/pgSQL search function. PostgreSQL's index part (keys function, index, search
function) apart from its vector part, as version 4 replaces the index only.
"""

from organizations.migrations._search.v1 import SQLITE_UNINSTALL

SQLITE_INSTALL = (
    "CREATE VIEW organizations_sourcechunk_search AS SELECT id, text, 'o' || c.organization_id || '0' AS "
    "organization FROM organizations_sourcechunk AS c",
    "CREATE VIRTUAL TABLE organizations_sourcechunk_fts USING fts5(text, organization, "
    "content='organizations_sourcechunk_search', content_rowid='id', tokenize='porter unicode61 "
    "remove_diacritics 2')",
    "CREATE TRIGGER organizations_sourcechunk_fts_insert AFTER INSERT ON organizations_sourcechunk BEGIN "
    "INSERT INTO organizations_sourcechunk_fts(rowid, text, organization) VALUES (new.id, new.text, 'o' "
    "|| new.organization_id || '0'); END",
    "CREATE TRIGGER organizations_sourcechunk_fts_delete AFTER DELETE ON organizations_sourcechunk BEGIN "
    "INSERT INTO organizations_sourcechunk_fts(organizations_sourcechunk_fts, rowid, text, organization) "
    "VALUES ('delete', old.id, old.text, 'o' || old.organization_id || '0'); END",
    "CREATE TRIGGER organizations_sourcechunk_fts_update AFTER UPDATE ON organizations_sourcechunk BEGIN "
    "INSERT INTO organizations_sourcechunk_fts(organizations_sourcechunk_fts, rowid, text, organization) "
    "VALUES ('delete', old.id, old.text, 'o' || old.organization_id || '0'); INSERT INTO "
    "organizations_sourcechunk_fts(rowid, text, organization) VALUES (new.id, new.text, 'o' || "
    "new.organization_id || '0'); END",
    "INSERT INTO organizations_sourcechunk_fts(organizations_sourcechunk_fts) VALUES ('rebuild')",
)
POSTGRESQL_VECTOR_INSTALL = (
    "ALTER TABLE organizations_sourcechunk SET (toast_tuple_target = 8160)",
    "CREATE FUNCTION organizations_search_vector(body text) RETURNS tsvector LANGUAGE sql IMMUTABLE "
    "STRICT PARALLEL SAFE AS $$ SELECT words || array_to_tsvector(ARRAY(SELECT entry.lexeme || ' ' || "
    "tier FROM unnest(words) AS entry, unnest(ARRAY[2, 3, 4, 6, 8, 12, 16]) AS tier WHERE "
    "cardinality(entry.positions) >= tier)) FROM to_tsvector('english'::regconfig, body) AS words $$",
    "CREATE FUNCTION organizations_search_query(organization uuid, query tsquery) RETURNS tsquery "
    "LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$ SELECT CASE WHEN numnode(query) = 0 THEN NULL WHEN "
    "indexable = 'T' THEN quote_literal(key)::tsquery ELSE regexp_replace(regexp_replace(indexable, "
    "'<(?:-|[0-9]+)>', '&', 'g'), '''((?:[^'']|'''')+)''', '''' || key || '\\1''', 'g')::tsquery END FROM "
    "left(replace(organization::text, '-', ''), 12) AS key, querytree(query) AS indexable $$",
    "ALTER TABLE organizations_sourcechunk ADD COLUMN search_vector tsvector GENERATED ALWAYS AS "
    "(organizations_search_vector(text)) STORED",
)
POSTGRESQL_VECTOR_UNINSTALL = (
    "ALTER TABLE organizations_sourcechunk DROP COLUMN IF EXISTS search_vector",
    "DROP FUNCTION IF EXISTS organizations_search_query(uuid, tsquery)",
    "DROP FUNCTION IF EXISTS organizations_search_vector(text)",
    "ALTER TABLE organizations_sourcechunk RESET (toast_tuple_target)",
)
POSTGRESQL_INDEX_INSTALL = (
    "CREATE FUNCTION organizations_search_keys(organization uuid, vector tsvector) RETURNS tsvector "
    "LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$ SELECT array_to_tsvector(ARRAY(SELECT key || "
    "lexeme FROM unnest(tsvector_to_array(vector)) AS lexeme) || key) FROM "
    "left(replace(organization::text, '-', ''), 12) AS key $$",
    "CREATE INDEX organizations_sourcechunk_search_idx ON organizations_sourcechunk USING GIN "
    "(organizations_search_keys(organization_id, search_vector))",
    """
CREATE FUNCTION organizations_search_chunks(organization uuid, query text, page integer, sources uuid[])
RETURNS TABLE (chunk_id bigint, chunk_source uuid, chunk_index integer, chunk_score numeric)
LANGUAGE plpgsql STABLE PARALLEL UNSAFE ROWS 10
SET jit = off SET max_parallel_workers_per_gather = 0 SET plan_cache_mode = force_generic_plan
AS $search$
DECLARE
    words tsquery := websearch_to_tsquery('english', query);
    lexemes text[];
    sets tsquery[] := ARRAY[]::tsquery[];
    candidates tsquery;
    twice tsquery;
    tier integer;
    ids bigint[];
    chunk_sources uuid[];
    indexes integer[];
    scores numeric[];
BEGIN
    IF numnode(words) = 0 THEN
        RETURN;
    END IF;
    -- Only a query of plain words (lexemes joined by &) has smaller sets than all its matches.
    IF regexp_replace(words::text, '''(?:[^'']|'''')*''', '', 'g') ~ '^[ &]*$' THEN
        lexemes := ARRAY(SELECT found_lexeme[1]
                         FROM regexp_matches(words::text, '''((?:[^'']|'''')+)''', 'g') AS found_lexeme);
        FOREACH tier IN ARRAY ARRAY[16, 12, 8, 6, 4, 3, 2] LOOP
            sets := sets || array_to_string(
                ARRAY(SELECT '''' || lexeme || ' ' || tier || '''' FROM unnest(lexemes) AS lexeme), ' & ')::tsquery;
        END LOOP;
        IF cardinality(lexemes) > 1 THEN
            sets := sets || (words && array_to_string(
                ARRAY(SELECT '''' || lexeme || ' 2''' FROM unnest(lexemes) AS lexeme), ' | ')::tsquery);
        END IF;
    END IF;
    sets := sets || words;
    -- Rank each set in turn and keep the first that fills the page. A set that does not fill
    -- it costs at most a page of rows; ranking it at once, instead of counting it first and
    -- ranking it after, reads the chosen set's index entries once.
    FOREACH candidates IN ARRAY sets LOOP
        IF candidates = words AND cardinality(lexemes) = 1 THEN
            -- One word, and fewer than a page of chunks hold it twice: its rank grows with its
            -- count alone, so the page is those chunks and then the chunks that hold it once,
            -- whose ranks are equal, in (source id, chunk index) order. Only the page is ranked.
            -- The keys of a plain word are exact: no row needs its vector checked.
            twice := ('''' || lexemes[1] || ' 2''')::tsquery;
            FOREACH candidates IN ARRAY ARRAY[words] LOOP
                SELECT array_agg(ranked.id), array_agg(ranked.source_id), array_agg(ranked.idx),
                       array_agg(ranked.score)
                INTO ids, chunk_sources, indexes, scores
                FROM (SELECT page_rows.id, page_rows.source_id, page_rows.idx,
                             round(ts_rank_cd(page_rows.search_vector, words)::numeric, 6) AS score
                      FROM (SELECT c.id::bigint AS id, c.source_id, c."index"::integer AS idx, c.search_vector
                            FROM organizations_sourcechunk AS c
                            WHERE organizations_search_keys(c.organization_id, c.search_vector) @@ organizations_search_query(organization, candidates) AND c.organization_id = organization
                              AND (sources IS NULL OR c.source_id = ANY(sources))
                            ORDER BY c.search_vector @@ twice DESC, c.source_id, c."index"
                            LIMIT page) AS page_rows
                      ORDER BY score DESC, page_rows.source_id, page_rows.idx) AS ranked;
                EXIT WHEN coalesce(cardinality(ids), 0) >= page;
            END LOOP;
            EXIT;
        END IF;
        SELECT array_agg(ranked.id), array_agg(ranked.source_id), array_agg(ranked.idx), array_agg(ranked.score)
        INTO ids, chunk_sources, indexes, scores
        FROM (SELECT c.id::bigint AS id, c.source_id, c."index"::integer AS idx,
                     round(ts_rank_cd(c.search_vector, words)::numeric, 6) AS score
            FROM organizations_sourcechunk AS c
            WHERE organizations_search_keys(c.organization_id, c.search_vector) @@ organizations_search_query(organization, candidates)
              AND c.search_vector @@ candidates AND c.organization_id = organization
              AND (sources IS NULL OR c.source_id = ANY(sources))
              ORDER BY score DESC, c.source_id, c."index"
              LIMIT page) AS ranked;
        EXIT WHEN coalesce(cardinality(ids), 0) >= page;
    END LOOP;
    RETURN QUERY SELECT * FROM unnest(ids, chunk_sources, indexes, scores);
END
$search$""",
)
POSTGRESQL_INDEX_UNINSTALL = (
    "DROP FUNCTION IF EXISTS organizations_search_chunks(uuid, text, integer, uuid[])",
    "DROP INDEX IF EXISTS organizations_sourcechunk_search_idx",
    "DROP FUNCTION IF EXISTS organizations_search_keys(uuid, tsvector)",
)
POSTGRESQL_INSTALL = POSTGRESQL_VECTOR_INSTALL + POSTGRESQL_INDEX_INSTALL
POSTGRESQL_UNINSTALL = POSTGRESQL_INDEX_UNINSTALL + POSTGRESQL_VECTOR_UNINSTALL
INSTALL = {"sqlite": SQLITE_INSTALL, "postgresql": POSTGRESQL_INSTALL}
UNINSTALL = {"sqlite": SQLITE_UNINSTALL, "postgresql": POSTGRESQL_UNINSTALL}
