"""Full-text search over the chunks of one organization's processed sources.

query.py is the entry point (`search_chunk_rows`) and the SQLite side; postgres.py
the PostgreSQL side; schema.py the current version of the search structures the
migrations build; function_sql.py the text of PostgreSQL's search function. Why
they look like this: docs/development/architecture.md#search.
"""
