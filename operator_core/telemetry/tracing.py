"""Tracing set-up: the OpenTelemetry SDK, its OTLP/HTTP exporter and the database and Redis instrumentation.

Off unless the environment asks for it (`tracing_requested`): then nothing of the
SDK is imported, nothing is instrumented, and `is_on()` is the one check the
request path pays. On, each process sets itself up once, after gunicorn forks a
worker (gunicorn.conf.py, `post_fork`) or when `manage.py runserver` or
`db_worker` starts (manage.py): the batch exporter's thread does not survive a
fork. Everything else is read by the SDK from the standard `OTEL_*` variables
(docs/configuration.md#traces). Spans never carry a statement's parameters: the
instrumentations record the SQL text with its placeholders and Redis commands
as `COMMAND ? ?` (docs/operations.md#traces).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Tracer

logger = logging.getLogger(__name__)

TRACER_NAME = "service-operator"
DEFAULT_SERVICE_NAME = "service-operator"
# Any one of these turns tracing on (docs/configuration.md#traces).
_SWITCHES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER")
_EXPORTER_OTLP = "otlp"
_EXPORTER_CONSOLE = "console"
_EXPORTER_NONE = "none"
_TRACED_COMMANDS = frozenset({"runserver", "db_worker"})


class _State:
    tracer: Tracer | None = None
    provider: TracerProvider | None = None
    # base cursor class -> its traced subclass, for this provider
    cursor_classes: dict[type, type] = {}


_state = _State()


def is_on() -> bool:
    """Whether this process traces: the one check on the request path when it does not."""
    return _state.tracer is not None


def tracer() -> Tracer:
    """The process's tracer; only to be asked for when `is_on()`."""
    if _state.tracer is None:
        raise RuntimeError("tracing is off in this process")
    return _state.tracer


def tracing_requested(environ: Mapping[str, str]) -> bool:
    """True when an OTLP endpoint or a traces exporter other than `none` is configured."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if not any(environ.get(name, "").strip() for name in _SWITCHES):
        return False
    return environ.get("OTEL_TRACES_EXPORTER", _EXPORTER_OTLP).strip().lower() != _EXPORTER_NONE


def configure_tracing(environ: Mapping[str, str] | None = None) -> bool:
    """Set this process up for tracing when the environment asks for it; True when it traces."""
    environ = os.environ if environ is None else environ
    if is_on() or not tracing_requested(environ):
        return is_on()
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

    kind = environ.get("OTEL_TRACES_EXPORTER", _EXPORTER_OTLP).strip().lower()
    exporter: SpanExporter
    if kind == _EXPORTER_CONSOLE:
        exporter = ConsoleSpanExporter()
    elif kind == _EXPORTER_OTLP:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter()
    else:
        logger.warning("Tracing is off: OTEL_TRACES_EXPORTER=%r is not one of otlp, console, none.", kind[:40])
        return False
    # Resource.create reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES; without either, our name.
    resource = Resource.create()
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: DEFAULT_SERVICE_NAME}))
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(exporter))
    install(provider)
    return True


def install(provider: TracerProvider) -> None:
    """Trace through `provider` from now on, database and Redis clients included (tests pass their own)."""
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
    from opentelemetry.instrumentation.redis import RedisInstrumentor
    from opentelemetry.instrumentation.sqlite3 import SQLite3Instrumentor

    uninstall()
    # Parameters stay out of spans (their default, said aloud): they may hold a token's checksum or an argument.
    PsycopgInstrumentor().instrument(tracer_provider=provider, capture_parameters=False, enable_commenter=False)
    SQLite3Instrumentor().instrument(tracer_provider=provider)
    RedisInstrumentor().instrument(tracer_provider=provider)
    _state.provider = provider
    _state.tracer = provider.get_tracer(TRACER_NAME)


def uninstall() -> None:
    """Stop tracing in this process and undo the instrumentation."""
    if _state.provider is None:
        return
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
    from opentelemetry.instrumentation.redis import RedisInstrumentor
    from opentelemetry.instrumentation.sqlite3 import SQLite3Instrumentor

    for instrumentor in (PsycopgInstrumentor(), SQLite3Instrumentor(), RedisInstrumentor()):
        instrumentor.uninstrument()
    _state.provider.shutdown()
    _state.provider = None
    _state.tracer = None
    _state.cursor_classes = {}


def traced_cursor_class(base: type[Any]) -> type[Any]:
    """`base`, a psycopg cursor class, or when tracing is on its subclass that traces each statement.

    For the cursors built from their class rather than by the connection's cursor
    factory, which the psycopg instrumentation replaces: the prepared reads of
    `operator_core.sql`. Parameters stay out of the spans, as on every other cursor.
    """
    if _state.provider is None:
        return base
    traced = _state.cursor_classes.get(base)
    if traced is None:
        # The instrumentation's own factory of traced cursors: the one private name we use (0.66b1, pinned).
        from opentelemetry.instrumentation.psycopg import _new_cursor_factory

        traced = _new_cursor_factory(base_factory=base, tracer_provider=_state.provider)
        _state.cursor_classes[base] = traced
    return traced


def configure_for_command(argv: Sequence[str], environ: Mapping[str, str]) -> None:
    """At `manage.py runserver` (in the serving process, not the reloader's) and `db_worker`."""
    command = argv[1] if len(argv) > 1 else ""
    if command not in _TRACED_COMMANDS:
        return
    reloader_parent = command == "runserver" and "--noreload" not in argv and environ.get("RUN_MAIN") != "true"
    if not reloader_parent:
        configure_tracing(environ)
