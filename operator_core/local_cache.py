"""The per-process cache of the embedded default (no `REDIS_URL`), without memcached's key checks.

Django's local-memory cache checks every key against memcached's rules (length,
control characters) on every get and set, to warn code that might move to
memcached one day. This service's cache is local memory or Redis, never
memcached (docs/development/decisions.md#limits), and the check walked every
character of each counter key six times per tool call, costing more than the
counting itself (docs/development/performance.md).
"""

from django.core.cache.backends.locmem import LocMemCache


class LocalMemoryCache(LocMemCache):
    """Django's `LocMemCache`, minus the memcached key warnings."""

    def validate_key(self, key: str) -> None:
        """Nothing to check: keys of this cache never reach memcached."""
