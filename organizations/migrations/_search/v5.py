"""Search schema version 5, frozen (SQLite's installed by migration 0007; PostgreSQL keeps version 4's).

SQLite: version 3's keyed index, over the chunk table itself as content, so
snippets are cut from the plain text; filled from the keyed text at install
(never `rebuild` it).
"""

from organizations.migrations._search.v1 import SQLITE_UNINSTALL
from organizations.migrations._search.v4 import POSTGRESQL_INSTALL, POSTGRESQL_UNINSTALL

SQLITE_INSTALL = (
    "CREATE VIRTUAL TABLE organizations_sourcechunk_fts USING fts5(text, "
    "content='organizations_sourcechunk', content_rowid='id', tokenize='porter unicode61 "
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
    "INSERT INTO organizations_sourcechunk_fts(rowid, text) SELECT id, "
    "organizations_search_keyed_text(organization_id, text) FROM organizations_sourcechunk",
)
INSTALL = {"sqlite": SQLITE_INSTALL, "postgresql": POSTGRESQL_INSTALL}
UNINSTALL = {"sqlite": SQLITE_UNINSTALL, "postgresql": POSTGRESQL_UNINSTALL}
