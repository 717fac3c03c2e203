"""End to end: the official MCP Python SDK client against a live server, no authentication."""

import asyncio
from typing import Any

import httpx2
from django.core.cache import cache
from django.test import LiveServerTestCase
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from operator_core.errors import ErrorCode


class DocsSdkClientTests(LiveServerTestCase):
    host = "127.0.0.1"

    def setUp(self) -> None:
        # A fresh per-IP count: the live server and the test share this cache.
        cache.clear()

    def run_client(self, scenario: Any, *, mode: str = "2026-07-28") -> Any:
        async def main() -> Any:
            async with Client(f"{self.live_server_url}/api/mcp/docs", mode=mode) as client:
                return await scenario(client)

        return asyncio.run(main())

    def test_sdk_client_searches_then_reads_the_section_found(self) -> None:
        async def scenario(client: Client) -> tuple[Any, Any]:
            found = await client.call_tool("search_docs", {"query": "deprecation sunset header"})
            best = found.structured_content["results"][0]
            page = await client.call_tool("get_doc", {"path": best["path"], "section": best["section"]})
            return found, page

        found, page = self.run_client(scenario)

        self.assertFalse(found.is_error)
        best = found.structured_content["results"][0]
        self.assertFalse(page.is_error)
        self.assertEqual(page.structured_content["path"], best["path"])
        self.assertEqual(page.structured_content["section"], best["section"])
        self.assertTrue(page.structured_content["markdown"].startswith("#"))

    def test_sdk_client_in_auto_mode_discovers_the_docs_server_and_its_tools(self) -> None:
        async def scenario(client: Client) -> tuple[str, list[str]]:
            tools = await client.list_tools()
            return client.server_info.name, [tool.name for tool in tools.tools]

        # "auto" (the SDK default) probes server/discover first, as docs/docs-server.md shows.
        self.assertEqual(self.run_client(scenario, mode="auto"), ("service-docs", ["search_docs", "get_doc"]))

    def test_sdk_client_reads_a_page_resource(self) -> None:
        async def scenario(client: Client) -> Any:
            return await client.read_resource("docs://versioning.md")

        result = self.run_client(scenario)

        self.assertTrue(result.contents[0].text.startswith("# Versioning and deprecation policy"))

    def test_sdk_client_sees_not_found_for_a_missing_page(self) -> None:
        async def scenario(client: Client) -> Any:
            return await client.call_tool("get_doc", {"path": "nope.md"})

        result = self.run_client(scenario)

        self.assertTrue(result.is_error)
        self.assertEqual(result.structured_content["error"]["code"], ErrorCode.NOT_FOUND)

    def test_sdk_client_over_its_own_http_client_connects(self) -> None:
        """The shape docs/connecting.md shows for sending a bearer token (ignored here)."""

        async def main() -> list[str]:
            http = httpx2.AsyncClient(headers={"Authorization": "Bearer not-needed-here"})
            async with Client(
                streamable_http_client(f"{self.live_server_url}/api/mcp/docs", http_client=http)
            ) as client:
                tools = await client.list_tools()
            await http.aclose()
            return [tool.name for tool in tools.tools]

        self.assertEqual(asyncio.run(main()), ["search_docs", "get_doc"])
