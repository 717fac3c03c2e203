"""Hostile tool arguments get a documented tool error, never a failure of the server.

Every answer must be HTTP 200, valid against the official schema and the tool's
own output schema (checked by `call_tool`), and carry a documented error code.
"""

import random

from django.conf import settings
from django.test import override_settings

from mcp_operator.tools import TOOLS
from operator_core.errors import ErrorCode
from tests.factories import make_membership, make_module, make_source
from tests.hostile import hostile_object
from tests.mcp_operator.base import OperatorEndpointTestCase

CALLS_PER_TOOL = 60
ARGUMENT_NAMES = [
    "organizationSlug",
    "organizationId",
    "query",
    "status",
    "kind",
    "limit",
    "cursor",
    "moduleId",
    "sourceId",
    "sourceIds",
    "startChunk",
    "maxChunks",
    "unknown",
]
EXPECTED_REFUSALS = {
    ErrorCode.INVALID_ARGUMENTS,
    ErrorCode.NOT_FOUND,
    ErrorCode.ORGANIZATION_SCOPE_MISMATCH,
    ErrorCode.INVALID_ORGANIZATION_SELECTOR,
}


@override_settings(OPERATOR={**settings.OPERATOR, "tool_calls_per_minute": 10_000})
class HostileArgumentTests(OperatorEndpointTestCase):
    def test_hostile_arguments_get_documented_errors(self) -> None:
        member = make_membership()
        make_module(organization=member.organization)
        make_source(organization=member.organization)
        rng = random.Random(20261121)
        codes: set[str | None] = set()

        for tool in TOOLS:
            for _ in range(CALLS_PER_TOOL):
                result = self.call_tool(member, tool.name, **hostile_object(rng, keys=ARGUMENT_NAMES))
                codes.add(result.error_code)

        self.assertLessEqual(codes - {None}, EXPECTED_REFUSALS)
        self.assertIn(ErrorCode.INVALID_ARGUMENTS, codes)
