"""The demo people and organizations of `manage.py seed_demo` (docs/development/decisions.md#operating).

Idempotent: people are keyed by email, organizations by slug; anything that
exists is left alone, except that a demo membership with another role is set
back. The demo's modules and sources, and the command itself: knowledge/demo/.
"""

from organizations.demo.seed import DemoAccounts, seed_demo_accounts

__all__ = ["DemoAccounts", "seed_demo_accounts"]
