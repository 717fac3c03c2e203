"""Which MCP protocol revisions are served, and the headers announcing one's removal.

A revision leaves the served list once its sunset has passed; until then an
exchange naming a revision announced for removal carries `Deprecation`,
`Sunset` and `Link` headers (RFC 9745, RFC 8594; docs/versioning.md).
"""

from datetime import UTC, datetime

from django.http import HttpResponse
from django.utils.http import http_date

from operator_core.conf import ProtocolRevision, operator_settings


def served_revisions(*, now: datetime | None = None) -> list[ProtocolRevision]:
    """Revisions still served: every configured one whose sunset has not passed."""
    now = now or datetime.now(UTC)
    return [
        revision
        for revision in operator_settings().protocol_revisions
        if revision.sunset_at is None or _aware(revision.sunset_at) > now
    ]


def served_versions() -> list[str]:
    """The served revision strings, newest first: `data.supported`, `supportedVersions`, /.well-known/mcp."""
    return [revision.version for revision in served_revisions()]


def add_deprecation_headers(response: HttpResponse, version: str | None) -> None:
    """Deprecation, Sunset and Link for an exchange naming a revision announced for removal."""
    if version is None:
        return
    revision = next((r for r in operator_settings().protocol_revisions if r.version == version), None)
    if revision is None or revision.deprecated_at is None:
        return
    policy = operator_settings().deprecation_policy_url
    response["Deprecation"] = f"@{int(_aware(revision.deprecated_at).timestamp())}"
    links = [f'<{policy}>; rel="deprecation"']
    if revision.sunset_at is not None:
        response["Sunset"] = http_date(_aware(revision.sunset_at).timestamp())
        links.append(f'<{policy}>; rel="sunset"')
    response["Link"] = ", ".join(links)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
