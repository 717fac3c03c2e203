"""The public docs MCP endpoint, `/api/mcp/docs`: the shared transport over `docs/`.

Same transport as the operator endpoint (envelope, headers, errors, CORS,
version headers), with no authentication: its `authenticate` hook is the per-IP
limit, and its tools are admitted with no principal and no organization.
"""

from mcp_docs.limits import limit_calls_per_ip
from mcp_docs.resources import DocsResources
from mcp_docs.tools import TOOLS
from operator_core.conf import operator_settings
from operator_core.mcp.tools import ToolRegistry, open_admission
from operator_core.mcp.transport import CACHE_SCOPE_PUBLIC, McpEndpoint, ServerInfo

SERVER_NAME = "service-docs"
SERVER_TITLE = "Service Operator Docs"
INSTRUCTIONS = (
    "Public documentation of Service Operator, the remote MCP server at /api/mcp/operator. "
    "Call search_docs with a few words to find the relevant sections, then get_doc with the "
    "returned path (and section, for just that part) to read them. Every page is also a resource "
    "docs://<path>; index.md lists all pages. No authentication is needed here."
)


def docs_endpoint() -> McpEndpoint:
    """The endpoint, built from current settings (server version) when it is mounted.

    Its `authenticate` hook is only the per-IP limit: every caller gets the same
    public pages, so answers are marked `cacheScope: public`.
    """
    return McpEndpoint(
        server_info=ServerInfo(
            name=SERVER_NAME,
            title=SERVER_TITLE,
            version=operator_settings().server_version,
            instructions=INSTRUCTIONS,
        ),
        tools=ToolRegistry(TOOLS, admission=open_admission),
        resources=DocsResources(),
        authenticate=limit_calls_per_ip,
        cache_scope=CACHE_SCOPE_PUBLIC,
    )
