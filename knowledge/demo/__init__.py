"""The demo data behind `manage.py seed_demo` (docs/development/decisions.md#operating).

Idempotent: people are keyed by email, organizations by slug (both seeded by
organizations/demo/), sources by (organization, kind, origin), modules by
(organization, title); anything that exists is left alone, except that a demo
file whose text changed is reprocessed and a demo membership with another role
is set back. The sources' prose lives in `content/<slug>/*.md` and goes through
the same import service as `import_sources`. Acme is a software company, Globex
a manufacturer, so a leak of one organization's text into the other's results
is easy to see.
"""

from knowledge.demo.seed import SeedSummary, seed_demo_data

__all__ = ["SeedSummary", "seed_demo_data"]
