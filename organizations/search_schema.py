"""The full-text search structures of each database vendor, by schema version.

Migrations create and drop them (0002 installs version 1, 0003 replaces it with
version 2, 0005 replaces SQLite's with version 3, 0006 PostgreSQL's index with
version 4's); they live here so that a later migration that rebuilds the chunk
table on SQLite can drop and reinstall them around the rebuild. How they are
queried: organizations/search.py; why they look like this:
docs/development/architecture.md#search.

Version 2, PostgreSQL: the stored, generated column `search_vector` holds the
chunk's `to_tsvector('english', text)` plus, for each lexeme that occurs at
least n times for n in TERM_FREQUENCY_TIERS, a "tier" lexeme `'<lexeme> <n>'`
without positions (the parser never puts a space inside a lexeme, so no word
can match one). Rows are kept whole in the table (toast_tuple_target). The GIN
index holds the vector's lexemes keyed by the chunk's organization:
KEYS_FUNCTION puts the first ORGANIZATION_KEY hex digits of the organization's
id before each, and QUERY_FUNCTION does the same to a query's lexemes. A
word's index entry then lists only that organization's chunks, so a search
reads its own organization's entries and nothing else. Two organizations whose
ids begin alike would share entries, which costs time but never a result: the
query also filters on the organization.

Version 2, SQLite: an FTS5 external-content table with two columns, the chunk
text and a token naming the chunk's organization (`o<hex>0`), so that a match
walked only that organization's rows; but each word's list still spanned every
organization, and bm25() counted every row of the table holding a word.

Version 3, SQLite (PostgreSQL keeps version 2): as on PostgreSQL, every word is
keyed by its organization. The FTS5 table indexes the chunk text with
`organization_word_key` (15 decimal digits from the organization id) before
every word, so a word's list holds one organization's chunks and bm25()'s word
statistics are the organization's own. FTS5 takes no tokenizer from Python, so
the keyed text comes from KEYED_TEXT_FUNCTION, which organizations/apps.py
registers on every SQLite connection: the content view and the triggers call
it. A plain `sqlite3` shell without it cannot write chunks or rebuild the index.

Version 4, PostgreSQL (SQLite keeps version 3): the index also holds one key per
chunk naming the first hex digit of its source's id, so that a single word's
first chunks in (source id, chunk index) order are found among a sixteenth of its
matches (organizations/search_postgres.py). The column is version 2's.

Version 5, SQLite (PostgreSQL keeps version 4): the index is version 3's, but its
content table is the chunk table itself, so FTS5 reads the plain text where it
reads content at all: snippet() of the rows a search returns. Version 3 read them
through the content view, which keyed each text again, a Python call per snippet
(about 0.4 ms of a search on the demo data). A snippet is placed by word
positions, and a key never adds a word (it is glued to the word it precedes; see
`_NOT_UNICODE61_WORD`), so the plain text yields the same snippet without the
keys. The index is filled from the keyed text by the triggers and at install;
never `rebuild` it (that would index the plain text).
"""

# ruff: noqa: S608 - SQL here is built from module constants only; values are always parameters

import re
from typing import Any

from django.db import migrations
from django.db.backends.base.base import BaseDatabaseWrapper

from organizations import search_function_sql

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
# word of its own, so they are not letters here; tests/organizations/test_search_index.py
# checks that unicode61 keeps every other letter and digit in a word.
_NOT_UNICODE61_WORD = "\u19b0-\u19c0\u19c8\u19c9\u1cf2\u1cf3"
# Words as FTS5's unicode61 tokenizer cuts them: a letter or digit after anything that is
# neither (nor a combining mark), then letters, digits and combining marks.
_LETTER, _MARK = rf"[^\W_{_NOT_UNICODE61_WORD}]", r"[\u0300-\u036f]"
# Where each begins: a fixed replacement at these empty matches runs in C, without a Python
# call per word.
_WORD_START = re.compile(rf"(?<!{_LETTER}|{_MARK})(?={_LETTER})")
# The words of a query, cut as the index cuts the text (organizations/search.py).
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
_SQLITE_V1_INSTALL = (
    _sqlite_fts_table(columns="text", content="organizations_sourcechunk"),
    f"CREATE TRIGGER {_SQLITE_TRIGGER_PREFIX}_insert AFTER INSERT ON organizations_sourcechunk BEGIN "
    f"INSERT INTO {FTS_TABLE}(rowid, text) VALUES (new.id, new.text); END",
    f"CREATE TRIGGER {_SQLITE_TRIGGER_PREFIX}_delete AFTER DELETE ON organizations_sourcechunk BEGIN "
    f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, text) VALUES ('delete', old.id, old.text); END",
    f"CREATE TRIGGER {_SQLITE_TRIGGER_PREFIX}_update AFTER UPDATE ON organizations_sourcechunk BEGIN "
    f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, text) VALUES ('delete', old.id, old.text); "
    f"INSERT INTO {FTS_TABLE}(rowid, text) VALUES (new.id, new.text); END",
    f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')",
)
_SQLITE_TOKEN = "'o' || {row}.organization_id || '0'"
_SQLITE_V2_INSTALL = (
    f"CREATE VIEW {FTS_CONTENT_VIEW} AS SELECT id, text, {_SQLITE_TOKEN.format(row='c')} AS organization "
    "FROM organizations_sourcechunk AS c",
    _sqlite_fts_table(columns="text, organization", content=FTS_CONTENT_VIEW),
    f"CREATE TRIGGER {_SQLITE_TRIGGER_PREFIX}_insert AFTER INSERT ON organizations_sourcechunk BEGIN "
    f"INSERT INTO {FTS_TABLE}(rowid, text, organization) "
    f"VALUES (new.id, new.text, {_SQLITE_TOKEN.format(row='new')}); END",
    f"CREATE TRIGGER {_SQLITE_TRIGGER_PREFIX}_delete AFTER DELETE ON organizations_sourcechunk BEGIN "
    f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, text, organization) "
    f"VALUES ('delete', old.id, old.text, {_SQLITE_TOKEN.format(row='old')}); END",
    f"CREATE TRIGGER {_SQLITE_TRIGGER_PREFIX}_update AFTER UPDATE ON organizations_sourcechunk BEGIN "
    f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, text, organization) "
    f"VALUES ('delete', old.id, old.text, {_SQLITE_TOKEN.format(row='old')}); "
    f"INSERT INTO {FTS_TABLE}(rowid, text, organization) "
    f"VALUES (new.id, new.text, {_SQLITE_TOKEN.format(row='new')}); END",
    f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')",
)
# Version 3 on, SQLite: every word of the indexed text carries its organization's key.
_SQLITE_KEYED_TRIGGERS = (
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
)
_SQLITE_V3_INSTALL = (
    f"CREATE VIEW {FTS_CONTENT_VIEW} AS SELECT id, {KEYED_TEXT_FUNCTION}(organization_id, text) AS text "
    "FROM organizations_sourcechunk",
    _sqlite_fts_table(columns="text", content=FTS_CONTENT_VIEW),
    *_SQLITE_KEYED_TRIGGERS,
    f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')",
)
# Version 5, SQLite: the same index and triggers, over the chunk table's own text.
_SQLITE_V5_INSTALL = (
    _sqlite_fts_table(columns="text", content="organizations_sourcechunk"),
    *_SQLITE_KEYED_TRIGGERS,
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

_POSTGRES_V1_INSTALL = (
    "ALTER TABLE organizations_sourcechunk ADD COLUMN search_vector tsvector "
    "GENERATED ALWAYS AS (to_tsvector('english', text)) STORED",
    f"CREATE INDEX {SEARCH_INDEX} ON organizations_sourcechunk USING GIN (search_vector)",
)
_POSTGRES_V1_UNINSTALL = (
    f"DROP INDEX IF EXISTS {SEARCH_INDEX}",
    "ALTER TABLE organizations_sourcechunk DROP COLUMN IF EXISTS search_vector",
)
_TIERS_ARRAY = "ARRAY[" + ", ".join(str(tier) for tier in sorted(TERM_FREQUENCY_TIERS)) + "]"
_TIERS_DESCENDING = "ARRAY[" + ", ".join(str(tier) for tier in sorted(TERM_FREQUENCY_TIERS, reverse=True)) + "]"
# Version 4's index also holds, per chunk, the key ' <d>' (behind the organization's key), d the
# first hex digit of the source's id: no lexeme begins with a space, so no word can match it.
# The sources whose ids begin with 0 come first in (source id, chunk index) order, so a word's
# first chunks in that order are usually among that sixteenth of its matches.
_FIRST_SOURCES = "''' 0'''::tsquery"
# KEYS_FUNCTION's parameters by version: (name, type, the chunk column the index passes).
_KEYS_PARAMETERS = {
    2: (("organization", "uuid", "organization_id"), ("vector", "tsvector", "search_vector")),
    4: (
        ("organization", "uuid", "organization_id"),
        ("source", "uuid", "source_id"),
        ("vector", "tsvector", "search_vector"),
    ),
}
_KEYS_CALL = {
    version: f"{KEYS_FUNCTION}({', '.join('c.' + column for _, _, column in parameters)})"
    for version, parameters in _KEYS_PARAMETERS.items()
}
# Where the single-word page is looked for, in turn (search_function_sql.py): all the word's matches (version
# 2); first only those twice in a chunk or in the first sixteenth of the sources (version 4).
_PAGE_STEPS = {2: "ARRAY[words]", 4: f"ARRAY[words && (twice || {_FIRST_SOURCES}), words]"}


def _search_function_sql(version: int) -> str:
    keys = _KEYS_CALL[version]
    rows = search_function_sql.SET_ROWS.format(keys=keys, query=QUERY_FUNCTION)
    return search_function_sql.FUNCTION.format(
        search=SEARCH_FUNCTION,
        tiers=_TIERS_DESCENDING,
        page_steps=_PAGE_STEPS[version],
        keys=keys,
        query=QUERY_FUNCTION,
        rows=rows,
    )


_ORGANIZATION_KEY = f"left(replace(organization::text, '-', ''), {ORGANIZATION_KEY})"
# The column, the same in versions 2 to 4.
_POSTGRES_VECTOR_INSTALL = (
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
)
_POSTGRES_VECTOR_UNINSTALL = (
    "ALTER TABLE organizations_sourcechunk DROP COLUMN IF EXISTS search_vector",
    f"DROP FUNCTION IF EXISTS {QUERY_FUNCTION}(uuid, tsquery)",
    f"DROP FUNCTION IF EXISTS {VECTOR_FUNCTION}(text)",
    "ALTER TABLE organizations_sourcechunk RESET (toast_tuple_target)",
)
# The index's keys: every lexeme of the vector behind the organization's key, without
# positions, and the key alone, which a query of nothing but -words searches; version 4
# adds the key of the source's first hex digit.
_KEYS_SOURCE = {2: "", 4: " || (key || ' ' || left(source::text, 1))"}


def _postgres_index_install(version: int) -> tuple[str, ...]:
    parameters = _KEYS_PARAMETERS[version]
    return (
        f"CREATE FUNCTION {KEYS_FUNCTION}({', '.join(f'{name} {kind}' for name, kind, _ in parameters)}) "
        "RETURNS tsvector "
        "LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$ "
        "SELECT array_to_tsvector(ARRAY(SELECT key || lexeme FROM unnest(tsvector_to_array(vector)) AS lexeme) "
        f"|| key{_KEYS_SOURCE[version]}) FROM {_ORGANIZATION_KEY} AS key $$",
        f"CREATE INDEX {SEARCH_INDEX} ON organizations_sourcechunk "
        f"USING GIN ({KEYS_FUNCTION}({', '.join(column for _, _, column in parameters)}))",
        _search_function_sql(version),
    )


def _postgres_index_uninstall(version: int) -> tuple[str, ...]:
    return (
        f"DROP FUNCTION IF EXISTS {SEARCH_FUNCTION}(uuid, text, integer, uuid[])",
        f"DROP INDEX IF EXISTS {SEARCH_INDEX}",
        f"DROP FUNCTION IF EXISTS {KEYS_FUNCTION}({', '.join(kind for _, kind, _ in _KEYS_PARAMETERS[version])})",
    )


_INSTALL = {
    1: {"sqlite": _SQLITE_V1_INSTALL, "postgresql": _POSTGRES_V1_INSTALL},
    2: {"sqlite": _SQLITE_V2_INSTALL, "postgresql": _POSTGRES_VECTOR_INSTALL + _postgres_index_install(2)},
    3: {"sqlite": _SQLITE_V3_INSTALL, "postgresql": _POSTGRES_VECTOR_INSTALL + _postgres_index_install(2)},
    4: {"sqlite": _SQLITE_V3_INSTALL, "postgresql": _POSTGRES_VECTOR_INSTALL + _postgres_index_install(4)},
    5: {"sqlite": _SQLITE_V5_INSTALL, "postgresql": _POSTGRES_VECTOR_INSTALL + _postgres_index_install(4)},
}
_UNINSTALL = {
    1: {"sqlite": _SQLITE_UNINSTALL, "postgresql": _POSTGRES_V1_UNINSTALL},
    2: {"sqlite": _SQLITE_UNINSTALL, "postgresql": _postgres_index_uninstall(2) + _POSTGRES_VECTOR_UNINSTALL},
    3: {"sqlite": _SQLITE_UNINSTALL, "postgresql": _postgres_index_uninstall(2) + _POSTGRES_VECTOR_UNINSTALL},
    4: {"sqlite": _SQLITE_UNINSTALL, "postgresql": _postgres_index_uninstall(4) + _POSTGRES_VECTOR_UNINSTALL},
    5: {"sqlite": _SQLITE_UNINSTALL, "postgresql": _postgres_index_uninstall(4) + _POSTGRES_VECTOR_UNINSTALL},
}
# Versions whose PostgreSQL structures differ in the index only: the column (and every row) stays.
_INDEX_CHANGES = {
    (3, 4): _postgres_index_uninstall(2) + _postgres_index_install(4),
    (4, 3): _postgres_index_uninstall(4) + _postgres_index_install(2),
}


def install_search_schema(db: BaseDatabaseWrapper, *, version: int = CURRENT_VERSION) -> None:
    """Create the vendor's search structures of `version` and index the existing chunks."""
    with db.cursor() as cursor:
        for statement in _INSTALL[version].get(db.vendor, ()):
            cursor.execute(statement)


def uninstall_search_schema(db: BaseDatabaseWrapper, *, version: int = CURRENT_VERSION) -> None:
    """Drop the vendor's search structures of `version`."""
    with db.cursor() as cursor:
        for statement in _UNINSTALL[version].get(db.vendor, ()):
            cursor.execute(statement)


def change_search_schema(db: BaseDatabaseWrapper, *, old: int, new: int) -> None:
    """Replace the vendor's search structures of version `old` by those of `new`.

    Nothing happens where the two versions are the same for the vendor; where they
    differ in PostgreSQL's index only, the column and its rows are kept.
    """
    if _INSTALL[old].get(db.vendor) == _INSTALL[new].get(db.vendor):
        return
    if db.vendor == "postgresql" and (old, new) in _INDEX_CHANGES:
        with db.cursor() as cursor:
            for statement in _INDEX_CHANGES[(old, new)]:
                cursor.execute(statement)
        return
    uninstall_search_schema(db, version=old)
    install_search_schema(db, version=new)


def search_schema_migration(*, old: int, new: int) -> migrations.RunPython:
    """The migration operation that replaces version `old` by `new`, and `new` by `old` when reversed."""

    def forward(apps: Any, schema_editor: Any) -> None:
        change_search_schema(schema_editor.connection, old=old, new=new)

    def backward(apps: Any, schema_editor: Any) -> None:
        change_search_schema(schema_editor.connection, old=new, new=old)

    return migrations.RunPython(forward, backward, elidable=False)


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
