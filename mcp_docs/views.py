"""HTTP views of mcp_docs: the documentation pages and the 404 for unknown MCP paths.

The docs MCP endpoint itself is `endpoint.docs_endpoint().as_view()` (urls.py).
"""

from django.http import Http404, HttpRequest, HttpResponse, HttpResponsePermanentRedirect
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from mcp_docs.page_html import page_html, page_links, page_url
from mcp_docs.selectors import INDEX_PAGE, docs_library
from operator_core.errors import NotFound, as_json_response

MARKDOWN_TYPE = "text/markdown"
HTML_TYPE = "text/html"


# The answer depends on Accept (HTML or Markdown): a cache must not give one to the other.
@vary_on_headers("Accept")
@require_safe
def docs_page(request: HttpRequest, page: str | None = None) -> HttpResponse:
    """`/docs/` and `/docs/<page>`: one page of `docs/` (never `docs/development/`), with the page list.

    HTML for browsers; the Markdown source, as the docs MCP endpoint serves it,
    for a client that prefers `text/markdown`. `/docs/versioning` is also the
    target of the deprecation `Link` header (RFC 9745, RFC 8594).
    """
    if page == INDEX_PAGE.removesuffix(".md"):
        return HttpResponsePermanentRedirect(page_url(INDEX_PAGE))
    try:
        document = docs_library().page(INDEX_PAGE if page is None else f"{page}.md")
    except NotFound:
        raise Http404(f"There is no documentation page {page!r}.") from None
    if request.get_preferred_type([HTML_TYPE, MARKDOWN_TYPE]) == MARKDOWN_TYPE:
        return HttpResponse(document.markdown, content_type=f"{MARKDOWN_TYPE}; charset=utf-8")
    context = {
        "title": document.title,
        "path": document.path,
        # Our own repository's Markdown, not user input: its HTML is trusted.
        "body": mark_safe(page_html(document.path)),  # noqa: S308
        "pages": page_links(),
    }
    return render(request, "mcp_docs/page.html", context)


@csrf_exempt
def unknown_mcp_path(request: HttpRequest) -> HttpResponse:
    """Any path under /api/mcp/ other than the two endpoints: 404, whatever the method.

    docs/docs-server.md#other-paths tells users so.
    """
    return as_json_response(NotFound("There is no MCP endpoint here; use /api/mcp/operator or /api/mcp/docs."))
