"""The per-IP request limit of the public docs endpoint (docs/limits.md).

The docs endpoint has no authentication, so its `authenticate` hook is this
limit: it admits every request (principal None) until one IP address exceeds
`operator_settings().docs_calls_per_minute` in the current one-minute window,
then raises `RateLimited`, which the transport answers with HTTP 429, JSON-RPC
-32000 and `Retry-After` before any other check.

While Redis does not answer, each process counts on its own (docs/operations.md#outages):
the pages are public and served from memory, so keeping them up is worth more than an
exact limit for the length of the outage.
"""

from django.http import HttpRequest

from operator_core.conf import operator_settings
from operator_core.rate_limits import OnOutage, require_within_ip_limit

RATE_LIMIT_GROUP = "mcp_docs.calls"


def limit_calls_per_ip(request: HttpRequest) -> None:
    """Count this request against its IP address; raise `RateLimited` once over the limit."""
    require_within_ip_limit(
        request,
        group=RATE_LIMIT_GROUP,
        rate=f"{operator_settings().docs_calls_per_minute}/m",
        message="Too many requests to the docs endpoint.",
        on_outage=OnOutage.COUNT_PER_PROCESS,
    )
