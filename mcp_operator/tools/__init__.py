"""The operator endpoint's five tools, in `tools/list` order (docs/tools.md)."""

from mcp_operator.tools import fetch_knowledge, get_module, list_modules, list_sources, search_knowledge

TOOLS = [list_modules.TOOL, get_module.TOOL, list_sources.TOOL, search_knowledge.TOOL, fetch_knowledge.TOOL]
