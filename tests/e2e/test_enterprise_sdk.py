"""Enterprise-managed authorization end to end with the official MCP Python SDK 2.3 (docs/authentication.md).

Real components: the live server, the test provider in its own process over
HTTP (tests/identity_providers/provider_server.py, the enterprise's OpenID
provider), and the SDK's `IdentityAssertionOAuthProvider`, a confidential
client registered here by RFC 7591 for the JWT bearer grant alone. On the
endpoint's 401 the SDK reads this authorization server's metadata, its
`assertion_provider` signs the person in at the provider and exchanges the ID
token for an ID-JAG (RFC 8693), the SDK presents it at our token endpoint, and
its `Client` lists the tools, with no browser step and no consent page here.
"""

import asyncio
import json

import httpx
import httpx2
from django.core.cache import cache
from django.test import LiveServerTestCase
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from audit.models import AuditAction, AuditEvent
from examples.operator_client import MemoryTokenStorage
from identity_providers.models import IdentityLink
from oauth.models import AccessToken
from oauth.tokens import verify_access_token
from operator_core.scopes import SCOPE_OPERATOR_READ
from organizations.models import Role
from tests.e2e.sdk_oauth import EnterpriseSignIn, identity_assertion_provider, live_origin_settings
from tests.factories import make_membership, make_organization, make_user
from tests.identity_providers.support import CLIENT_ID, CLIENT_SECRET, LiveProvider, configure_provider, provider_key
from tests.support import HTTP_CLIENT_LOGGERS, quiet_loggers

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
EXPECTED_TOOLS = ["list_modules", "get_module", "list_sources", "search_knowledge", "fetch_knowledge"]


class EnterpriseManagedSdkTests(LiveServerTestCase):
    host = "127.0.0.1"

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.live_provider = LiveProvider(cls)

    def setUp(self) -> None:
        quiet_loggers(self.addCleanup, *HTTP_CLIENT_LOGGERS)
        cache.clear()
        base = self.live_server_url
        self.issuer = f"{base}/api/auth"
        self.endpoint = f"{base}/api/mcp/operator"
        self.enterContext(live_origin_settings(base))
        self.enterContext(provider_key())
        self.organization = make_organization(slug="acme", name="Acme")
        self.bob = make_user(email="bob@acme.test")
        make_membership(role=Role.MEMBER, user=self.bob, organization=self.organization)
        provider = configure_provider(self.organization, self.live_provider.issuer)
        provider.enterprise_managed = True
        provider.save()
        IdentityLink.objects.create(user=self.bob, issuer=self.live_provider.issuer, subject="bob-1")

    def register(self) -> dict:
        """The client registers here by RFC 7591: confidential, for the JWT bearer grant alone."""
        body = {
            "client_name": "Enterprise SDK client",
            "grant_types": [JWT_BEARER],
            "token_endpoint_auth_method": "client_secret_post",
        }
        response = httpx.post(f"{self.issuer}/oauth2/register", json=body, timeout=30)
        self.assertEqual(response.status_code, 201, response.text)
        return response.json()

    async def list_tools(self, storage: MemoryTokenStorage, registered: dict, enterprise: EnterpriseSignIn) -> list:
        auth = identity_assertion_provider(
            self.endpoint,
            storage,
            issuer=self.issuer,
            client_id=registered["client_id"],
            client_secret=registered["client_secret"],
            enterprise=enterprise,
        )
        async with (
            httpx2.AsyncClient(auth=auth, timeout=30) as http,
            Client(streamable_http_client(self.endpoint, http_client=http)) as client,
        ):
            return [tool.name for tool in (await client.list_tools()).tools]

    def test_the_sdk_gets_a_token_from_an_id_jag_with_no_browser_step_and_lists_the_tools(self) -> None:
        registered = self.register()
        self.assertEqual(registered["grant_types"], [JWT_BEARER])
        # The provider's policy names our client in the ID-JAGs it issues for it.
        self.live_provider.person(sub="bob-1", email="bob@acme.test", id_jag_client_id=registered["client_id"])
        enterprise = EnterpriseSignIn(
            self.live_provider.issuer, client_id=CLIENT_ID, client_secret=CLIENT_SECRET, scope=SCOPE_OPERATOR_READ
        )
        storage = MemoryTokenStorage()

        tools = asyncio.run(self.list_tools(storage, registered, enterprise))

        self.assertEqual(tools, EXPECTED_TOOLS)
        self.assertEqual(enterprise.exchanges, 1)
        assert storage.tokens is not None
        self.assertIsNone(storage.tokens.refresh_token)
        claims = verify_access_token(storage.tokens.access_token)
        self.assertEqual((claims.user_id, claims.organization_id), (self.bob.pk, str(self.organization.pk)))
        self.assertEqual((claims.client_id, claims.scopes), (registered["client_id"], frozenset({SCOPE_OPERATOR_READ})))
        self.assertEqual(AccessToken.objects.get().granted_by.issuer, self.live_provider.issuer)
        event = AuditEvent.objects.get(action=AuditAction.ID_JAG_GRANT)
        self.assertEqual((event.outcome, event.person_id), ("ok", self.bob.pk))
        self.assertNotIn(storage.tokens.access_token, json.dumps(event.detail))
