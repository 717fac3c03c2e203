"""The public shape of an organization in every answer: `{id, slug, name}`.

The MCP tools (docs/tools.md) and the headless path (docs/headless.md) show an
organization the same way, so it is built here once.
"""

from organizations.models import Organization


def organization_summary(organization: Organization) -> dict[str, str]:
    """`{id, slug, name}` of one organization, the id as a string."""
    return {"id": str(organization.id), "slug": organization.slug, "name": organization.name}
