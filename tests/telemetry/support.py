"""Tracing into memory for a test: the real SDK and instrumentation, spans kept in an `InMemorySpanExporter`.

`trace_in_memory(test)` turns tracing on for the test (as `configure_tracing`
does in a worker, with a synchronous processor so every span is there when
the request returns) and off again at its end. Middleware chains are built
by each test client on its first request, so a client used after the call traces.
"""

from __future__ import annotations

import unittest
from collections.abc import Iterable
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, format_span_id, format_trace_id

from operator_core.telemetry import tracing

# A valid W3C traceparent (version 00, sampled), and the ids it carries.
CLIENT_TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CLIENT_SPAN_ID = "00f067aa0ba902b7"
CLIENT_TRACEPARENT = f"00-{CLIENT_TRACE_ID}-{CLIENT_SPAN_ID}-01"
HEADER_TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
HEADER_SPAN_ID = "b7ad6b7169203331"
HEADER_TRACEPARENT = f"00-{HEADER_TRACE_ID}-{HEADER_SPAN_ID}-01"
MALFORMED_TRACEPARENTS = [
    "00-not-a-trace-01",
    f"00-{'0' * 32}-{CLIENT_SPAN_ID}-01",  # the all-zero trace id is invalid
    f"ff-{CLIENT_TRACE_ID}-{CLIENT_SPAN_ID}-01",  # version ff is forbidden
    "\x00\x1b[2J",
    "x" * 5000,
]


def trace_in_memory(test: unittest.TestCase) -> InMemorySpanExporter:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.install(provider)
    test.addCleanup(tracing.uninstall)
    return exporter


def server_spans(spans: Iterable[ReadableSpan]) -> list[ReadableSpan]:
    return [span for span in spans if span.kind == SpanKind.SERVER]


def trace_id_of(span: ReadableSpan) -> str:
    return format_trace_id(span.context.trace_id)


def parent_ids(span: ReadableSpan) -> tuple[str, str] | None:
    """(trace id, span id) of the span's parent, None for a root."""
    if span.parent is None:
        return None
    return format_trace_id(span.parent.trace_id), format_span_id(span.parent.span_id)


def every_text_of(spans: Iterable[ReadableSpan]) -> str:
    """Every span's name and attribute values, events and resource included, as one text to search."""
    texts: list[str] = []
    for span in spans:
        texts.append(span.name)
        texts.extend(_values(span.attributes))
        for event in span.events:
            texts.append(event.name)
            texts.extend(_values(event.attributes))
    return "\n".join(texts)


def _values(attributes: Any) -> list[str]:
    return [str(value) for value in (attributes or {}).values()]
