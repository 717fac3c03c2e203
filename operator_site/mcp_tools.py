"""Typed MCP tools and the registry that lists and calls them (both endpoints).

INTERFACE (fixed; implementation to follow):

    READ_ONLY_ANNOTATIONS = {"readOnlyHint": True, "idempotentHint": True,
                             "destructiveHint": False, "openWorldHint": False}

    @dataclass(frozen=True)
    class ToolCall:
        principal: object                 # from the endpoint's authenticator (None on docs)
        organization: Organization | None # resolved by the admission hook (operator only)
        arguments: dict                   # validated against the tool's input schema

    @dataclass(frozen=True)
    class Tool:
        name: str
        title: str
        description: str
        input_schema: dict                # JSON Schema 2020-12, additionalProperties: false
        output_schema: dict
        handler: Callable[[ToolCall], dict]   # returns structuredContent; raises OperatorError
        knowledge: bool = False           # failures as {success: false, error} instead of isError
        annotations: dict = READ_ONLY_ANNOTATIONS

    Admission = Callable[[object, Tool, dict], ContextManager[ToolCall]]
        # runs before the handler, e.g. role re-check, organization selectors and
        # rate/concurrency limits on the operator endpoint; raises OperatorError to refuse

    class ToolRegistry:                   # satisfies mcp_transport.ToolSet
        def __init__(self, tools: list[Tool], *, admission: Admission) -> None
        def list_tools(self, principal) -> list[dict]     # same list, same order, every time
        def call_tool(self, principal, name, arguments) -> dict
            # unknown name -> raise mcp_transport.UnknownTool
            # arguments invalid against input_schema -> InvalidArguments(field=...) as a tool error
            # success -> {"content": [{"type": "text", "text": <json>}], "structuredContent": ...}
            # OperatorError -> errors.as_tool_result(error, knowledge=tool.knowledge)
            # any other exception -> logged with logger.exception, internal_error tool result
"""
