"""Typed MCP tools and the registry that lists and calls them (both endpoints).

The registry owns what every tool shares: the `tools/list` entries (built
once), argument validation against each tool's input schema (JSON Schema
2020-12; no NUL in any string, integers as `int`, top-level defaults filled
in), the admission hook (which runs first, so that `forbidden` beats every
other answer), the result shapes of `operator_core.mcp.results`, and the
tool-call edge: an outage is `temporarily_unavailable`, any other exception is
logged and answered `internal_error`. The `on_call` observer hears of every
call past the name lookup before its result is returned, so no answer leaves
without its audit record; with `record_with_read`, that record is sent with
the read that settles the call instead (on PostgreSQL one round trip for both,
`operator_core.sql.sent_with_settling_read`), and the observer is told so.
`open_admission` admits every call on an endpoint without principals.
docs/development/architecture.md#one-tool-call-step-by-step walks a call; docs/development/adding-a-tool.md adds one.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar, cast

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from operator_core.errors import InvalidArguments, OperatorError
from operator_core.mcp.results import failure_result, success_result
from operator_core.mcp.transport import Refusal, UnknownTool
from operator_core.outages import error_for_failure
from operator_core.request_log import annotate
from operator_core.sql import Rider, sent_with_settling_read
from operator_core.telemetry import metrics

logger = logging.getLogger(__name__)

READ_ONLY_ANNOTATIONS: dict[str, bool] = {
    "readOnlyHint": True,
    "idempotentHint": True,
    "destructiveHint": False,
    "openWorldHint": False,
}


# The outcome of a successful call in logs; a failure logs its error code.
OUTCOME_OK = "ok"

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def object_schema(properties: dict[str, Any], *, required: list[str] | None = None) -> dict[str, Any]:
    """A closed JSON Schema 2020-12 object, as every tool's inputSchema and outputSchema is."""
    schema: dict[str, Any] = {"$schema": SCHEMA_DIALECT, "type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


# What an endpoint's admission resolved the call to: an organization on the operator endpoint.
ScopeT = TypeVar("ScopeT")


@dataclass(frozen=True)
class ToolCall(Generic[ScopeT]):
    """One admitted call: who calls, in which organization (None on the docs endpoint), with what.

    `arguments` are validated against the tool's input schema before the handler sees them.
    """

    principal: object
    organization: ScopeT
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    handler: Callable[[ToolCall], dict[str, Any]]
    knowledge: bool = False
    # a fresh copy per tool: a dataclass may not share one mutable default
    annotations: dict[str, Any] = field(default_factory=lambda: dict(READ_ONLY_ANNOTATIONS))

    def as_listing(self) -> dict[str, Any]:
        """The MCP `Tool` object of `tools/list`."""
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema,
            "outputSchema": self.output_schema,
            "annotations": self.annotations,
        }


Admission = Callable[[object, Tool, dict[str, Any]], contextlib.AbstractContextManager[ToolCall]]


@dataclass(frozen=True)
class ToolCallReport:
    """What the observer learns of one call: `outcome` is `OUTCOME_OK` or the tool error code.

    `recorded_with_read`: the call's record already went, as `OUTCOME_OK`, with the read that settled it.
    """

    principal: object
    tool: str
    outcome: str
    duration_ms: float
    recorded_with_read: bool = False


CallObserver = Callable[[ToolCallReport], None]
# (principal, tool name, perf_counter at the call's start) -> the statement recording the call as OUTCOME_OK.
CallRecorder = Callable[[object, str, float], Rider]


@contextlib.contextmanager
def open_admission(principal: object, tool: Tool, arguments: dict[str, Any]) -> Iterator[ToolCall]:
    """Admit every call, with no organization: for endpoints without authentication."""
    yield ToolCall(principal=principal, organization=None, arguments=arguments)


class ToolRegistry:
    """The tools of one endpoint, listed and called in a fixed order (satisfies `transport.ToolSet`)."""

    # tools/list is the same list for every principal: the transport encodes it once.
    same_listing_for_everyone = True

    def __init__(
        self,
        tools: list[Tool],
        *,
        admission: Admission,
        on_call: CallObserver | None = None,
        record_with_read: CallRecorder | None = None,
    ) -> None:
        names = [tool.name for tool in tools]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate tool names in {names}")
        self._tools: dict[str, Tool] = {tool.name: tool for tool in tools}
        self._admission = admission
        self._on_call = on_call
        self._record_with_read = record_with_read
        self._validators: dict[str, Draft202012Validator] = {}
        self._defaults: dict[str, dict[str, Any]] = {}
        self._integers: dict[str, frozenset[str]] = {}
        for tool in tools:
            for schema in (tool.input_schema, tool.output_schema):
                Draft202012Validator.check_schema(schema)
            self._validators[tool.name] = Draft202012Validator(tool.input_schema)
            properties = tool.input_schema.get("properties", {})
            self._defaults[tool.name] = {
                name: spec["default"] for name, spec in properties.items() if "default" in spec
            }
            self._integers[tool.name] = frozenset(name for name, spec in properties.items() if _admits_integer(spec))
        # Never changes after construction: built once, handed out as is.
        self._listing: list[dict[str, Any]] = [tool.as_listing() for tool in tools]

    def list_tools(self, principal: object) -> list[dict[str, Any]]:
        """The MCP Tool objects, same list in the same order for every principal. Do not mutate."""
        return self._listing

    def call_tool(self, principal: object, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Run one tool and return the CallToolResult body; raises `UnknownTool` for an unknown name.

        `arguments` is an object: the transport answers any other `params.arguments`
        with JSON-RPC -32602 before a tool is looked up. Every failure past the name
        lookup is a tool result, never an exception (docs/tools.md "Errors").
        """
        tool = self._tools.get(name)
        if tool is None:
            raise UnknownTool(name)
        annotate(tool=name)
        started = time.perf_counter()
        rider = self._record_with_read(principal, name, started) if self._record_with_read is not None else None
        with sent_with_settling_read(rider):
            outcome, result = self._run(tool, principal, arguments)
        annotate(outcome=outcome)
        metrics.note_tool_outcome(name, failed=outcome != OUTCOME_OK)
        if self._on_call is not None:
            duration_ms = round((time.perf_counter() - started) * 1000, 2)
            recorded = rider is not None and rider.written
            report = ToolCallReport(
                principal=principal, tool=name, outcome=outcome, duration_ms=duration_ms, recorded_with_read=recorded
            )
            self._on_call(report)
        return result

    def _run(self, tool: Tool, principal: object, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """(outcome, CallToolResult body): admission, argument validation, the handler."""
        try:
            with self._admission(principal, tool, arguments) as call:
                admitted = replace(call, arguments=self._validated(tool, call.arguments))
                structured = tool.handler(admitted)
        except Refusal:
            # The authenticator's answer, found by the admission (a person gone): not a tool result.
            raise
        except OperatorError as error:
            return str(error.code), failure_result(error, knowledge=tool.knowledge)
        except Exception as failure:
            # The one edge of a tool call: no trace, SQL or detail reaches the client. An
            # outage of the database or Redis is `temporarily_unavailable` with retryAfterSeconds.
            unexpected = error_for_failure(
                failure, logger=logger, context=f"tool {tool.name}", message="The tool failed unexpectedly."
            )
            return str(unexpected.code), failure_result(unexpected, knowledge=tool.knowledge)
        return OUTCOME_OK, success_result(structured)

    def _validated(self, tool: Tool, arguments: dict[str, Any]) -> dict[str, Any]:
        """The arguments as handlers may rely on them: schema-valid, free of NUL, integers as `int`, defaults in.

        - NUL: PostgreSQL cannot hold it in text, SQLite can; refusing it here
          gives both databases the same answer, `invalid_arguments`.
        - Integers: JSON Schema 2020-12 counts `2.0` as an integer, so the
          schema admits it; handlers get `2`, never a float that would reach SQL
          or come back in a result.
        """
        error = best_match(self._validators[tool.name].iter_errors(arguments))
        if error is not None:
            field_name, message = _describe(error, tool.input_schema)
            raise InvalidArguments(message, field=field_name)
        for name, value in arguments.items():
            if _holds_nul(value):
                raise InvalidArguments(f"{name} must not contain the NUL character", field=name)
        integers = self._integers[tool.name]
        normalised = {
            name: int(value) if name in integers and isinstance(value, float) else value
            for name, value in arguments.items()
        }
        return {**self._defaults[tool.name], **normalised}


def _admits_integer(spec: dict[str, Any]) -> bool:
    kind = spec.get("type")
    return kind == "integer" or (isinstance(kind, list) and "integer" in kind)


def _holds_nul(value: Any) -> bool:
    # Arguments passed the schema: strings, or arrays of them, at most a level or two deep.
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, list):
        return any(_holds_nul(item) for item in value)
    if isinstance(value, dict):
        return any(_holds_nul(key) or _holds_nul(item) for key, item in value.items())
    return False


def _describe(error: ValidationError, schema: dict[str, Any]) -> tuple[str, str]:
    """(top-level argument name, readable message) for the first validation error.

    Messages are our own: jsonschema's repeat the offending value, which may be
    500 characters of a query.
    """
    # iter_errors sets all three on every error it yields; the stubs allow them unset, as on a hand-made error.
    keyword, expected, instance = (
        cast(str, error.validator),
        cast(Any, error.validator_value),
        cast(Any, error.instance),
    )
    if error.absolute_path:
        field_name = str(error.absolute_path[0])
    elif keyword == "required":
        field_name = next((name for name in expected if name not in instance), "arguments")
        return field_name, f"{field_name} is required"
    elif keyword == "additionalProperties":
        known = schema.get("properties", {})
        field_name = next((str(name) for name in instance if name not in known), "arguments")
        return field_name, f"{field_name} is not an argument of this tool"
    else:
        return "arguments", "arguments must be an object"
    described = {
        "type": lambda: f"must be of type {expected if isinstance(expected, str) else ' or '.join(expected)}",
        "maxLength": lambda: f"must be at most {expected} characters",
        "minLength": lambda: f"must be at least {expected} character{'s' if expected != 1 else ''}",
        "maximum": lambda: f"must be at most {expected}",
        "minimum": lambda: f"must be at least {expected}",
        "maxItems": lambda: f"must have at most {expected} items",
        "minItems": lambda: f"must have at least {expected} item{'s' if expected != 1 else ''}",
        "enum": lambda: "must be one of " + ", ".join(str(value) for value in expected),
        "pattern": lambda: "is not in the expected format",
        "format": lambda: f"must be a {expected}",
        "uniqueItems": lambda: "must not repeat an item",
    }.get(keyword)
    detail = described() if described else "is invalid"
    where = field_name + "".join(f"[{part}]" for part in list(error.absolute_path)[1:])
    return field_name, f"{where} {detail}"
