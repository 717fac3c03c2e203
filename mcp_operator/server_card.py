"""The operator server's public self-description: server card, `/.well-known/mcp`, MCP resource.

One card (valid against `$defs/ServerCard` of the server-card schema) is served
three ways with the same JSON text: `/.well-known/mcp/server-card.json`, and the
MCP resource `mcp://server-card.json` through `resources/read`
(docs/transport.md#discovery-documents).
Beyond the schema's fields it carries `authentication`, `tools` and
`instructions` (docs/development/decisions.md#server-card). Nothing here is per-person.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

from mcp_operator.tools import TOOLS
from operator_core.conf import operator_settings
from operator_core.mcp.revisions import served_revisions, served_versions
from operator_core.mcp.transport import UnknownResource
from operator_core.scopes import SCOPE_OPERATOR_READ, SCOPE_OPERATOR_WRITE

SERVER_NAME = "service-operator"
SERVER_TITLE = "Service Operator"
SERVER_CARD_URI = "mcp://server-card.json"
SERVER_CARD_SCHEMA = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
SERVER_CARD_PATH = "/.well-known/mcp/server-card.json"
DOCS_ENDPOINT_PATH = "/api/mcp/docs"
JSON_MIME_TYPE = "application/json"

DESCRIPTION = "Read-only access to your organization's modules and processed knowledge sources."
INSTRUCTIONS = (
    "Service Operator gives read access to one organization's learning modules and processed "
    "knowledge sources: the organization bound to your access token. Use list_modules and "
    "get_module to browse modules; list_sources, search_knowledge and fetch_knowledge to find "
    "and read source text. Every tool is a deterministic read. Omit organizationSlug and "
    "organizationId to work in the token's organization; naming another organization fails "
    "with organization_scope_mismatch. Re-read tools/list on every connection."
)


def card_namespace(base_url: str) -> str:
    """The reverse-DNS namespace of the card's `name`, from the service's host.

    `operator.example.com` gives `com.example.operator`; a host without a dot
    (localhost, testserver) or an IP address is kept as it is.
    """
    host = urlsplit(base_url).hostname or "localhost"
    labels = host.split(".")
    if len(labels) > 1 and not all(label.isdigit() for label in labels):
        labels.reverse()
    return re.sub(r"[^a-zA-Z0-9.-]", "-", ".".join(labels))


def server_card() -> dict[str, Any]:
    """The server card (schema `$defs/ServerCard` plus authentication, tools, instructions)."""
    conf = operator_settings()
    return {
        "$schema": SERVER_CARD_SCHEMA,
        "name": f"{card_namespace(conf.base_url)}/{SERVER_NAME}",
        "title": SERVER_TITLE,
        "description": DESCRIPTION,
        "version": conf.server_version,
        "websiteUrl": conf.base_url,
        "remotes": [
            {
                "type": "streamable-http",
                "url": conf.operator_endpoint_url,
                "supportedProtocolVersions": served_versions(),
                "headers": [
                    {
                        "name": "Authorization",
                        "description": "Bearer access token from the OAuth 2.1 flow (authorization code with PKCE)",
                        "isRequired": True,
                        "isSecret": True,
                    }
                ],
            }
        ],
        "authentication": {
            "type": "oauth2.1",
            "required": True,
            "resourceMetadataUrl": conf.resource_metadata_url,
            "authorizationServers": [conf.issuer],
            "scopes": [SCOPE_OPERATOR_READ, SCOPE_OPERATOR_WRITE],
            "recommendedScopes": [SCOPE_OPERATOR_READ],
        },
        "tools": [{"name": tool.name, "title": tool.title, "description": tool.description} for tool in TOOLS],
        "instructions": INSTRUCTIONS,
    }


def server_card_text() -> str:
    """The card as the exact JSON text every channel serves."""
    return json.dumps(server_card(), ensure_ascii=False, indent=2)


def well_known_mcp() -> dict[str, Any]:
    """`/.well-known/mcp`: served revisions in `mcp.protocolVersions` and the endpoints (docs/versioning.md)."""
    conf = operator_settings()
    return {
        "mcp": {
            "protocolVersions": served_versions(),
            "revisions": [
                {
                    "version": revision.version,
                    "deprecatedAt": revision.deprecated_at.isoformat() if revision.deprecated_at else None,
                    "sunsetAt": revision.sunset_at.isoformat() if revision.sunset_at else None,
                }
                for revision in served_revisions()
            ],
            "deprecationPolicy": conf.deprecation_policy_url,
            "serverCard": f"{conf.base_url}{SERVER_CARD_PATH}",
            "endpoints": [
                {
                    "name": SERVER_NAME,
                    "url": conf.operator_endpoint_url,
                    "transport": "streamable-http",
                    "authentication": "oauth2.1",
                    "resourceMetadata": conf.resource_metadata_url,
                },
                {
                    "url": f"{conf.base_url}{DOCS_ENDPOINT_PATH}",
                    "transport": "streamable-http",
                    "authentication": "none",
                },
            ],
        }
    }


class ServerCardResources:
    """The operator endpoint's resource set: exactly `mcp://server-card.json` (docs/transport.md#methods)."""

    def list_resources(self, principal: object) -> list[dict[str, Any]]:
        return [
            {
                "uri": SERVER_CARD_URI,
                "name": "server-card",
                "title": "Server card",
                "description": "Server metadata: authentication, tools and instructions.",
                "mimeType": JSON_MIME_TYPE,
            }
        ]

    def read_resource(self, principal: object, uri: str) -> dict[str, Any]:
        """The card as a text resource; any other URI raises `UnknownResource`."""
        if uri != SERVER_CARD_URI:
            raise UnknownResource(uri)
        return {"contents": [{"uri": SERVER_CARD_URI, "mimeType": JSON_MIME_TYPE, "text": server_card_text()}]}
