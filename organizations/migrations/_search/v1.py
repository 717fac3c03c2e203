"""Search schema version 1, frozen (installed by migration 0002, dropped by 0003).

SQLite: an FTS5 external-content table over the chunk text, kept in sync by
triggers. PostgreSQL: a generated tsvector column with a GIN index.
"""

SQLITE_INSTALL = (
    "CREATE VIRTUAL TABLE organizations_sourcechunk_fts USING fts5(text, "
    "content='organizations_sourcechunk', content_rowid='id', tokenize='porter unicode61 "
    "remove_diacritics 2')",
    "CREATE TRIGGER organizations_sourcechunk_fts_insert AFTER INSERT ON organizations_sourcechunk BEGIN "
    "INSERT INTO organizations_sourcechunk_fts(rowid, text) VALUES (new.id, new.text); END",
    "CREATE TRIGGER organizations_sourcechunk_fts_delete AFTER DELETE ON organizations_sourcechunk BEGIN "
    "INSERT INTO organizations_sourcechunk_fts(organizations_sourcechunk_fts, rowid, text) VALUES "
    "('delete', old.id, old.text); END",
    "CREATE TRIGGER organizations_sourcechunk_fts_update AFTER UPDATE ON organizations_sourcechunk BEGIN "
    "INSERT INTO organizations_sourcechunk_fts(organizations_sourcechunk_fts, rowid, text) VALUES "
    "('delete', old.id, old.text); INSERT INTO organizations_sourcechunk_fts(rowid, text) VALUES (new.id, "
    "new.text); END",
    "INSERT INTO organizations_sourcechunk_fts(organizations_sourcechunk_fts) VALUES ('rebuild')",
)
SQLITE_UNINSTALL = (
    "DROP TRIGGER IF EXISTS organizations_sourcechunk_fts_insert",
    "DROP TRIGGER IF EXISTS organizations_sourcechunk_fts_delete",
    "DROP TRIGGER IF EXISTS organizations_sourcechunk_fts_update",
    "DROP TABLE IF EXISTS organizations_sourcechunk_fts",
    "DROP VIEW IF EXISTS organizations_sourcechunk_search",
)
POSTGRESQL_INSTALL = (
    "ALTER TABLE organizations_sourcechunk ADD COLUMN search_vector tsvector GENERATED ALWAYS AS "
    "(to_tsvector('english', text)) STORED",
    "CREATE INDEX organizations_sourcechunk_search_idx ON organizations_sourcechunk USING GIN "
    "(search_vector)",
)
POSTGRESQL_UNINSTALL = (
    "DROP INDEX IF EXISTS organizations_sourcechunk_search_idx",
    "ALTER TABLE organizations_sourcechunk DROP COLUMN IF EXISTS search_vector",
)
INSTALL = {"sqlite": SQLITE_INSTALL, "postgresql": POSTGRESQL_INSTALL}
UNINSTALL = {"sqlite": SQLITE_UNINSTALL, "postgresql": POSTGRESQL_UNINSTALL}
