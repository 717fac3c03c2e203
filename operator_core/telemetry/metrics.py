"""The service's metrics: one facade of plainly named functions that the code calls (docs/operations.md#metrics).

Each function records one event into the instruments that are on: the
Prometheus instruments of `REGISTRY` when `GET /metrics` is configured
(`OPERATOR_METRICS_TOKEN`), and the same instruments over OTLP when an OTLP
exporter is configured (`OTEL_METRICS_EXPORTER`, `OTEL_EXPORTER_OTLP_ENDPOINT`).
With neither, each call is one check of a cached flag and returns.

Label values come from closed sets only (`_label`): a known MCP method, a
registered tool, a JSON-RPC code, a known grant type or OAuth error code, a
limit's group. Whatever a client sends that is not in the set is counted
as `_OTHER`, so no token, secret, email code or argument text becomes a label,
and a client cannot grow the number of series. The names follow the
OpenTelemetry semantic conventions for MCP (`mcp.server.operation.duration`,
`error.type`, `tool_error`) and their Prometheus form (`_seconds`, `_total`).
Why multiprocess files for Prometheus: docs/development/decisions.md#metrics.
"""

from __future__ import annotations

import functools
import os
import socket
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from django.core.signals import setting_changed
from prometheus_client import CollectorRegistry, Counter, Histogram

from operator_core.conf import operator_settings

# A label value outside its closed set (the OpenTelemetry convention for an unknown method).
OTHER = "_OTHER"
# error.type of a tools/call whose CallToolResult is an error (OpenTelemetry MCP conventions).
TOOL_ERROR = "tool_error"
# The seconds of the OpenTelemetry MCP conventions' advised buckets for mcp.server.operation.duration.
DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)

MCP_METHODS = frozenset(
    {
        "initialize",
        "server/discover",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/read",
        "resources/templates/list",
    }
)
GRANT_TYPES = frozenset(
    {
        "authorization_code",
        "refresh_token",
        "client_credentials",
        "urn:ietf:params:oauth:grant-type:jwt-bearer",
    }
)
# What a token request came to: "issued", or its OAuth error code (RFC 6749 §5.2, RFC 8693, RFC 6750).
TOKEN_ISSUED = "issued"
TOKEN_RESULTS = frozenset(
    {
        TOKEN_ISSUED,
        "invalid_request",
        "invalid_client",
        "invalid_grant",
        "unauthorized_client",
        "unsupported_grant_type",
        "invalid_scope",
        "invalid_target",
        "access_denied",
        "temporarily_unavailable",
        "server_error",
    }
)

REGISTRY = CollectorRegistry(auto_describe=True)
_LABELS_OPERATION = ("mcp_method_name", "gen_ai_tool_name", "error_type")
_operation_duration = Histogram(
    "mcp_server_operation_duration",
    "MCP requests answered, by method, tool and error type, and how long each took.",
    _LABELS_OPERATION,
    unit="seconds",
    buckets=DURATION_BUCKETS,
    registry=REGISTRY,
)
_limit_refusals = Counter(
    "operator_limit_refusals",
    "Requests refused by a rate or concurrency limit, by limit.",
    ("limit",),
    registry=REGISTRY,
)
_token_outcomes = Counter(
    "operator_oauth_token_requests",
    "Token endpoint requests, by grant type and result.",
    ("grant_type", "result"),
    registry=REGISTRY,
)
_grace_replays = Counter(
    "operator_oauth_refresh_grace_replays",
    "Rotated refresh tokens presented again within the grace window and answered the same.",
    registry=REGISTRY,
)
_family_revocations = Counter(
    "operator_oauth_token_family_revocations",
    "Refresh-token families revoked, by reason.",
    ("reason",),
    registry=REGISTRY,
)

# The registered tool a tools/call reached, and whether its result is an error; set by the tool
# registry, read and cleared by the transport when it records the operation.
_tool_outcome: ContextVar[tuple[str, bool] | None] = ContextVar("operator_metrics_tool_outcome", default=None)


@dataclass(frozen=True)
class _Backends:
    prometheus: bool
    # The OpenTelemetry instruments by name, when metrics go out over OTLP.
    otlp: dict[str, Any] | None

    @property
    def on(self) -> bool:
        return self.prometheus or self.otlp is not None


def counting() -> bool:
    """Whether any metric is recorded: for a caller whose label costs work to compute."""
    return _backends().on


def note_tool_outcome(tool: str, *, failed: bool) -> None:
    """Tell the operation in flight which registered tool it called and whether the result is an error."""
    if _backends().on:
        _tool_outcome.set((tool, failed))


def record_mcp_operation(method: str | None, error_code: int | None, seconds: float) -> None:
    """One MCP request answered: `mcp.server.operation.duration` by method, tool and `error.type`.

    `error_code` is the JSON-RPC error code answered, None for a result; the tool
    and `tool_error` come from `note_tool_outcome`.
    """
    backends = _backends()
    if not backends.on:
        return
    noted = _tool_outcome.get()
    _tool_outcome.set(None)
    # Only a tools/call reached a tool: what a call made outside the transport noted is not this one's.
    tool, failed = noted if noted is not None and method == "tools/call" else ("", False)
    error_type = str(error_code) if error_code is not None else (TOOL_ERROR if failed else "")
    labels = (_label(method, MCP_METHODS), tool, error_type)
    if backends.prometheus:
        _operation_duration.labels(*labels).observe(seconds)
    if backends.otlp is not None:
        attributes = {
            name: value
            for name, value in zip(("mcp.method.name", "gen_ai.tool.name", "error.type"), labels, strict=True)
            if value
        }
        backends.otlp["mcp.server.operation.duration"].record(seconds, attributes)


def count_limit_refusal(limit: str) -> None:
    """One request refused by the limit named `limit` (a limiter's group, a constant of the code)."""
    _count("operator.limit.refusals", _limit_refusals, limit=limit)


def count_token_outcome(grant: str | None, result: str | None) -> None:
    """One token endpoint answer: the grant type asked for and `TOKEN_ISSUED` or the OAuth error code."""
    _count(
        "operator.oauth.token.requests",
        _token_outcomes,
        grant_type=_label(grant, GRANT_TYPES),
        result=_label(result, TOKEN_RESULTS),
    )


def count_refresh_grace_replay() -> None:
    """A rotated refresh token answered again within its grace window (docs/authentication.md#the-grace-window)."""
    _count("operator.oauth.refresh.grace_replays", _grace_replays)


def count_family_revocation(reason: str) -> None:
    """A refresh-token family revoked; `reason` is one of the constants of its caller."""
    _count("operator.oauth.token_family.revocations", _family_revocations, reason=reason)


def _count(name: str, counter: Counter, **labels: str) -> None:
    backends = _backends()
    if backends.prometheus:
        (counter.labels(**labels) if labels else counter).inc()
    if backends.otlp is not None:
        backends.otlp[name].add(1, labels)


def _label(value: str | None, known: frozenset[str]) -> str:
    if value is None:
        return ""
    return value if value in known else OTHER


@functools.cache
def _backends() -> _Backends:
    conf = operator_settings()
    return _Backends(prometheus=bool(conf.metrics_token), otlp=_otlp_instruments() if conf.metrics_otlp else None)


# Settings decide which backends are on: recomputed after a change (tests' override_settings).
setting_changed.connect(lambda **_: _backends.cache_clear(), weak=False)


@functools.cache
def _otlp_instruments() -> dict[str, Any]:
    """This process's OpenTelemetry meter and its instruments, created on first use.

    First use comes after gunicorn forked the worker, so the exporting thread
    runs in the process that records. The SDK reads the `OTEL_*` variables
    itself (endpoint, headers, export interval). Each process is an instance
    of its own (`service.instance.id`), so that a collector adds the workers'
    series instead of taking one for another's.
    """
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource

    resource = Resource.create({"service.instance.id": f"{socket.gethostname()}-{os.getpid()}"})
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": "service-operator"}))
    provider = MeterProvider(resource=resource, metric_readers=[PeriodicExportingMetricReader(OTLPMetricExporter())])
    meter = provider.get_meter("operator_core.telemetry")
    return {
        # Its exit hook exports what is left when the worker ends; a flush needs it too.
        "provider": provider,
        "mcp.server.operation.duration": meter.create_histogram(
            "mcp.server.operation.duration",
            unit="s",
            description=_operation_duration._documentation,
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        ),
        "operator.limit.refusals": meter.create_counter("operator.limit.refusals", unit="{request}"),
        "operator.oauth.token.requests": meter.create_counter("operator.oauth.token.requests", unit="{request}"),
        "operator.oauth.refresh.grace_replays": meter.create_counter(
            "operator.oauth.refresh.grace_replays", unit="{request}"
        ),
        "operator.oauth.token_family.revocations": meter.create_counter(
            "operator.oauth.token_family.revocations", unit="{family}"
        ),
    }
