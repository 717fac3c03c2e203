"""search_knowledge tool calls to a running server, for bench/search_knowledge.py --http.

Imported after django.setup(): the caller configures Django first.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable
from urllib.parse import urlsplit

from django.contrib.auth import get_user_model

from oauth.tokens import issue_access_token
from operator_core.scopes import SCOPE_OPERATOR_READ
from organizations.models import Membership, Organization, Role
from organizations.services import add_membership

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "search-bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def http_search(base_url: str, organization: Organization) -> Callable[..., list]:
    """search_knowledge through a running server's operator endpoint, as a member of `organization`.

    The server must share this process's database, signing key and OPERATOR_BASE_URL (the token's audience),
    with OPERATOR_TOOL_CALLS_PER_MINUTE raised above the benchmark's rate."""
    user, _ = get_user_model().objects.get_or_create(
        username="bench-search@example.test", defaults={"email": "bench-search@example.test"}
    )
    if not Membership.objects.filter(user=user, organization=organization).exists():
        add_membership(user=user, organization=organization, role=Role.MEMBER)
    token = issue_access_token(
        user_id=user.pk,
        organization_id=str(organization.pk),
        client_id="bench",
        scopes=[SCOPE_OPERATOR_READ],
        expires_in=7200,
    )
    address = urlsplit(base_url)
    server = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {token}",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "search_knowledge",
    }

    def search(*, query: str) -> list:
        params = {"name": "search_knowledge", "arguments": {"query": query}, "_meta": META}
        server.request(
            "POST",
            f"{address.path.rstrip('/')}/api/mcp/operator",
            body=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}),
            headers=headers,
        )
        answer = json.loads(server.getresponse().read())
        result = answer.get("result") or {}
        if "structuredContent" not in result or result.get("isError"):
            raise SystemExit(f"search_knowledge over HTTP failed: {answer}")
        return result["structuredContent"]["results"]

    return search
