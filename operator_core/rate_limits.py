"""Fixed-window request budgets on Django's cache, through django-ratelimit.

Shared by every per-IP or per-key limit outside the tool calls: sign-in, the
headless endpoints and the docs endpoint. Counts live in Django's cache: Redis
when `REDIS_URL` is set, so every worker shares them; the embedded default is
one process. The client address comes from `operator_core.client_ip`
(REMOTE_ADDR unless trusted proxies are configured).
"""

from django.http import HttpRequest
from django_ratelimit.core import get_usage

from operator_core.client_ip import client_ip
from operator_core.errors import RateLimited


def seconds_until_allowed(request: HttpRequest, *, group: str, key: str, rate: str) -> int:
    """Count this request under `key` in `group`: 0 while within `rate` ("10/m", "60/h"),
    otherwise the seconds left in the current window (at least 1)."""
    usage = get_usage(request, group=group, key=lambda _group, _request: key, rate=rate, increment=True)
    if usage is None or not usage["should_limit"]:
        return 0
    return max(1, int(usage["time_left"]))


def require_within_ip_limit(request: HttpRequest, *, group: str, rate: str, message: str) -> None:
    """Count this request against the client's address; raise `RateLimited` once over `rate`."""
    retry_after = seconds_until_allowed(request, group=group, key=client_ip(request), rate=rate)
    if retry_after:
        raise RateLimited(message, retry_after_seconds=retry_after)
