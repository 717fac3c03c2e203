"""HTTP views of mcp_docs: the deprecation policy page and the 404 for unknown MCP paths.

The docs MCP endpoint itself is `endpoint.docs_endpoint().as_view()` (urls.py).
"""

import markdown
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_safe

from mcp_docs.selectors import docs_library
from operator_core.errors import NotFound, as_json_response

POLICY_PAGE = "versioning.md"
MARKDOWN_TYPE = "text/markdown"
HTML_TYPE = "text/html"


@require_safe
def deprecation_policy(request: HttpRequest) -> HttpResponse:
    """`docs/versioning.md`, the target of the deprecation `Link` header (RFC 9745, RFC 8594).

    HTML for browsers; the Markdown source for a client that prefers `text/markdown`.
    """
    page = docs_library().page(POLICY_PAGE)
    if request.get_preferred_type([HTML_TYPE, MARKDOWN_TYPE]) == MARKDOWN_TYPE:
        return HttpResponse(page.markdown, content_type=f"{MARKDOWN_TYPE}; charset=utf-8")
    # Our own repository file, not user input: its HTML is trusted.
    body = mark_safe(markdown.markdown(page.markdown, extensions=["tables", "fenced_code"]))  # noqa: S308
    return render(request, "mcp_docs/page.html", {"title": page.title, "body": body})


@csrf_exempt
def unknown_mcp_path(request: HttpRequest) -> HttpResponse:
    """Any path under /api/mcp/ other than the two endpoints: 404, whatever the method.

    docs/docs-server.md#other-paths tells users so.
    """
    return as_json_response(NotFound("There is no MCP endpoint here; use /api/mcp/operator or /api/mcp/docs."))
