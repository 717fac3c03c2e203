"""The official MCP Python SDK's OAuth client provider, as the end-to-end tests set it up."""

from collections.abc import Awaitable, Callable

from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.shared.auth import OAuthClientMetadata

from examples.operator_client import MemoryTokenStorage


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
