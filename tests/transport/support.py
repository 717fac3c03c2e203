"""The transport tests' base: the shared MCP transport over the fake tool set of tests/transport/urls.py."""

import base64

from django.test import SimpleTestCase, override_settings

from tests.mcp_requests import post_mcp
from tests.support import validate_against_mcp_schema
from tests.transport.urls import PUBLIC_PATH


def b64(value: str) -> str:
    return f"=?base64?{base64.b64encode(value.encode()).decode()}?="


@override_settings(ROOT_URLCONF="tests.transport.urls")
class TransportTestCase(SimpleTestCase):
    def post(self, message, **kwargs):
        return post_mcp(self.client, message, path=kwargs.pop("path", PUBLIC_PATH), **kwargs)

    def assert_error(self, response, *, status: int, code: int, definition: str = "JSONRPCErrorResponse") -> dict:
        self.assertEqual(response.status_code, status)
        self.assertEqual(response["Content-Type"], "application/json")
        payload = response.json()
        validate_against_mcp_schema(payload, definition)
        self.assertEqual(payload["error"]["code"], code)
        return payload
