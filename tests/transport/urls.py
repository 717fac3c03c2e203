"""A URLconf mounting the shared transport over a fake tool set (transport unit tests only)."""

import json
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.urls import path

from operator_core.errors import Forbidden
from operator_core.mcp.transport import (
    CACHE_SCOPE_PUBLIC,
    McpEndpoint,
    Refusal,
    ServerInfo,
    UnknownResource,
    UnknownTool,
)

PUBLIC_PATH = "/api/mcp/fake"
PRIVATE_PATH = "/api/mcp/fake-private"
FAKE_TOKEN = "fake-token"
FAKE_PRINCIPAL = "fake-principal"
RESOURCE_URI = "mcp://fake.json"
UNPAIRED_TEXT = "half of \ud83d"
SERVER_INFO = ServerInfo(name="fake-server", title="Fake Server", version="9.9.9", instructions="Use echo.")


class FakeTools:
    """`echo` returns its arguments; `refuse` raises a service error; `explode` fails unexpectedly;
    `unpaired` returns text holding a lone surrogate, as data read from elsewhere might."""

    def list_tools(self, principal: object) -> list[dict[str, Any]]:
        return [{"name": "echo", "description": "Echo the arguments.", "inputSchema": {"type": "object"}}]

    def call_tool(self, principal: object, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if name == "refuse":
            raise Forbidden("Not allowed here.")
        if name == "explode":
            raise RuntimeError("secret detail that must not leak")
        if name == "unpaired":
            return {"content": [{"type": "text", "text": UNPAIRED_TEXT}], "structuredContent": {"text": UNPAIRED_TEXT}}
        if name != "echo":
            raise UnknownTool(name)
        structured = {"arguments": arguments, "principal": principal}
        return {"content": [{"type": "text", "text": json.dumps(structured)}], "structuredContent": structured}


class FakeResources:
    def list_resources(self, principal: object) -> list[dict[str, Any]]:
        return [{"uri": RESOURCE_URI, "name": "fake"}]

    def read_resource(self, principal: object, uri: str) -> dict[str, Any]:
        if uri != RESOURCE_URI:
            raise UnknownResource(uri)
        return {"contents": [{"uri": RESOURCE_URI, "mimeType": "application/json", "text": "{}"}]}


def fake_authenticate(request: HttpRequest) -> str:
    if request.headers.get("Authorization") != f"Bearer {FAKE_TOKEN}":
        raise Refusal(HttpResponse("refused", status=401, headers={"WWW-Authenticate": "Bearer"}))
    return FAKE_PRINCIPAL


public = McpEndpoint(
    server_info=SERVER_INFO, tools=FakeTools(), resources=FakeResources(), cache_scope=CACHE_SCOPE_PUBLIC
)
private = McpEndpoint(
    server_info=SERVER_INFO, tools=FakeTools(), resources=FakeResources(), authenticate=fake_authenticate
)

urlpatterns = [
    path(PUBLIC_PATH.lstrip("/"), public.as_view()),
    path(PRIVATE_PATH.lstrip("/"), private.as_view()),
]
