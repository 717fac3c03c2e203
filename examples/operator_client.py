"""Connect to Service Operator with the official MCP Python SDK (2.3): sign in, list and call tools.

Usage, with `make run` serving:

    .venv/bin/python examples/operator_client.py
    .venv/bin/python examples/operator_client.py --url https://operator.example.com/api/mcp/operator --query "safety"

The endpoint is `--url`, else `$OPERATOR_BASE_URL/api/mcp/operator`, else
`http://$HOST:$PORT/api/mcp/operator` (the variables `make run` reads; HOST
defaults to 127.0.0.1), else `http://127.0.0.1:8000/api/mcp/operator`. When no
server answers there, the script says so in one line and exits with status 1.

What happens:

1. The SDK POSTs `server/discover`; the server answers 401 with a `WWW-Authenticate`
   challenge naming its protected-resource metadata.
2. The SDK's OAuth provider reads that metadata and the authorization server's, registers
   this script as a public client (dynamic client registration) and builds an authorization
   URL with PKCE (S256).
3. This script prints the URL and opens it in your browser (not with `--no-browser`), and
   listens on a loopback port for the redirect. Sign in (the demo data has bob@acme.test /
   operator-demo), choose an organization if asked, and press Allow.
4. The SDK exchanges the code for tokens, retries, and the script lists the tools, calls
   `list_modules` and `search_knowledge`, and reads the server card.

Tokens are kept in memory only; run it again and you sign in again.

It stops with one line and status 1, no traceback, when the URL is not the one the
server serves (`localhost` for `127.0.0.1`: the line gives the URL to use), and when
the sign-in is refused (a person who is admin or member of no organization follows
the 403 page's "Return to" link, and the line gives the server's reason).
"""

from __future__ import annotations

import argparse
import asyncio
import html
import json
import os
import re
import threading
import urllib.error
import urllib.request
import webbrowser
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp.shared.auth_utils import check_resource_allowed, resource_url_from_server_url

DEFAULT_URL = "http://127.0.0.1:8000/api/mcp/operator"
ENDPOINT_PATH = "/api/mcp/operator"
SIGN_IN_TIMEOUT_SECONDS = 300
PROBE_TIMEOUT_SECONDS = 10
RESOURCE_METADATA = re.compile(r'resource_metadata="([^"]+)"')


def endpoint_url(url: str | None, environ: Mapping[str, str]) -> str:
    """The operator endpoint to use: `--url`, then OPERATOR_BASE_URL, then HOST and PORT, then the default."""
    if url:
        return url
    if environ.get("OPERATOR_BASE_URL"):
        return environ["OPERATOR_BASE_URL"].rstrip("/") + ENDPOINT_PATH
    if environ.get("PORT"):
        return f"http://{environ.get('HOST') or '127.0.0.1'}:{environ['PORT']}{ENDPOINT_PATH}"
    return DEFAULT_URL


def require_server(url: str) -> None:
    """Exit with one line unless an HTTP server answers at `url` (any status: 401 is the usual answer)."""
    probe = urllib.request.Request(url, data=b"{}", method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(probe, timeout=PROBE_TIMEOUT_SECONDS):
            return
    except urllib.error.HTTPError as answer:
        if answer.code == 404:
            raise SystemExit(f"{url} answers, but there is no MCP endpoint there: check the path.") from None
        if answer.code == 401:
            require_same_resource(url, answer.headers.get("WWW-Authenticate", ""))
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        reason = getattr(reason, "strerror", None) or reason
        raise SystemExit(f"No server answers at {url} ({reason}). Start it with `make run`, or pass --url.") from None


def require_same_resource(url: str, challenge: str) -> None:
    """Exit with one line when the server names another URL than `url` as its protected resource.

    The SDK refuses such a server before sign-in (RFC 8707, RFC 9728 §3.3), with a traceback;
    `localhost` for `127.0.0.1` is the usual cause (docs/troubleshooting.md#localhost-and-127001).
    """
    metadata_url = RESOURCE_METADATA.search(challenge)
    if not metadata_url:
        return  # the SDK discovers the metadata itself, and says what it finds
    try:
        with urllib.request.urlopen(metadata_url.group(1), timeout=PROBE_TIMEOUT_SECONDS) as answer:
            resource = json.load(answer).get("resource", "")
    except (OSError, ValueError):
        return  # unreadable metadata: the SDK's own discovery reports it
    if resource and not check_resource_allowed(
        requested_resource=resource_url_from_server_url(url), configured_resource=resource
    ):
        raise SystemExit(f"{url} is not the URL this server serves, {resource}: run again with --url {resource}")


class MemoryTokenStorage:
    """The SDK's TokenStorage protocol, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class SignInStopped(BaseException):
    """Sign-in ended without a code: the server answered with an error (RFC 6749 §4.1.2.1), or nobody signed in.

    A BaseException, as KeyboardInterrupt is: the SDK logs every Exception of its OAuth flow
    with a traceback. Not a SystemExit either, which asyncio re-raises out of its event loop.
    """


def refusal_line(params: Mapping[str, str]) -> str:
    """One line for an error redirect: the error code and, when given, the server's reason."""
    reason = params.get("error_description")
    return f"Sign-in refused ({params['error']})" + (f": {reason}" if reason else ".")


class LoopbackListener:
    """A one-shot HTTP listener on 127.0.0.1 that receives the authorization redirect (RFC 8252 §7.3)."""

    def __init__(self) -> None:
        self.params: dict[str, str] = {}
        self.received = threading.Event()
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                query = parse_qs(urlsplit(self.path).query)
                if "code" not in query and "error" not in query:
                    self.send_response(404)
                    self.end_headers()
                    return
                listener.params = {key: values[0] for key, values in query.items()}
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.end_headers()
                if "error" in listener.params:
                    page = f"<p>{html.escape(refusal_line(listener.params))}</p>"
                else:
                    page = "<p>Signed in. You can close this tab and return to the terminal.</p>"
                self.wfile.write(page.encode())
                listener.received.set()

            def log_message(self, format: str, *args: object) -> None:
                pass  # keep the code out of the terminal

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.redirect_uri = f"http://127.0.0.1:{self.server.server_port}/callback"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    async def wait(self) -> AuthorizationCodeResult:
        if not await asyncio.to_thread(self.received.wait, SIGN_IN_TIMEOUT_SECONDS):
            raise SignInStopped("No sign-in within five minutes; run the script again.")
        if "error" in self.params:
            raise SignInStopped(refusal_line(self.params))
        return AuthorizationCodeResult(
            code=self.params["code"], state=self.params.get("state"), iss=self.params.get("iss")
        )

    def close(self) -> None:
        self.server.shutdown()


def browser_opener(*, open_browser: bool):
    """The SDK's redirect handler: print the authorization URL, and open it unless told not to."""

    async def redirect_handler(authorization_url: str) -> None:
        print("Open this URL to sign in" + (" (trying your browser now):" if open_browser else ":") + "\n")
        print(f"  {authorization_url}\n", flush=True)
        if open_browser:
            webbrowser.open(authorization_url)

    return redirect_handler


async def main(url: str, query: str, *, open_browser: bool = True) -> None:
    listener = LoopbackListener()
    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="Service Operator example client",
            redirect_uris=[listener.redirect_uri],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=MemoryTokenStorage(),
        redirect_handler=browser_opener(open_browser=open_browser),
        callback_handler=listener.wait,
    )
    try:
        async with (
            httpx2.AsyncClient(auth=provider, timeout=60) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            server = client.server_info
            print(f"Connected to {server.title if server else url} (protocol {client.protocol_version})\n")

            tools = (await client.list_tools()).tools
            print(f"{len(tools)} tools:")
            for tool in tools:
                print(f"  - {tool.name}: {tool.description.splitlines()[0] if tool.description else ''}")

            modules = (await client.call_tool("list_modules", {"limit": 5})).structured_content or {}
            organization = modules.get("organization", {})
            print(f"\nOrganization: {organization.get('name')} ({organization.get('slug')})")
            for module in modules.get("modules", []):
                print(f"  module: {module['title']} [{module['status']}]")

            search = (await client.call_tool("search_knowledge", {"query": query, "limit": 3})).structured_content
            print(f"\nsearch_knowledge {query!r}:")
            print(json.dumps(search, indent=2, ensure_ascii=False))

            card = await client.read_resource("mcp://server-card.json")
            print(f"\nServer card: {json.loads(card.contents[0].text)['name']}")
    finally:
        listener.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--url",
        help=f"operator endpoint URL (default: from OPERATOR_BASE_URL, or HOST and PORT, else {DEFAULT_URL})",
    )
    parser.add_argument("--query", default="safety training", help="what to search for")
    parser.add_argument("--no-browser", action="store_true", help="print the sign-in URL without opening it")
    arguments = parser.parse_args()
    endpoint = endpoint_url(arguments.url, os.environ)
    require_server(endpoint)
    try:
        asyncio.run(main(endpoint, arguments.query, open_browser=not arguments.no_browser))
    except* SignInStopped as stopped:  # the SDK's task groups wrap it
        raise SystemExit(str(stopped.exceptions[0])) from None
