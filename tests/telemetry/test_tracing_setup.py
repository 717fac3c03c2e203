"""Tracing is off unless OTEL_* asks for it, and then set up once per serving process (docs/operations.md#traces)."""

from django.core.exceptions import MiddlewareNotUsed
from django.http import HttpRequest, HttpResponse
from django.test import SimpleTestCase, TestCase

from operator_core.telemetry import tracing
from operator_core.telemetry.request_spans import RequestSpanMiddleware
from tests.mcp_requests import DOCS_PATH, envelope, post_mcp

ENDPOINT = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}


def _answer(request: HttpRequest) -> HttpResponse:
    return HttpResponse()


class SwitchTests(SimpleTestCase):
    def test_each_documented_variable_turns_tracing_on(self) -> None:
        for environ in (
            ENDPOINT,
            {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:9/v1/traces"},
            {"OTEL_TRACES_EXPORTER": "otlp"},
            {"OTEL_TRACES_EXPORTER": "console"},
        ):
            with self.subTest(environ=environ):
                self.assertTrue(tracing.tracing_requested(environ))

    def test_nothing_set_none_or_a_disabled_sdk_keeps_it_off(self) -> None:
        for environ in (
            {},
            {"OTEL_EXPORTER_OTLP_ENDPOINT": "  "},
            {"OTEL_SERVICE_NAME": "operator"},
            {**ENDPOINT, "OTEL_TRACES_EXPORTER": "none"},
            {**ENDPOINT, "OTEL_SDK_DISABLED": "true"},
        ):
            with self.subTest(environ=environ):
                self.assertFalse(tracing.tracing_requested(environ))

    def test_off_nothing_is_set_up_and_the_span_middleware_leaves_the_chain(self) -> None:
        self.assertFalse(tracing.configure_tracing({}))
        self.assertFalse(tracing.is_on())
        with self.assertRaises(MiddlewareNotUsed):
            RequestSpanMiddleware(_answer)

    def test_an_unknown_exporter_is_refused_with_a_warning_and_stays_off(self) -> None:
        with self.assertLogs("operator_core.telemetry.tracing", "WARNING"):
            self.assertFalse(tracing.configure_tracing({"OTEL_TRACES_EXPORTER": "zipkin"}))
        self.assertFalse(tracing.is_on())

    def test_an_endpoint_sets_up_tracing_once(self) -> None:
        self.addCleanup(tracing.uninstall)
        self.assertTrue(tracing.configure_tracing(ENDPOINT))
        first = tracing.tracer()
        self.assertTrue(tracing.configure_tracing(ENDPOINT))
        self.assertIs(tracing.tracer(), first)

    def test_runserver_traces_in_its_serving_process_only_and_other_commands_never(self) -> None:
        self.addCleanup(tracing.uninstall)
        for argv, environ in (
            (["manage.py", "migrate"], ENDPOINT),
            (["manage.py", "runserver"], ENDPOINT),  # the reloader's watching process
        ):
            with self.subTest(argv=argv):
                tracing.configure_for_command(argv, environ)
                self.assertFalse(tracing.is_on())
        for argv, environ in (
            (["manage.py", "runserver"], {**ENDPOINT, "RUN_MAIN": "true"}),
            (["manage.py", "runserver", "--noreload"], ENDPOINT),
            (["manage.py", "db_worker"], ENDPOINT),
        ):
            with self.subTest(argv=argv):
                tracing.configure_for_command(argv, environ)
                self.assertTrue(tracing.is_on())
                tracing.uninstall()


class OffTests(TestCase):
    def test_off_the_request_id_is_a_new_one_as_before(self) -> None:
        first = post_mcp(self.client, envelope("tools/list"), path=DOCS_PATH)
        second = post_mcp(
            self.client,
            envelope("tools/list"),
            path=DOCS_PATH,
            headers={"traceparent": "00-" + "a" * 32 + "-" + "b" * 16 + "-01"},
        )

        self.assertEqual(len(first["X-Request-Id"]), 32)
        self.assertNotEqual(second["X-Request-Id"], "a" * 32)
