"""What each popular host sent a live server on 2026-11-24, kept as fixtures.

Registration bodies (RFC 7591), first MCP requests, and the Client ID
Metadata Document Claude Code signs in with, captured from Claude Code
2.1.331, Codex CLI 0.169.0, Gemini CLI 0.61.0, OpenCode 1.18.33 and
mcp-remote 0.15.1 (the `mcp-remote` proxy, run with `--protocol auto`).
tests/hosts/test_legacy_hosts.py replays them; tests/e2e/test_hosts.py runs the
real hosts.

`CapturedDocumentFetcher` is the one stand-in: a `CIMD_METADATA_FETCHER` that
answers Claude Code's document address with the captured document, because
tests cannot reach claude.ai, and fetches every other address for real.
"""

from typing import Any

from oauth2_provider.cimd import SafeMetadataFetcher

from oauth.cimd import ExplainingMetadataFetcher

CLAUDE_CODE_CLIENT_ID = "https://claude.ai/oauth/claude-code-client-metadata"
# Served at CLAUDE_CODE_CLIENT_ID; its loopback redirect URIs carry no port, the request's any.
CLAUDE_CODE_METADATA_DOCUMENT: dict[str, Any] = {
    "client_id": CLAUDE_CODE_CLIENT_ID,
    "client_name": "Claude Code",
    "client_uri": "https://claude.ai",
    "redirect_uris": ["http://localhost/callback", "http://127.0.0.1/callback"],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
}
# Claude Code 2.1.331's authorization request (`claude mcp login`), but for PKCE and state.
CLAUDE_CODE_AUTHORIZATION = {
    "response_type": "code",
    "client_id": CLAUDE_CODE_CLIENT_ID,
    "redirect_uri": "http://localhost:49522/callback",
    "scope": "mcp:operator.read mcp:operator.write offline_access",
    "prompt": "consent",
}
CLAUDE_CODE_META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {
        "name": "claude-code",
        "title": "Claude Code",
        "version": "2.1.331",
        "description": "Anthropic's agentic coding tool",
        "websiteUrl": "https://claude.com/claude-code",
    },
    "io.modelcontextprotocol/clientCapabilities": {
        "roots": {"listChanged": True},
        "elicitation": {"form": {}, "url": {}},
    },
}
CLAUDE_CODE_FIRST_REQUESTS = [
    {
        "jsonrpc": "2.0",
        "id": "server-discover-probe-1",
        "method": "server/discover",
        "params": {"_meta": CLAUDE_CODE_META},
    },
    {"method": "tools/list", "params": {"_meta": CLAUDE_CODE_META}, "jsonrpc": "2.0", "id": 0},
]

CODEX_REGISTRATION = {
    "client_name": "Codex",
    "redirect_uris": ["http://127.0.0.1:42703/callback"],
    "grant_types": ["authorization_code", "refresh_token"],
    "token_endpoint_auth_method": "none",
    "response_types": ["code"],
    "scope": "mcp:operator.read offline_access",
    "application_type": "native",
}
# Codex with its feature `mcp_2026_07_28` switched on.
CODEX_META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "codex-mcp-client", "version": "0.169.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
OPENCODE_REGISTRATION = {
    "redirect_uris": ["http://127.0.0.1:19876/mcp/oauth/callback"],
    "client_name": "OpenCode",
    "client_uri": "https://opencode.ai",
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
    "scope": "mcp:operator.read offline_access",
}
GEMINI_REGISTRATION = {
    "client_name": "Gemini CLI MCP Client",
    "redirect_uris": ["http://localhost:33181/oauth/callback"],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
    "scope": "email mcp:operator.read mcp:operator.write offline_access openid profile",
}
# The mcp-remote proxy; its loopback port is derived from the server URL.
MCP_REMOTE_REGISTRATION = {
    "redirect_uris": ["http://localhost:16149/oauth/callback"],
    "token_endpoint_auth_method": "none",
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "client_name": "MCP CLI Proxy",
    "client_uri": "https://github.com/modelcontextprotocol/mcp-cli",
    "software_id": "2e6dc280-f3c3-4e01-99a7-8181dbd1d23d",
    "software_version": "0.15.1",
    "scope": "mcp:operator.read offline_access",
    "application_type": "native",
}
# mcp-remote --protocol auto probes with server/discover, then discovers for the host it serves.
MCP_REMOTE_FIRST_REQUESTS = [
    {
        "jsonrpc": "2.0",
        "id": "server-discover-probe-1",
        "method": "server/discover",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "mcp-remote-fallback-test", "version": "0.0.0"},
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
    },
    {
        "jsonrpc": "2.0",
        "id": "mcp-remote-discover-1",
        "method": "server/discover",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {
                    "name": "mcp-test-client (via mcp-remote 0.15.1)",
                    "version": "0.0.1",
                },
            }
        },
    },
]

HOST_REGISTRATIONS = {
    "codex": CODEX_REGISTRATION,
    "opencode": OPENCODE_REGISTRATION,
    "gemini-cli": GEMINI_REGISTRATION,
    "mcp-remote": MCP_REMOTE_REGISTRATION,
}

# host: (its first request's revision, clientInfo.name, the section of docs/connecting.md)
LEGACY_FIRST_REQUESTS = {
    "codex": ("2025-06-18", "codex-mcp-client", "codex"),
    "opencode": ("2025-11-25", "opencode", "opencode"),
    "gemini-cli": ("2025-06-18", "gemini-cli-mcp-client", "gemini-cli"),
    "mcp-remote without --protocol auto": ("2025-06-18", "mcp-remote", "mcp-remote"),
    # mcp-remote 0.15.1 names its first initialize so; the revision stands in for the one it sent.
    "mcp-remote 0.15.1 without --protocol auto": ("2025-06-18", "mcp-remote-fallback-test", "mcp-remote"),
    # Claude Code before 2.1.331 (2.1.197 sent initialize); the revision stands in for the one it sent.
    "claude-code before 2.1.331": ("2025-11-25", "claude-code", "claude-code"),
    "an unknown client": ("2025-03-26", "some-new-host", "protocol-revision"),
}

CAPTURED_DOCUMENTS = {CLAUDE_CODE_CLIENT_ID: CLAUDE_CODE_METADATA_DOCUMENT}


class _CapturedOrNetwork(SafeMetadataFetcher):
    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        document = CAPTURED_DOCUMENTS.get(client_id)
        if document is None:
            return super().fetch(client_id)
        return dict(document), 3600


class CapturedDocumentFetcher(ExplainingMetadataFetcher):
    """The project's fetcher and checks, except that the captured documents' addresses answer from the fixtures."""

    fetcher_class = _CapturedOrNetwork
