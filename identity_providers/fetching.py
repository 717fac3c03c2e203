"""Every request to an identity provider: bounded in time and in size, and failures as refusals.

Discovery, JWKS and the token request each wait at most CONNECT_TIMEOUT and
READ_TIMEOUT seconds and read at most MAX_RESPONSE_BYTES: a provider that is
down, slow or answers without end is refused with a page, never a hung worker
(docs/development/decisions.md#single-sign-on).
"""

import json
from typing import Any

import requests

from identity_providers.errors import ProviderSignInRefused, Refusal

CONNECT_TIMEOUT_SECONDS = 3.0
READ_TIMEOUT_SECONDS = 5.0
# Discovery documents and key sets of the large providers are a few kilobytes.
MAX_RESPONSE_BYTES = 256 * 1024


def timeouts() -> tuple[float, float]:
    """`requests`' (connect, read) timeouts, read when each request is made."""
    return (CONNECT_TIMEOUT_SECONDS, READ_TIMEOUT_SECONDS)


class ResponseTooLarge(requests.RequestException):
    pass


def read_bounded(response: requests.Response, *args: Any, **kwargs: Any) -> requests.Response:
    """A `requests` response hook: read the body now, refusing one past MAX_RESPONSE_BYTES.

    Hooks run before `requests` reads the body, so the whole of an endless answer never is.
    """
    body = response.raw.read(MAX_RESPONSE_BYTES + 1, decode_content=True)
    if len(body) > MAX_RESPONSE_BYTES:
        response.close()
        raise ResponseTooLarge("response larger than the limit")
    # What `Response.content` would have read, so every later reader sees the body.
    response._content = body
    response._content_consumed = True
    return response


def bounded_session() -> requests.Session:
    session = requests.Session()
    session.hooks["response"].append(read_bounded)
    return session


def fetch_json_object(url: str) -> dict[str, Any]:
    """GET `url` and return its JSON object; raise `ProviderSignInRefused` when it cannot be had or read."""
    try:
        with bounded_session() as session:
            response = session.get(url, timeout=timeouts(), stream=True, headers={"Accept": "application/json"})
            response.raise_for_status()
    except ResponseTooLarge:
        raise ProviderSignInRefused(Refusal.PROVIDER_MALFORMED) from None
    except requests.RequestException:
        raise ProviderSignInRefused(Refusal.PROVIDER_UNAVAILABLE) from None
    try:
        document = json.loads(response.content)
    except ValueError:
        raise ProviderSignInRefused(Refusal.PROVIDER_MALFORMED) from None
    if not isinstance(document, dict):
        raise ProviderSignInRefused(Refusal.PROVIDER_MALFORMED)
    return document
