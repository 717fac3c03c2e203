"""HTTP entry points of the operator server: the MCP endpoint and its public discovery documents.

The endpoint object is built once per process, on first use (it needs the tool
list, and settings may change under tests: `operator_endpoint` is cleared on
`setting_changed`). Everything else happens in the shared transport.
"""

from __future__ import annotations

import functools
import json

from django.core.signals import setting_changed
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_safe

from mcp_operator.admission import admit_operator_call
from mcp_operator.audit_trail import operator_call_record, record_operator_call
from mcp_operator.auth import authenticate_operator_request, confirm_operator_access
from mcp_operator.server_card import (
    INSTRUCTIONS,
    SERVER_NAME,
    SERVER_TITLE,
    ServerCardResources,
    server_card_text,
    well_known_mcp,
)
from mcp_operator.tools import TOOLS
from operator_core.conf import operator_settings
from operator_core.mcp.tools import ToolRegistry
from operator_core.mcp.transport import McpEndpoint, ServerInfo

JSON_CONTENT_TYPE = "application/json"
# Public and the same for everyone; short so a deploy or a deprecation shows up soon.
DISCOVERY_CACHE_CONTROL = "public, max-age=300"


@functools.cache
def operator_endpoint() -> McpEndpoint:
    """The `/api/mcp/operator` endpoint: bearer authentication, the five tools (each call audited), the server card."""
    return McpEndpoint(
        server_info=ServerInfo(
            name=SERVER_NAME,
            title=SERVER_TITLE,
            version=operator_settings().server_version,
            instructions=INSTRUCTIONS,
        ),
        tools=ToolRegistry(
            TOOLS, admission=admit_operator_call, on_call=record_operator_call, record_with_read=operator_call_record
        ),
        resources=ServerCardResources(),
        authenticate=authenticate_operator_request,
        confirm=confirm_operator_access,
    )


# weak=False: nothing else holds the lambda, and a weak receiver would vanish at once
setting_changed.connect(lambda **_: operator_endpoint.cache_clear(), weak=False)


@csrf_exempt
def operator_mcp(request: HttpRequest) -> HttpResponse:
    """`/api/mcp/operator`; CSRF-exempt like every `as_view()`: bearer tokens only, cookies never count."""
    return operator_endpoint().handle(request)


@require_safe
def well_known_mcp_view(request: HttpRequest) -> HttpResponse:
    body = json.dumps(well_known_mcp(), ensure_ascii=False, indent=2)
    return HttpResponse(body, content_type=JSON_CONTENT_TYPE, headers={"Cache-Control": DISCOVERY_CACHE_CONTROL})


@require_safe
def server_card_view(request: HttpRequest) -> HttpResponse:
    return HttpResponse(
        server_card_text(), content_type=JSON_CONTENT_TYPE, headers={"Cache-Control": DISCOVERY_CACHE_CONTROL}
    )
