"""Typed, cached access to our own settings (`settings.OPERATOR`).

App code reads configuration through `operator_settings()` only; tests change it
with `override_settings(OPERATOR=...)`, which clears the cache below.
"""

import functools
import ipaddress
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.signals import setting_changed


@dataclass(frozen=True)
class ProtocolRevision:
    version: str
    deprecated_at: datetime | None = None
    sunset_at: datetime | None = None


@dataclass(frozen=True)
class OperatorSettings:
    base_url: str
    issuer: str
    operator_endpoint_url: str
    docs_dir: str
    access_token_lifetime_seconds: int
    refresh_token_lifetime_seconds: int
    refresh_token_grace_seconds: int
    headless_token_lifetime_seconds: int
    headless_code_lifetime_seconds: int
    headless_claim_attempts: int
    idempotency_retention_seconds: int
    headless_registrations_per_hour: int
    headless_completions_per_hour: int
    headless_emails_per_recipient_per_hour: int
    tool_calls_per_minute: int
    tool_concurrency: int
    tool_lease_seconds: int
    docs_calls_per_minute: int
    sign_in_attempts_per_minute: int
    oauth_token_requests_per_minute: int
    oauth_token_requests_per_client_per_minute: int
    oauth_authorizations_per_minute: int
    oauth_revocations_per_minute: int
    oauth_registrations_per_hour: int
    client_registration: str
    registration_redirect_hosts: tuple[str, ...]
    unused_client_retention_hours: int
    audit_retention_days: int
    trusted_proxies: int
    proxy_networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]
    max_request_bytes: int
    token_leeway_seconds: int
    protocol_revisions: tuple[ProtocolRevision, ...]
    deprecation_policy_url: str
    server_version: str
    # Never in a repr: settings objects end up in tracebacks and debug pages.
    metrics_token: str = field(repr=False)
    metrics_otlp: bool
    metrics_multiprocess_dir: str

    @property
    def resource_metadata_url(self) -> str:
        return f"{self.base_url}/.well-known/oauth-protected-resource/api/mcp/operator"


def _revision(raw: dict[str, object]) -> ProtocolRevision:
    def moment(value: object) -> datetime | None:
        if value is None or isinstance(value, datetime):
            return value
        return datetime.fromisoformat(str(value))

    return ProtocolRevision(
        version=str(raw["version"]),
        deprecated_at=moment(raw.get("deprecated_at")),
        sunset_at=moment(raw.get("sunset_at")),
    )


@functools.cache
def operator_settings() -> OperatorSettings:
    values: dict[str, Any] = dict(settings.OPERATOR)  # one value per field of OperatorSettings, of its type
    values["protocol_revisions"] = tuple(_revision(raw) for raw in values["protocol_revisions"])
    values["proxy_networks"] = tuple(ipaddress.ip_network(raw) for raw in values["proxy_networks"])
    values["registration_redirect_hosts"] = tuple(host.lower() for host in values["registration_redirect_hosts"])
    return OperatorSettings(**values)


# weak=False: nothing else holds the lambda, and a weak receiver would vanish at once
setting_changed.connect(lambda **_: operator_settings.cache_clear(), weak=False)
