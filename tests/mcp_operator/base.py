"""Calling operator tools through the real endpoint, as an MCP client would.

`OperatorEndpointTestCase.call_tool` mints a real access token for a membership,
POSTs a `tools/call` through the test client, the transport, bearer
authentication and admission, validates the response against
`CallToolResultResponse` of the MCP schema and the structured content against
the tool's own `outputSchema`, and returns a `ToolResult`.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import jsonschema
from django.test import TestCase

from knowledge.models import Module, Source
from mcp_operator.tools import TOOLS
from organizations.models import Membership
from tests.factories import token_for
from tests.mcp_requests import CLIENT_META, envelope, post_mcp
from tests.support import validate_against_mcp_schema

# The multi-process limit test imports the envelope's `_meta` under this name.
META = CLIENT_META


def _output_validator(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    # Checked and built once: re-checking the schema on every call is what makes jsonschema.validate slow.
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


OUTPUT_VALIDATORS = {tool.name: _output_validator(tool.output_schema) for tool in TOOLS}
KNOWLEDGE_TOOLS = {tool.name for tool in TOOLS if tool.knowledge}
_request_ids = itertools.count(1)


@dataclass(frozen=True)
class ToolResult:
    """One `tools/call` answer: the CallToolResult and its error code, if any."""

    name: str
    result: dict[str, Any]

    @property
    def structured(self) -> dict[str, Any]:
        return self.result["structuredContent"]

    @property
    def text(self) -> str:
        (item,) = self.result["content"]
        return item["text"]

    @property
    def error(self) -> dict[str, Any] | None:
        if self.name in KNOWLEDGE_TOOLS:
            return None if self.structured.get("success") else self.structured["error"]
        return self.structured["error"] if self.result.get("isError") else None

    @property
    def error_code(self) -> str | None:
        return self.error["code"] if self.error else None


class OperatorEndpointTestCase(TestCase):
    def post_tool_call(self, token: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """POST one tools/call and return the JSON-RPC response body (asserted 200)."""
        message = envelope("tools/call", {"name": name, "arguments": arguments}, request_id=next(_request_ids))
        response = post_mcp(self.client, message, token=token)
        self.assertEqual(response.status_code, 200, response.content)
        return response.json()

    def call_tool(self, membership: Membership, name: str, **arguments: Any) -> ToolResult:
        """Call `name` as `membership`'s person with a token bound to its organization."""
        return self.call_tool_with_token(token_for(membership), name, **arguments)

    def call_tool_with_token(self, token: str, name: str, **arguments: Any) -> ToolResult:
        payload = self.post_tool_call(token, name, arguments)
        validate_against_mcp_schema(payload, "CallToolResultResponse")
        result = ToolResult(name=name, result=payload["result"])
        if result.error is None or name in KNOWLEDGE_TOOLS:
            OUTPUT_VALIDATORS[name].validate(result.structured)
        if not result.result.get("isError"):
            # the one text item repeats structuredContent (isError results carry a sentence instead)
            self.assertEqual(json.loads(result.text), result.structured)
        return result


def set_module_updated_at(module: Module, moment: datetime) -> Module:
    """Pin `updated_at` (auto_now on every save) so that an ordering test is deterministic."""
    Module.objects.filter(pk=module.pk).update(updated_at=moment)
    module.refresh_from_db()
    return module


def set_source_processed_at(source: Source, moment: datetime) -> Source:
    Source.objects.filter(pk=source.pk).update(processed_at=moment)
    source.refresh_from_db()
    return source
