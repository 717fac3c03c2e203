"""The client's IP address, trusting X-Forwarded-For only as far as configured.

With `OPERATOR_TRUSTED_PROXIES = n`, the n-th address from the right of
X-Forwarded-For is the client (each trusted proxy appends the peer it saw), but
only when the request came from one of `OPERATOR_PROXY_ADDRESSES`: a client
that reaches the app server directly is its own address, whatever it sends.
With 0, the header is ignored entirely, since anyone can send it.
"""

import ipaddress

from django.http import HttpRequest

from operator_core.conf import operator_settings


def client_ip(request: HttpRequest) -> str:
    remote = request.META.get("REMOTE_ADDR", "")
    if not from_trusted_proxy(request):
        return remote
    trusted = operator_settings().trusted_proxies
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
    if len(hops) < trusted:
        return hops[0] if hops else remote
    return hops[-trusted]


def from_trusted_proxy(request: HttpRequest) -> bool:
    """Whether the peer is a configured proxy, whose forwarded headers (X-Forwarded-*, X-Request-Id) count."""
    config = operator_settings()
    if config.trusted_proxies <= 0:
        return False
    try:
        peer = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    if isinstance(peer, ipaddress.IPv6Address) and peer.ipv4_mapped is not None:
        peer = peer.ipv4_mapped  # a dual-stack socket reports IPv4 peers as ::ffff:a.b.c.d
    return any(peer in network for network in config.proxy_networks)
