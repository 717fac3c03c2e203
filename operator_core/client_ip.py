"""The client's IP address, trusting X-Forwarded-For only as far as configured.

With `OPERATOR_TRUSTED_PROXIES = n`, the n-th address from the right of
X-Forwarded-For is the client (each trusted proxy appends the peer it saw);
with 0, the header is ignored entirely, since anyone can send it.
"""

from django.http import HttpRequest

from operator_core.conf import operator_settings


def client_ip(request: HttpRequest) -> str:
    trusted = operator_settings().trusted_proxies
    remote = request.META.get("REMOTE_ADDR", "")
    if trusted <= 0:
        return remote
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
    if len(hops) < trusted:
        return hops[0] if hops else remote
    return hops[-trusted]
