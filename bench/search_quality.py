"""Top-3 hit rate of knowledge search on a judged set: 20 queries over the demo corpus.

    OPERATOR_BASE_URL=http://testserver .venv/bin/python bench/search_quality.py

Loads the demo data (`seed_demo`) into a throw-away test database, runs each
query in its organization as `search_knowledge` does by default (10 results)
and counts the queries with a relevant chunk among the first 3; then again
asking for 3 results only, where PostgreSQL's term-frequency sets
(knowledge/search/postgres.py) decide which matches are ranked at all. The relevant
chunks were marked by hand, reading every chunk of the demo corpus (136 at the
time of writing); they are named by (file, chunk index). Set DATABASE_URL to
judge the PostgreSQL ranking.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "operator_site.settings")

import django

django.setup()

from django.db import connection  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

from knowledge.demo import seed_demo_data  # noqa: E402
from knowledge.models import Source  # noqa: E402
from knowledge.selectors import search_chunks  # noqa: E402
from organizations.models import Organization  # noqa: E402

# (organization, query, relevant chunks as (file, chunk index))
JUDGED = (
    ("acme", "refund", {("customer-support-playbook.md", 6)}),
    ("acme", "flights", {("expense-and-travel-policy.md", 3)}),
    ("acme", "audit logs", {("data-retention-and-privacy-policy.md", 3), ("acme-cloud-product-guide.md", 6)}),
    ("acme", "declare an incident", {("incident-response-runbook.md", 2)}),
    ("acme", "rollback", {("incident-response-runbook.md", 5), ("release-and-deployment-process.md", 6)}),
    ("acme", "password", {("information-security-policy.md", 1)}),
    ("acme", "on-call", {("engineering-onboarding.md", 7), ("incident-response-runbook.md", 4)}),
    (
        "acme",
        "personal data",
        {("data-retention-and-privacy-policy.md", 0), ("data-retention-and-privacy-policy.md", 4)},
    ),
    ("acme", "deploy", {("release-and-deployment-process.md", 2), ("release-and-deployment-process.md", 3)}),
    ("acme", "canary", {("release-and-deployment-process.md", 3)}),
    ("acme", "incident commander", {("incident-response-runbook.md", 2)}),
    ("acme", "phishing", {("information-security-policy.md", 6)}),
    ("globex", "lockout", {("workplace-safety-manual.md", 2), ("workplace-safety-manual.md", 3)}),
    (
        "globex",
        "warranty claim",
        {("customer-service-and-warranty-playbook.md", 4), ("customer-service-and-warranty-playbook.md", 5)},
    ),
    ("globex", "spill", {("incident-and-emergency-response-plan.md", 4)}),
    ("globex", "first aid", {("incident-and-emergency-response-plan.md", 5)}),
    ("globex", "defect", {("plant-onboarding-handbook.md", 5), ("quality-management-procedures.md", 4)}),
    (
        "globex",
        "complaint",
        {("customer-service-and-warranty-playbook.md", 3), ("quality-management-procedures.md", 6)},
    ),
    ("globex", "receipts", {("travel-and-expense-policy.md", 6)}),
    ("globex", "protective equipment", {("workplace-safety-manual.md", 1)}),
)


def first_relevant(
    slug: str, query: str, relevant: set[tuple[str, int]], origins: dict[str, str], limit: int
) -> tuple[int | None, int]:
    """The rank of the first relevant chunk among `limit` results, or None; and how many came back."""
    results = search_chunks(Organization.objects.get(slug=slug), query=query, limit=limit)
    ranked = [(origins[hit.source_id], hit.chunk_index) for hit in results]
    return next((rank for rank, chunk in enumerate(ranked, start=1) if chunk in relevant), None), len(ranked)


def main() -> None:
    setup_test_environment()
    database = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        seed_demo_data()
        origins = {str(source.id): source.origin for source in Source.objects.all()}
        hits = {10: 0, 3: 0}
        print(f"database={connection.vendor}")
        print(f"{'':<7}{'query':<26}{'of 10 results':>15}{'of 3 results':>14}")
        for slug, query, relevant in JUDGED:
            cells = []
            for limit in hits:
                first, found = first_relevant(slug, query, relevant, origins, limit)
                hits[limit] += first is not None and first <= 3
                cells.append(f"{first or '-'} of {found}")
            print(f"{slug:<7}{query:<26}{cells[0]:>15}{cells[1]:>14}")
        for limit, count in hits.items():
            print(f"top-3 hit rate, {limit} results asked: {count}/{len(JUDGED)} = {count / len(JUDGED):.0%}")
    finally:
        connection.creation.destroy_test_db(database, verbosity=0)


if __name__ == "__main__":
    main()
