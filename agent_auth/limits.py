"""Per-IP limits of the headless endpoints (contract §8), shared by every worker.

Counts live in Django's cache through django-ratelimit: Redis when `REDIS_URL` is
set, so all workers share them; the embedded default is one process. The client
address comes from `operator_site.client_ip` (REMOTE_ADDR unless trusted proxies
are configured).
"""

from django.http import HttpRequest
from django_ratelimit.core import get_usage

from operator_site.client_ip import client_ip
from operator_site.errors import RateLimited

REGISTRATION_GROUP = "agent_auth.registration"
COMPLETION_GROUP = "agent_auth.completion"


def require_within_ip_limit(request: HttpRequest, *, group: str, per_hour: int) -> None:
    """Count this request against its address; raise `RateLimited` past `per_hour` in the window."""
    usage = get_usage(
        request,
        group=group,
        key=lambda _group, req: client_ip(req),
        rate=f"{per_hour}/h",
        increment=True,
    )
    if usage is not None and usage["should_limit"]:
        raise RateLimited(
            "Too many requests from this address; retry later.",
            retry_after_seconds=max(int(usage["time_left"]), 1),
        )
