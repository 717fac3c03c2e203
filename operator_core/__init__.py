"""The ground floor every app stands on: errors, settings accessor, limits, client address.

It imports no app of this project (an import-linter contract in pyproject.toml
holds it to that), so imports only ever point down into it.
"""
