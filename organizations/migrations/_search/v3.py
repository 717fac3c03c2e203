"""Search schema version 3, frozen (SQLite's installed by migration 0005; PostgreSQL keeps version 2's).

SQLite: every word of the indexed text behind its organization's key, through
the function organizations_search_keyed_text, which the knowledge app registers
on every SQLite connection (knowledge/apps.py).
"""

from organizations.migrations._search.v1 import SQLITE_UNINSTALL
from organizations.migrations._search.v2 import POSTGRESQL_INSTALL, POSTGRESQL_UNINSTALL

SQLITE_INSTALL = (
    "CREATE VIEW organizations_sourcechunk_search AS SELECT id, "
    "organizations_search_keyed_text(organization_id, text) AS text FROM organizations_sourcechunk",
    "CREATE VIRTUAL TABLE organizations_sourcechunk_fts USING fts5(text, "
    "content='organizations_sourcechunk_search', content_rowid='id', tokenize='porter unicode61 "
    "remove_diacritics 2')",
    "CREATE TRIGGER organizations_sourcechunk_fts_insert AFTER INSERT ON organizations_sourcechunk BEGIN "
    "INSERT INTO organizations_sourcechunk_fts(rowid, text) VALUES (new.id, "
    "organizations_search_keyed_text(new.organization_id, new.text)); END",
    "CREATE TRIGGER organizations_sourcechunk_fts_delete AFTER DELETE ON organizations_sourcechunk BEGIN "
    "INSERT INTO organizations_sourcechunk_fts(organizations_sourcechunk_fts, rowid, text) VALUES "
    "('delete', old.id, organizations_search_keyed_text(old.organization_id, old.text)); END",
    "CREATE TRIGGER organizations_sourcechunk_fts_update AFTER UPDATE ON organizations_sourcechunk BEGIN "
    "INSERT INTO organizations_sourcechunk_fts(organizations_sourcechunk_fts, rowid, text) VALUES "
    "('delete', old.id, organizations_search_keyed_text(old.organization_id, old.text)); INSERT INTO "
    "organizations_sourcechunk_fts(rowid, text) VALUES (new.id, "
    "organizations_search_keyed_text(new.organization_id, new.text)); END",
    "INSERT INTO organizations_sourcechunk_fts(organizations_sourcechunk_fts) VALUES ('rebuild')",
)
INSTALL = {"sqlite": SQLITE_INSTALL, "postgresql": POSTGRESQL_INSTALL}
UNINSTALL = {"sqlite": SQLITE_UNINSTALL, "postgresql": POSTGRESQL_UNINSTALL}
