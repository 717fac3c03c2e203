"""The shared tool registry, with tools defined here: validation, result shapes, the edge handler."""

import contextlib
from collections.abc import Iterator
from typing import Any

from django.test import SimpleTestCase

from operator_core.errors import ErrorCode, Forbidden, NotFound
from operator_core.mcp.tools import (
    OUTCOME_OK,
    READ_ONLY_ANNOTATIONS,
    Tool,
    ToolCall,
    ToolCallReport,
    ToolRegistry,
    open_admission,
)
from operator_core.mcp.transport import UnknownTool

INPUT = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "word": {"type": "string", "minLength": 1, "maxLength": 5},
        "count": {"type": "integer", "minimum": 1, "maximum": 3, "default": 2},
        "ids": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}, "maxItems": 2},
    },
    "required": ["word"],
    "additionalProperties": False,
}
OUTPUT = {"type": "object"}


def echo(call: ToolCall) -> dict[str, Any]:
    return {"arguments": call.arguments}


def missing(call: ToolCall) -> dict[str, Any]:
    raise NotFound("Nothing here.")


def broken(call: ToolCall) -> dict[str, Any]:
    raise RuntimeError("SELECT secret FROM table")


def tool(name: str, handler: Any, *, knowledge: bool = False) -> Tool:
    return Tool(
        name=name,
        title=name.title(),
        description=f"The {name} tool.",
        input_schema=INPUT,
        output_schema=OUTPUT,
        handler=handler,
        knowledge=knowledge,
    )


REGISTRY = ToolRegistry(
    [tool("echo", echo), tool("missing", missing), tool("broken", broken), tool("lookup", missing, knowledge=True)],
    admission=open_admission,
)


@contextlib.contextmanager
def refusing_admission(principal: object, tool: Tool, arguments: dict[str, Any]) -> Iterator[ToolCall]:
    raise Forbidden("Not any more.")
    yield  # pragma: no cover


class ListToolsTests(SimpleTestCase):
    def test_lists_every_tool_in_the_given_order_with_read_only_annotations(self) -> None:
        listing = REGISTRY.list_tools(None)

        self.assertEqual([entry["name"] for entry in listing], ["echo", "missing", "broken", "lookup"])
        self.assertEqual(listing[0]["annotations"], READ_ONLY_ANNOTATIONS)
        self.assertEqual(listing[0]["inputSchema"], INPUT)
        self.assertEqual(listing[0]["outputSchema"], OUTPUT)
        self.assertEqual(listing[0]["title"], "Echo")

    def test_returns_the_same_list_every_time(self) -> None:
        self.assertIs(REGISTRY.list_tools(None), REGISTRY.list_tools(object()))

    def test_refuses_two_tools_of_one_name(self) -> None:
        with self.assertRaises(ValueError):
            ToolRegistry([tool("echo", echo), tool("echo", echo)], admission=open_admission)


class CallToolTests(SimpleTestCase):
    def test_success_has_structured_content_and_the_same_json_as_text(self) -> None:
        result = REGISTRY.call_tool(None, "echo", {"word": "hi", "count": 3})

        self.assertEqual(result["structuredContent"], {"arguments": {"word": "hi", "count": 3}})
        self.assertEqual(result["content"], [{"type": "text", "text": '{"arguments":{"count":3,"word":"hi"}}'}])
        self.assertNotIn("isError", result)

    def test_defaults_of_the_input_schema_are_filled_in(self) -> None:
        result = REGISTRY.call_tool(None, "echo", {"word": "hi"})

        self.assertEqual(result["structuredContent"]["arguments"], {"count": 2, "word": "hi"})

    def test_unknown_tool_raises_unknown_tool(self) -> None:
        with self.assertRaises(UnknownTool):
            REGISTRY.call_tool(None, "nope", {})

    def test_missing_argument_names_its_field(self) -> None:
        result = REGISTRY.call_tool(None, "echo", {})

        self.assertTrue(result["isError"])
        self.assertEqual(
            result["structuredContent"],
            {"error": {"code": "invalid_arguments", "message": "word is required", "field": "word"}},
        )

    def test_unexpected_argument_names_its_field(self) -> None:
        result = REGISTRY.call_tool(None, "echo", {"word": "hi", "colour": "red"})

        self.assertEqual(result["structuredContent"]["error"]["field"], "colour")

    def test_an_argument_out_of_range_names_its_field_and_the_rule(self) -> None:
        result = REGISTRY.call_tool(None, "echo", {"word": "toolong"})

        self.assertEqual(result["structuredContent"]["error"]["field"], "word")
        self.assertEqual(result["structuredContent"]["error"]["message"], "word must be at most 5 characters")

    def test_a_bad_item_names_the_array_and_its_position(self) -> None:
        result = REGISTRY.call_tool(None, "echo", {"word": "hi", "ids": ["ok", "NO"]})

        self.assertEqual(result["structuredContent"]["error"]["field"], "ids")
        self.assertEqual(result["structuredContent"]["error"]["message"], "ids[1] is not in the expected format")

    def test_arguments_that_are_not_an_object_are_invalid_arguments(self) -> None:
        result = REGISTRY.call_tool(None, "echo", ["hi"])

        self.assertEqual(result["structuredContent"]["error"]["field"], "arguments")

    def test_an_operator_error_is_an_is_error_result_with_a_readable_text(self) -> None:
        result = REGISTRY.call_tool(None, "missing", {"word": "hi"})

        self.assertTrue(result["isError"])
        self.assertEqual(result["content"], [{"type": "text", "text": "Nothing here. (not_found)"}])
        self.assertEqual(result["structuredContent"], {"error": {"code": "not_found", "message": "Nothing here."}})

    def test_a_knowledge_tool_fails_with_success_false_and_the_same_json_as_text(self) -> None:
        result = REGISTRY.call_tool(None, "lookup", {"word": "hi"})

        self.assertNotIn("isError", result)
        self.assertEqual(
            result["structuredContent"], {"success": False, "error": {"code": "not_found", "message": "Nothing here."}}
        )
        self.assertEqual(
            result["content"][0]["text"], '{"success":false,"error":{"code":"not_found","message":"Nothing here."}}'
        )

    def test_an_unexpected_exception_is_logged_and_answered_internal_error_without_detail(self) -> None:
        with self.assertLogs("operator_core.mcp.tools", level="ERROR") as logs:
            result = REGISTRY.call_tool(None, "broken", {"word": "hi"})

        self.assertEqual(result["structuredContent"]["error"]["code"], ErrorCode.INTERNAL_ERROR)
        self.assertNotIn("SELECT", str(result))
        self.assertIn("RuntimeError", logs.output[0])

    def test_an_integral_float_reaches_the_handler_as_an_int(self) -> None:
        result = REGISTRY.call_tool(None, "echo", {"word": "hi", "count": 3.0})

        count = result["structuredContent"]["arguments"]["count"]
        self.assertEqual((count, type(count)), (3, int))
        self.assertIn('"count":3,', result["content"][0]["text"])

    def test_a_fractional_float_is_invalid_arguments(self) -> None:
        result = REGISTRY.call_tool(None, "echo", {"word": "hi", "count": 2.5})

        self.assertEqual(result["structuredContent"]["error"]["field"], "count")

    def test_nul_in_a_string_argument_is_invalid_arguments_naming_it(self) -> None:
        result = REGISTRY.call_tool(None, "echo", {"word": "a\x00b"})

        self.assertEqual(
            result["structuredContent"]["error"],
            {"code": "invalid_arguments", "message": "word must not contain the NUL character", "field": "word"},
        )

    def test_nul_in_an_array_item_is_invalid_arguments_naming_the_array(self) -> None:
        result = REGISTRY.call_tool(None, "echo", {"word": "hi", "ids": ["ok", "\x00"]})

        self.assertEqual(result["structuredContent"]["error"]["field"], "ids")

    def test_other_control_characters_are_ordinary_text(self) -> None:
        result = REGISTRY.call_tool(None, "echo", {"word": "a\x1bb"})

        self.assertEqual(result["structuredContent"]["arguments"]["word"], "a\x1bb")

    def test_the_admission_refuses_before_the_arguments_are_validated(self) -> None:
        registry = ToolRegistry([tool("echo", echo)], admission=refusing_admission)

        result = registry.call_tool(None, "echo", {"word": "far too long"})

        self.assertEqual(result["structuredContent"]["error"]["code"], ErrorCode.FORBIDDEN)


class CallObserverTests(SimpleTestCase):
    def setUp(self) -> None:
        self.reports: list[ToolCallReport] = []
        self.registry = ToolRegistry(
            [tool("echo", echo), tool("missing", missing)], admission=open_admission, on_call=self.reports.append
        )

    def test_the_observer_hears_of_each_call_with_its_outcome_and_duration(self) -> None:
        principal = object()

        self.registry.call_tool(principal, "echo", {"word": "hi"})
        self.registry.call_tool(principal, "missing", {"word": "hi"})

        self.assertEqual([(r.tool, r.outcome) for r in self.reports], [("echo", OUTCOME_OK), ("missing", "not_found")])
        self.assertTrue(all(report.principal is principal and report.duration_ms >= 0 for report in self.reports))

    def test_a_refused_call_is_reported_too(self) -> None:
        registry = ToolRegistry([tool("echo", echo)], admission=refusing_admission, on_call=self.reports.append)

        registry.call_tool(None, "echo", {"word": "hi"})

        self.assertEqual([report.outcome for report in self.reports], [ErrorCode.FORBIDDEN])

    def test_an_unknown_tool_is_not_reported(self) -> None:
        with self.assertRaises(UnknownTool):
            self.registry.call_tool(None, "nope", {})

        self.assertEqual(self.reports, [])

    def test_a_call_that_cannot_be_recorded_returns_no_result(self) -> None:
        def failing_observer(report: ToolCallReport) -> None:
            raise RuntimeError("the audit trail is down")

        registry = ToolRegistry([tool("echo", echo)], admission=open_admission, on_call=failing_observer)

        with self.assertRaises(RuntimeError):
            registry.call_tool(None, "echo", {"word": "hi"})
