"""End to end with the official MCP TypeScript SDK (`@modelcontextprotocol/client`, pinned in
tests/e2e/typescript/package-lock.json) against a live server, run by Node.js.

tests/e2e/typescript/operator_client.mjs runs the SDK's OAuth flow from the 401
challenge (discovery, dynamic registration, PKCE, a loopback redirect listener)
with `versionNegotiation` pinned to 2026-07-28, then calls every tool, reads the
server card and lists resource templates. This test plays the browser: the real
sign-in and consent pages, then the redirect to the script's listener. CI runs
`npm ci` in that folder first and requires Node.js (OPERATOR_REQUIRE_REAL_SERVICES).
"""

import json
import subprocess
import threading
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
from django.test import LiveServerTestCase

from organizations.models import Role
from tests.e2e.browser_flow import post_forms_until_redirect
from tests.factories import PASSWORD, make_membership, make_module, make_organization, make_source, make_user
from tests.flows.support import live_base_url_settings
from tests.support import require_node

CLIENT_DIR = Path(__file__).resolve().parent / "typescript"
EXPECTED_TOOLS = ["list_modules", "get_module", "list_sources", "search_knowledge", "fetch_knowledge"]
TIMEOUT_SECONDS = 120


class TypeScriptSdkTests(LiveServerTestCase):
    host = "127.0.0.1"

    def setUp(self) -> None:
        self.node = require_node(CLIENT_DIR)
        self.enterContext(live_base_url_settings(self.live_server_url))
        self.endpoint = f"{self.live_server_url}/api/mcp/operator"
        organization = make_organization(slug="acme", name="Acme")
        make_membership(role=Role.MEMBER, user=make_user(email="bob@acme.test"), organization=organization)
        self.module = make_module(organization=organization, title="Forklift safety")
        self.source = make_source(
            organization=organization,
            title="Warehouse handbook",
            text="Forklift drivers complete safety training before their first shift.\n\n"
            "Inspections happen every morning.",
        )

    def run_client(self) -> dict:
        arguments = {
            "list_modules": {},
            "get_module": {"moduleId": str(self.module.id)},
            "list_sources": {},
            "search_knowledge": {"query": "forklift training"},
            "fetch_knowledge": {"sourceId": str(self.source.id)},
        }
        process = subprocess.Popen(
            [self.node, str(CLIENT_DIR / "operator_client.mjs"), self.endpoint, json.dumps(arguments)],
            cwd=CLIENT_DIR,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.addCleanup(process.kill)
        timer = threading.Timer(TIMEOUT_SECONDS, process.kill)
        timer.start()
        self.addCleanup(timer.cancel)

        first = process.stdout.readline()
        if not first:
            self.fail(f"the client stopped before sign-in: {process.stderr.read()}")
        authorize = json.loads(first)
        self.assertEqual(authorize["event"], "authorize")
        redirect_uri = parse_qs(urlsplit(authorize["url"]).query)["redirect_uri"][0]
        with httpx.Client(timeout=30) as browser:
            answer = post_forms_until_redirect(
                browser, authorize["url"], redirect_uri=redirect_uri, email="bob@acme.test", password=PASSWORD
            )
            browser.get(f"{redirect_uri}?{urlencode(answer)}")
        output, errors = process.communicate(timeout=TIMEOUT_SECONDS)
        self.assertEqual(process.returncode, 0, errors)
        (result,) = [json.loads(line) for line in output.splitlines()]
        self.assertEqual(result["event"], "result")
        return result

    def test_sdk_signs_in_with_oauth_and_calls_every_tool(self) -> None:
        result = self.run_client()

        self.assertEqual(result["protocolVersion"], "2026-07-28")
        self.assertEqual(result["serverInfo"]["name"], "service-operator")
        self.assertEqual(result["tools"], EXPECTED_TOOLS)
        self.assertEqual(list(result["calls"]), EXPECTED_TOOLS)
        for name, call in result["calls"].items():
            self.assertFalse(call["isError"], name)
            self.assertEqual(call["structuredContent"]["organization"]["slug"], "acme", name)
        self.assertEqual(result["calls"]["get_module"]["structuredContent"]["module"]["title"], "Forklift safety")
        self.assertIsNone(result["calls"]["list_modules"]["structuredContent"]["nextCursor"])
        search = result["calls"]["search_knowledge"]["structuredContent"]
        self.assertEqual(search["results"][0]["sourceId"], str(self.source.id))
        self.assertEqual(result["serverCard"]["tools"][0]["name"], "list_modules")
        self.assertEqual(result["resourceTemplates"], [])
        self.assertIsNotNone(result["registeredClientId"])
        self.assertIn("mcp:operator.read", result["scope"].split())
