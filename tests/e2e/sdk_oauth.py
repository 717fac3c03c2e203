"""The official MCP Python SDK's OAuth client providers, as the end-to-end tests set them up."""

import base64
import hashlib
import secrets
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
from django.conf import settings
from django.test import override_settings
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.shared.auth import OAuthClientMetadata

from examples.operator_client import MemoryTokenStorage

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"


def live_origin_settings(base: str) -> override_settings:
    """The service's canonical origin is the live server's for the test (never the Host header)."""
    issuer = f"{base}/api/auth"
    endpoint = f"{base}/api/mcp/operator"
    return override_settings(
        OPERATOR={
            **settings.OPERATOR,
            "base_url": base,
            "issuer": issuer,
            "operator_endpoint_url": endpoint,
            "deprecation_policy_url": f"{base}/docs/versioning",
        },
        OAUTH2_PROVIDER={
            **settings.OAUTH2_PROVIDER,
            "OIDC_ISS_ENDPOINT": issuer,
            "OIDC_USERINFO_ENDPOINT": f"{issuer}/oauth2/userinfo",
            "OAUTH2_PROTECTED_RESOURCE_IDENTIFIER": endpoint,
            "OAUTH2_PROTECTED_RESOURCE_AUTHORIZATION_SERVERS": [issuer],
        },
        CSRF_TRUSTED_ORIGINS=[base],
    )


def public_client_provider(
    endpoint: str,
    storage: MemoryTokenStorage,
    *,
    client_name: str,
    redirect_uri: str,
    authorize: Callable[[str], Awaitable[dict[str, str]]],
) -> OAuthClientProvider:
    """A public client (PKCE, no secret) that registers itself; `authorize` takes the authorization
    URL to the redirect's query (`code`, `state`, `iss`), as a person in a browser would."""
    redirect: dict[str, str] = {}

    async def redirect_handler(authorization_url: str) -> None:
        redirect.update(await authorize(authorization_url))

    async def callback_handler() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=redirect["code"], state=redirect.get("state"), iss=redirect.get("iss"))

    return OAuthClientProvider(
        server_url=endpoint,
        client_metadata=OAuthClientMetadata(
            client_name=client_name,
            redirect_uris=[redirect_uri],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )


class EnterpriseSignIn:
    """The enterprise side of the flow, as a client does it at its provider (an OpenID provider over HTTP).

    The person signs in (authorization code with PKCE, RFC 7636) and the client
    keeps the ID token; for each `(audience, resource)` the SDK asks about, it
    exchanges that ID token for an ID-JAG (RFC 8693 §2.1,
    draft-ietf-oauth-identity-assertion-authz-grant §4.3). The client is the
    provider's client `client_id`/`client_secret`.
    """

    def __init__(self, issuer: str, *, client_id: str, client_secret: str, scope: str) -> None:
        self.issuer = issuer
        self.auth = httpx.BasicAuth(client_id, client_secret)
        self.client_id = client_id
        self.scope = scope
        self.id_token = ""
        self.exchanges = 0

    async def sign_in(self, http: httpx.AsyncClient, metadata: dict[str, Any]) -> str:
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        redirect_uri = "http://127.0.0.1:53683/callback"
        query = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": redirect_uri,
            "scope": "openid email",
            "state": secrets.token_urlsafe(8),
            "nonce": secrets.token_urlsafe(8),
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
        answer = await http.get(f"{metadata['authorization_endpoint']}?{urlencode(query)}")
        code = parse_qs(urlsplit(answer.headers["Location"]).query)["code"][0]
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
        }
        tokens = await http.post(metadata["token_endpoint"], data=form, auth=self.auth)
        tokens.raise_for_status()
        return str(tokens.json()["id_token"])

    async def id_jag(self, audience: str, resource: str) -> str:
        """The SDK's `assertion_provider`: a fresh ID-JAG for the authorization server `audience`."""
        async with httpx.AsyncClient(timeout=30) as http:
            metadata = (await http.get(f"{self.issuer}/.well-known/openid-configuration")).json()
            if not self.id_token:
                self.id_token = await self.sign_in(http, metadata)
            form = {
                "grant_type": TOKEN_EXCHANGE,
                "requested_token_type": ID_JAG_TOKEN_TYPE,
                "subject_token": self.id_token,
                "subject_token_type": ID_TOKEN_TYPE,
                "audience": audience,
                "resource": resource,
                "scope": self.scope,
            }
            exchanged = await http.post(metadata["token_endpoint"], data=form, auth=self.auth)
            exchanged.raise_for_status()
            self.exchanges += 1
            return str(exchanged.json()["access_token"])


def identity_assertion_provider(
    endpoint: str,
    storage: MemoryTokenStorage,
    *,
    issuer: str,
    client_id: str,
    client_secret: str,
    enterprise: EnterpriseSignIn,
) -> IdentityAssertionOAuthProvider:
    """A confidential client that presents ID-JAGs from `enterprise` to the authorization server `issuer`."""
    return IdentityAssertionOAuthProvider(
        server_url=endpoint,
        storage=storage,
        client_id=client_id,
        client_secret=client_secret,
        issuer=issuer,
        assertion_provider=enterprise.id_jag,
        scope=enterprise.scope,
    )
