"""The docs endpoint's tools, in `tools/list` order."""

from mcp_docs.tools import get_doc, search_docs

TOOLS = [search_docs.TOOL, get_doc.TOOL]
