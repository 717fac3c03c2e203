"""The text of PostgreSQL's search function, filled in by knowledge/search/schema.py.

Templates for `str.format`: the names of the functions and the parts that differ
between schema versions come from there. knowledge/search/postgres.py
explains the sets the function ranks; docs/development/architecture.md#search,
why it looks like this.
"""

# The rows of one set: those the index finds for `candidates`, checked on the row (phrases,
# -words), in the organization and the sources asked for.
SET_ROWS = """
            FROM organizations_sourcechunk AS c
            WHERE {keys} @@ {query}(organization, candidates)
              AND c.search_vector @@ candidates AND c.organization_id = organization
              AND (sources IS NULL OR c.source_id = ANY(sources))"""
# The search itself (knowledge/search/postgres.py explains the sets). PL/pgSQL, so that the
# plans of its statements are made once per connection and reused (generic plans: the values
# differ, the shape never does). No JIT and no parallel workers: the planner cannot know how
# many chunks a computed query matches and estimates thousands per set, enough to compile the
# plan (100 ms and more) or to start workers for each set (10 ms and more) for a search that
# takes a few. ROWS: at most a page, so the caller joins the rows by primary key.
FUNCTION = """
CREATE FUNCTION {search}(organization uuid, query text, page integer, sources uuid[])
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
        FOREACH tier IN ARRAY {tiers} LOOP
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
            FOREACH candidates IN ARRAY {page_steps} LOOP
                SELECT array_agg(ranked.id), array_agg(ranked.source_id), array_agg(ranked.idx),
                       array_agg(ranked.score)
                INTO ids, chunk_sources, indexes, scores
                FROM (SELECT page_rows.id, page_rows.source_id, page_rows.idx,
                             round(ts_rank_cd(page_rows.search_vector, words)::numeric, 6) AS score
                      FROM (SELECT c.id::bigint AS id, c.source_id, c."index"::integer AS idx, c.search_vector
                            FROM organizations_sourcechunk AS c
                            WHERE {keys} @@ {query}(organization, candidates) AND c.organization_id = organization
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
                     round(ts_rank_cd(c.search_vector, words)::numeric, 6) AS score{rows}
              ORDER BY score DESC, c.source_id, c."index"
              LIMIT page) AS ranked;
        EXIT WHEN coalesce(cardinality(ids), 0) >= page;
    END LOOP;
    RETURN QUERY SELECT * FROM unnest(ids, chunk_sources, indexes, scores);
END
$search$"""
