"""The addresses a person needs first, from settings: what the front page and the start-up banner show.

Built from `OPERATOR_BASE_URL` (never the request's Host header), so both
always show the URL whose `resource` the OAuth metadata names
(docs/authentication.md#localhost-and-127001).
"""

from dataclasses import dataclass
from urllib.parse import urlsplit

from operator_core.conf import operator_settings

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


@dataclass(frozen=True)
class SiteAddresses:
    base_url: str
    mcp_url: str
    docs_mcp_url: str
    docs_url: str
    admin_url: str

    @property
    def is_loopback(self) -> bool:
        """True when only clients on this machine can reach the service (`make run`)."""
        return urlsplit(self.base_url).hostname in LOOPBACK_HOSTS


def site_addresses() -> SiteAddresses:
    conf = operator_settings()
    return SiteAddresses(
        base_url=conf.base_url,
        mcp_url=conf.operator_endpoint_url,
        docs_mcp_url=f"{conf.base_url}/api/mcp/docs",
        docs_url=f"{conf.base_url}/docs/",
        admin_url=f"{conf.base_url}/admin/",
    )
