"""The full-text search structures of each database vendor: the current schema version's SQL.

Migrations create them, each from its own frozen copy of its version's SQL
(organizations/migrations/_search/); this module holds the current version,
which tests/knowledge/test_frozen_search_sql.py checks against the newest
frozen one. A change here is a new version: a new frozen module and a
migration that replaces the previous version's structures. The database
objects keep the `organizations_` names they were created with.

PostgreSQL (version 4): a generated `search_vector` with tier lexemes
(TERM_FREQUENCY_TIERS), and a GIN index of its lexemes keyed by organization
(KEYS_FUNCTION, QUERY_FUNCTION). SQLite (version 5): an FTS5 table over the
chunk table's plain text, indexed with the organization's key before every
word (KEYED_TEXT_FUNCTION, which knowledge/apps.py registers on every
connection; the triggers call it). Never `rebuild` that table: it would index
the plain text. Why they look like this: docs/development/architecture.md#search.
"""

# ruff: noqa: S608 - SQL here is built from module constants only; values are always parameters

import re

from django.db.backends.base.base import BaseDatabaseWrapper

from knowledge.search import function_sql

CURRENT_VERSION = 5
FTS_TABLE = "organizations_sourcechunk_fts"
FTS_CONTENT_VIEW = "organizations_sourcechunk_search"
SEARCH_INDEX = "organizations_sourcechunk_search_idx"
VECTOR_FUNCTION = "organizations_search_vector"
KEYS_FUNCTION = "organizations_search_keys"
QUERY_FUNCTION = "organizations_search_query"
SEARCH_FUNCTION = "organizations_search_chunks"
KEYED_TEXT_FUNCTION = "organizations_search_keyed_text"  # SQLite: registered on every connection
# SQLite: how FTS5 cuts the indexed text into words, in every version.
FTS_TOKENIZE = "porter unicode61 remove_diacritics 2"
# Hex digits of the organization's id that key its index entries: 48 bits, so two
# organizations share them only by a rare chance, and then share entries, not results.
ORGANIZATION_KEY = 12
# A lexeme met at least this many times in a chunk also gets the tier lexeme '<lexeme> <n>'.
TERM_FREQUENCY_TIERS = (16, 12, 8, 6, 4, 3, 2)


def organization_word_key(organization_hex: str) -> str:
    """SQLite: what every word of an organization's text is keyed with in the FTS5 index.

    Decimal digits: FTS5's unicode61 tokenizer keeps them in the word, and the porter
    stemmer reads them as consonants before the word, which changes no stem.
    """
    return f"{int(organization_hex[:ORGANIZATION_KEY], 16):015d}"


# Letters to Python that FTS5's unicode61 tokenizer (Unicode 6.1's tables) takes for
# separators: New Tai Lue vowel signs and two Vedic signs. A key before one would be a
# word of its own, so they are not letters here; tests/knowledge/test_search_index.py
# checks that unicode61 keeps every other letter and digit in a word.
_NOT_UNICODE61_WORD = "\u19b0-\u19c0\u19c8\u19c9\u1cf2\u1cf3"
# Words as FTS5's unicode61 tokenizer cuts them: a letter or digit after anything that is
# neither (nor a combining mark), then letters, digits and combining marks.
_LETTER, _MARK = rf"[^\W_{_NOT_UNICODE61_WORD}]", r"[\u0300-\u036f]"
# Where each begins: a fixed replacement at these empty matches runs in C, without a Python
# call per word.
_WORD_START = re.compile(rf"(?<!{_LETTER}|{_MARK})(?={_LETTER})")
# The words of a query, cut as the index cuts the text (knowledge/search/query.py).
WORD = re.compile(rf"(?<!{_LETTER}|{_MARK}){_LETTER}(?:{_LETTER}|{_MARK})*")


def keyed_text(organization_hex: str | None, text: str | None) -> str | None:
    """SQLite's KEYED_TEXT_FUNCTION: the text with its organization's key before every word."""
    if organization_hex is None or text is None:
        return None
    key = organization_word_key(organization_hex)
    return _WORD_START.sub(key, text)


def _sqlite_fts_table(*, columns: str, content: str) -> str:
    """SQLite's FTS5 table over `content`, whose rows it finds by the chunk id."""
    return (
        f"CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5("
        f"{columns}, content='{content}', content_rowid='id', tokenize='{FTS_TOKENIZE}')"
    )


_SQLITE_TRIGGER_PREFIX = "organizations_sourcechunk_fts"
# Every word of the indexed text carries its organization's key; the index's content is
# the chunk table itself, so FTS5 reads snippets from the plain text.
_SQLITE_INSTALL = (
    _sqlite_fts_table(columns="text", content="organizations_sourcechunk"),
    f"CREATE TRIGGER {_SQLITE_TRIGGER_PREFIX}_insert AFTER INSERT ON organizations_sourcechunk BEGIN "
    f"INSERT INTO {FTS_TABLE}(rowid, text) VALUES (new.id, {KEYED_TEXT_FUNCTION}(new.organization_id, new.text)); "
    "END",
    f"CREATE TRIGGER {_SQLITE_TRIGGER_PREFIX}_delete AFTER DELETE ON organizations_sourcechunk BEGIN "
    f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, text) "
    f"VALUES ('delete', old.id, {KEYED_TEXT_FUNCTION}(old.organization_id, old.text)); END",
    f"CREATE TRIGGER {_SQLITE_TRIGGER_PREFIX}_update AFTER UPDATE ON organizations_sourcechunk BEGIN "
    f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, text) "
    f"VALUES ('delete', old.id, {KEYED_TEXT_FUNCTION}(old.organization_id, old.text)); "
    f"INSERT INTO {FTS_TABLE}(rowid, text) VALUES (new.id, {KEYED_TEXT_FUNCTION}(new.organization_id, new.text)); "
    "END",
    # Filled from the keyed text; never `rebuild` it (that would index the plain text).
    f"INSERT INTO {FTS_TABLE}(rowid, text) "
    f"SELECT id, {KEYED_TEXT_FUNCTION}(organization_id, text) FROM organizations_sourcechunk",
)
_SQLITE_UNINSTALL = (
    f"DROP TRIGGER IF EXISTS {_SQLITE_TRIGGER_PREFIX}_insert",
    f"DROP TRIGGER IF EXISTS {_SQLITE_TRIGGER_PREFIX}_delete",
    f"DROP TRIGGER IF EXISTS {_SQLITE_TRIGGER_PREFIX}_update",
    f"DROP TABLE IF EXISTS {FTS_TABLE}",
    f"DROP VIEW IF EXISTS {FTS_CONTENT_VIEW}",
)

_TIERS_ARRAY = "ARRAY[" + ", ".join(str(tier) for tier in sorted(TERM_FREQUENCY_TIERS)) + "]"
_TIERS_DESCENDING = "ARRAY[" + ", ".join(str(tier) for tier in sorted(TERM_FREQUENCY_TIERS, reverse=True)) + "]"
# The index also holds, per chunk, the key ' <d>' (behind the organization's key), d the first
# hex digit of the source's id: no lexeme begins with a space, so no word can match it. The
# sources whose ids begin with 0 come first in (source id, chunk index) order, so a word's
# first chunks in that order are usually among that sixteenth of its matches.
_FIRST_SOURCES = "''' 0'''::tsquery"
_KEYS_CALL = f"{KEYS_FUNCTION}(c.organization_id, c.source_id, c.search_vector)"
# Where the single-word page is looked for, in turn (function_sql.py): first only the
# chunks that hold the word twice or are in the first sixteenth of the sources, then all.
_PAGE_STEPS = f"ARRAY[words && (twice || {_FIRST_SOURCES}), words]"
_SEARCH_FUNCTION_SQL = function_sql.FUNCTION.format(
    search=SEARCH_FUNCTION,
    tiers=_TIERS_DESCENDING,
    page_steps=_PAGE_STEPS,
    keys=_KEYS_CALL,
    query=QUERY_FUNCTION,
    rows=function_sql.SET_ROWS.format(keys=_KEYS_CALL, query=QUERY_FUNCTION),
)
_ORGANIZATION_KEY = f"left(replace(organization::text, '-', ''), {ORGANIZATION_KEY})"
_POSTGRES_INSTALL = (
    # Rows up to a page stay whole: ranking reads each candidate's vector, and a vector
    # moved out to the TOAST table costs an index lookup more per row (PostgreSQL docs,
    # "TOAST"). Set before the column is added, which rewrites every row.
    "ALTER TABLE organizations_sourcechunk SET (toast_tuple_target = 8160)",
    # IMMUTABLE holds as long as the 'english' configuration is not altered.
    f"CREATE FUNCTION {VECTOR_FUNCTION}(body text) RETURNS tsvector "
    "LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$ "
    "SELECT words || array_to_tsvector(ARRAY("
    "SELECT entry.lexeme || ' ' || tier "
    f"FROM unnest(words) AS entry, unnest({_TIERS_ARRAY}) AS tier "
    "WHERE cardinality(entry.positions) >= tier)) "
    "FROM to_tsvector('english'::regconfig, body) AS words $$",
    # What to look up in the index for a query: its indexable part (querytree drops -words),
    # phrases as plain AND (the keys have no positions; the vector checks them after), each
    # lexeme behind the key. In a tsquery's text every lexeme is quoted, a quote inside one
    # doubled; the key is hex digits. No lexeme (only stop words): NULL, which matches nothing.
    f"CREATE FUNCTION {QUERY_FUNCTION}(organization uuid, query tsquery) RETURNS tsquery "
    "LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$ "
    "SELECT CASE WHEN numnode(query) = 0 THEN NULL "
    "WHEN indexable = 'T' THEN quote_literal(key)::tsquery "
    r"ELSE regexp_replace(regexp_replace(indexable, '<(?:-|[0-9]+)>', '&', 'g'), "
    r"'''((?:[^'']|'''')+)''', '''' || key || '\1''', 'g')::tsquery END "
    f"FROM {_ORGANIZATION_KEY} AS key, querytree(query) AS indexable $$",
    "ALTER TABLE organizations_sourcechunk ADD COLUMN search_vector tsvector "
    f"GENERATED ALWAYS AS ({VECTOR_FUNCTION}(text)) STORED",
    # The index's keys: every lexeme of the vector behind the organization's key, without
    # positions, the key alone (which a query of nothing but -words searches), and the key
    # of the source's first hex digit.
    f"CREATE FUNCTION {KEYS_FUNCTION}(organization uuid, source uuid, vector tsvector) "
    "RETURNS tsvector "
    "LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$ "
    "SELECT array_to_tsvector(ARRAY(SELECT key || lexeme FROM unnest(tsvector_to_array(vector)) AS lexeme) "
    f"|| key || (key || ' ' || left(source::text, 1))) FROM {_ORGANIZATION_KEY} AS key $$",
    f"CREATE INDEX {SEARCH_INDEX} ON organizations_sourcechunk "
    f"USING GIN ({KEYS_FUNCTION}(organization_id, source_id, search_vector))",
    _SEARCH_FUNCTION_SQL,
)
_POSTGRES_UNINSTALL = (
    f"DROP FUNCTION IF EXISTS {SEARCH_FUNCTION}(uuid, text, integer, uuid[])",
    f"DROP INDEX IF EXISTS {SEARCH_INDEX}",
    f"DROP FUNCTION IF EXISTS {KEYS_FUNCTION}(uuid, uuid, tsvector)",
    "ALTER TABLE organizations_sourcechunk DROP COLUMN IF EXISTS search_vector",
    f"DROP FUNCTION IF EXISTS {QUERY_FUNCTION}(uuid, tsquery)",
    f"DROP FUNCTION IF EXISTS {VECTOR_FUNCTION}(text)",
    "ALTER TABLE organizations_sourcechunk RESET (toast_tuple_target)",
)

# The current version's structures by vendor, as the latest migration leaves them
# (tests/knowledge/test_frozen_search_sql.py checks them against the frozen copy).
INSTALL = {"sqlite": _SQLITE_INSTALL, "postgresql": _POSTGRES_INSTALL}
UNINSTALL = {"sqlite": _SQLITE_UNINSTALL, "postgresql": _POSTGRES_UNINSTALL}


def fold_pending_entries(db: BaseDatabaseWrapper) -> None:
    """PostgreSQL: move the search index's pending entries into the index proper, once chunks are written.

    GIN queues new entries in a pending list (`fastupdate`) that every search reads
    whole, until VACUUM folds it in or it reaches 4 MB; autovacuum waits for 1,000
    inserted rows, so a small service's searches would read it for good (twice the
    database's work per search on the demo data). Folding it after each write costs
    imports nothing measurable, where `fastupdate = off` made them 70% slower. Only
    the index's owner may fold (the role that ran the migrations); for another role
    the statement does nothing, and autovacuum folds the entries later.
    """
    if db.vendor != "postgresql":
        return
    with db.cursor() as cursor:
        cursor.execute(
            "SELECT gin_clean_pending_list(c.oid) FROM pg_class AS c "
            "WHERE c.oid = %s::regclass AND pg_has_role(c.relowner, 'USAGE')",
            [SEARCH_INDEX],
        )
