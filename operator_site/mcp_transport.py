"""The one MCP 2026-07-28 Streamable HTTP transport, shared by both MCP endpoints.

It owns the envelope, the order of checks (product decisions §4), JSON-RPC errors,
CORS and version headers. It knows nothing of authentication or of any tool: each
endpoint hands it an `authenticate` callable, a tool registry and a resource set.

INTERFACE (fixed; implementation to follow):

    class Refusal(Exception):
        '''Raised by an authenticator to answer with `response` before any other check.'''
        def __init__(self, response: HttpResponse) -> None

    class UnknownTool(Exception)       -> JSON-RPC -32602 (raised by ToolRegistry.call_tool)
    class UnknownResource(Exception)   -> JSON-RPC -32602 (raised by Resources.read)

    class ToolSet(Protocol):        # implemented by operator_site.mcp_tools.ToolRegistry
        def list_tools(self, principal: object) -> list[dict]
        def call_tool(self, principal: object, name: str, arguments: dict) -> dict  # CallToolResult body

    class ResourceSet(Protocol):
        def list_resources(self, principal: object) -> list[dict]      # MCP Resource objects
        def read_resource(self, principal: object, uri: str) -> dict   # ReadResourceResult body

    @dataclass(frozen=True)
    class ServerInfo:
        name: str; title: str; version: str; instructions: str

    @dataclass(frozen=True)
    class McpEndpoint:
        server_info: ServerInfo
        tools: ToolSet
        resources: ResourceSet
        authenticate: Callable[[HttpRequest], object] | None = None  # principal, or raise Refusal
        def as_view(self) -> Callable[[HttpRequest], HttpResponse]   # csrf_exempt, no sessions

The principal (whatever `authenticate` returns; None without authentication) is
passed through untouched to the tool and resource sets.
"""
