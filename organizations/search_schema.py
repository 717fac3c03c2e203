"""The full-text search structures of each database vendor, by schema version.

Migrations create and drop them (0002 installs version 1, 0003 replaces it with
version 2); they live here so that a later migration that rebuilds the chunk
table on SQLite can drop and reinstall them around the rebuild. How they are
queried: organizations/search.py; why they look like this:
docs/development/architecture.md#search.

Version 2, PostgreSQL: the stored, generated column `search_vector` holds the
chunk's `to_tsvector('english', text)` plus, for each lexeme that occurs at
least n times for n in TERM_FREQUENCY_TIERS, a "tier" lexeme `'<lexeme> <n>'`
without positions (the parser never puts a space inside a lexeme, so no word
can match one). Rows are kept whole in the table (toast_tuple_target). A GIN
index on (organization_id, search_vector), through the btree_gin extension,
answers "this organization and these words" from the index alone.

Version 2, SQLite: an FTS5 external-content table with two columns, the chunk
text and a token naming the chunk's organization (`o<hex>0`: a trailing digit,
so the porter stemmer leaves it whole and two organizations never share it).
Its content is a view over the chunk table that computes the token, and
triggers keep it in sync with the chunk rows.
"""

# ruff: noqa: S608 - SQL here is built from module constants only; values are always parameters

from django.core.management.base import CommandError
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.utils import DatabaseError

CURRENT_VERSION = 2
FTS_TABLE = "organizations_sourcechunk_fts"
FTS_CONTENT_VIEW = "organizations_sourcechunk_search"
SEARCH_INDEX = "organizations_sourcechunk_search_idx"
VECTOR_FUNCTION = "organizations_search_vector"
# A lexeme met at least this many times in a chunk also gets the tier lexeme '<lexeme> <n>'.
TERM_FREQUENCY_TIERS = (16, 12, 8, 6, 4, 3, 2)
POSTGRES_EXTENSION = "btree_gin"

MISSING_EXTENSION = (
    "Knowledge search needs the PostgreSQL extension btree_gin, and it could not be created: {error}. "
    "It ships with PostgreSQL itself (the Debian package postgresql-15 contains it). Either let the "
    "migrating role create it (it needs the CREATE privilege on the database) or have a superuser run "
    "CREATE EXTENSION btree_gin; in this database, then run migrate again (docs/operations.md#postgresql)."
)


class SearchExtensionMissing(CommandError):
    """The PostgreSQL extension the search index needs is missing and cannot be created.

    A CommandError, so that `manage.py migrate` prints the explanation alone
    and exits 1, where any other error would bury it under a traceback.
    """


def organization_token(organization_hex: str) -> str:
    """The FTS5 token of an organization (SQLite): the same expression as FTS_CONTENT_VIEW's."""
    return f"o{organization_hex}0"


_SQLITE_TRIGGER_PREFIX = "organizations_sourcechunk_fts"
_SQLITE_V1_INSTALL = (
    f"CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5("
    "text, content='organizations_sourcechunk', content_rowid='id', "
    "tokenize='porter unicode61 remove_diacritics 2')",
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
    f"CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5("
    f"text, organization, content='{FTS_CONTENT_VIEW}', content_rowid='id', "
    "tokenize='porter unicode61 remove_diacritics 2')",
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
_POSTGRES_V2_INSTALL = (
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
    "ALTER TABLE organizations_sourcechunk ADD COLUMN search_vector tsvector "
    f"GENERATED ALWAYS AS ({VECTOR_FUNCTION}(text)) STORED",
    f"CREATE INDEX {SEARCH_INDEX} ON organizations_sourcechunk USING GIN (organization_id, search_vector)",
)
_POSTGRES_V2_UNINSTALL = (
    f"DROP INDEX IF EXISTS {SEARCH_INDEX}",
    "ALTER TABLE organizations_sourcechunk DROP COLUMN IF EXISTS search_vector",
    f"DROP FUNCTION IF EXISTS {VECTOR_FUNCTION}(text)",
    "ALTER TABLE organizations_sourcechunk RESET (toast_tuple_target)",
)

_INSTALL = {
    1: {"sqlite": _SQLITE_V1_INSTALL, "postgresql": _POSTGRES_V1_INSTALL},
    2: {"sqlite": _SQLITE_V2_INSTALL, "postgresql": _POSTGRES_V2_INSTALL},
}
_UNINSTALL = {
    1: {"sqlite": _SQLITE_UNINSTALL, "postgresql": _POSTGRES_V1_UNINSTALL},
    2: {"sqlite": _SQLITE_UNINSTALL, "postgresql": _POSTGRES_V2_UNINSTALL},
}


def install_search_schema(db: BaseDatabaseWrapper, *, version: int = CURRENT_VERSION) -> None:
    """Create the vendor's search structures of `version` and index the existing chunks.

    Raises SearchExtensionMissing (PostgreSQL, version 2) when btree_gin is not
    installed and the connected role cannot create it.
    """
    if db.vendor == "postgresql" and version >= 2:
        require_search_extension(db)
    with db.cursor() as cursor:
        for statement in _INSTALL[version].get(db.vendor, ()):
            cursor.execute(statement)


def uninstall_search_schema(db: BaseDatabaseWrapper, *, version: int = CURRENT_VERSION) -> None:
    """Drop the vendor's search structures of `version` (the btree_gin extension stays)."""
    with db.cursor() as cursor:
        for statement in _UNINSTALL[version].get(db.vendor, ()):
            cursor.execute(statement)


def require_search_extension(db: BaseDatabaseWrapper) -> None:
    """Create btree_gin unless it exists; raise SearchExtensionMissing, naming the fix, when that fails."""
    with db.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = %s", [POSTGRES_EXTENSION])
        if cursor.fetchone():
            return
        # A savepoint, so that a refusal leaves the migration's transaction usable
        # for the clear error below instead of "current transaction is aborted".
        cursor.execute("SAVEPOINT organizations_search_extension")
        try:
            cursor.execute(f"CREATE EXTENSION {POSTGRES_EXTENSION}")
        except DatabaseError as error:
            cursor.execute("ROLLBACK TO SAVEPOINT organizations_search_extension")
            detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise SearchExtensionMissing(MISSING_EXTENSION.format(error=detail)) from error
        cursor.execute("RELEASE SAVEPOINT organizations_search_extension")
