"""The Prometheus text exposition of the metrics, and the bearer check of the endpoint that serves it.

A scrape reaches one gunicorn worker. With `PROMETHEUS_MULTIPROC_DIR` (which
gunicorn.conf.py sets), every worker writes its counts to files there and the
exposition adds them up, so one scrape sees the whole server; without it (one
process: `make run`, the tests), the exposition is this process's registry.
Gauges read at scrape time (the outbox, the dependencies) are handed in by the
caller and rendered after the counts. docs/operations.md#metrics lists the
metrics; docs/development/decisions.md#metrics says why this design.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.utils.crypto import constant_time_compare
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from operator_core.conf import operator_settings
from operator_core.telemetry import metrics

CONTENT_TYPE = CONTENT_TYPE_LATEST


@dataclass(frozen=True)
class Gauge:
    """One gauge read at scrape time: a metric family with one sample per label set."""

    name: str
    documentation: str
    samples: list[tuple[dict[str, str], float]] = field(default_factory=list)


def exposition(gauges: Iterable[Gauge]) -> bytes:
    """The text exposition of every counter and histogram, then of `gauges`."""
    multiprocess_dir = operator_settings().metrics_multiprocess_dir
    if multiprocess_dir:
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry, path=multiprocess_dir)
    else:
        registry = metrics.REGISTRY
    scraped = CollectorRegistry()
    scraped.register(_GaugeCollector(list(gauges)))
    return generate_latest(registry) + generate_latest(scraped)


def presents_metrics_token(authorization: str) -> bool:
    """Whether an `Authorization` header carries the configured token as a bearer credential (RFC 6750 §2.1).

    Compared in constant time, over digests of equal length, so that neither
    the token's characters nor its length show in the time an answer takes.
    """
    token = operator_settings().metrics_token
    scheme, _, presented = authorization.partition(" ")
    if not token or scheme.lower() != "bearer":
        return False
    return constant_time_compare(_digest(presented.strip()), _digest(token))


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).digest()


class _GaugeCollector(Collector):
    def __init__(self, gauges: list[Gauge]) -> None:
        self._gauges = gauges

    def collect(self) -> Iterable[GaugeMetricFamily]:
        for gauge in self._gauges:
            label_names = sorted({name for labels, _ in gauge.samples for name in labels})
            family = GaugeMetricFamily(gauge.name, gauge.documentation, labels=label_names)
            for labels, value in gauge.samples:
                family.add_metric([labels.get(name, "") for name in label_names], value)
            yield family
