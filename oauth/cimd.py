"""Why a Client ID Metadata Document could not be used, in words for the person at the browser.

`ExplainingMetadataFetcher` (the `CIMD_METADATA_FETCHER`) wraps DOT's
SSRF-hardened `SafeMetadataFetcher`, runs DOT's post-fetch metadata rules and
our registration bounds (oauth/metadata_bounds.py) and name rule
(oauth/client_names.py) on the document, and keeps
the reason for a failure in the cache for as long as DOT's backoff lasts, so
`cimd_failure_message` can name it on the error page
(docs/authentication.md#client-id-metadata-documents). Every way of not
reaching the document reads the same, so the page is no probe of the server's
network. Why: docs/development/decisions.md#registration.
"""

import hashlib
from enum import StrEnum
from typing import Any

from django.core.cache import cache
from oauth2_provider.cimd import CIMDError, SafeMetadataFetcher, is_cimd_client_id
from oauth2_provider.cimd import _build_application_kwargs as build_application_kwargs
from oauth2_provider.settings import oauth2_settings

from oauth.client_names import UndisplayableName, require_displayable_names
from oauth.metadata_bounds import MetadataOverBound, require_metadata_within_bounds

FAILURE_CACHE_PREFIX = "oauth.cimd-failure:"


class CimdFailure(StrEnum):
    """The reasons a person is told, as the sentence the error page shows."""

    NOT_HTTPS = "a client ID that is an address must use https"
    BAD_ADDRESS = "the address cannot be a client ID (it needs a host and a path, and no user name or fragment)"
    UNREACHABLE = "it could not be fetched (it must be on a public https address that answers within 5 seconds)"
    NOT_JSON = "the address did not answer with a JSON object served as application/json"
    TOO_LARGE = "the document is larger than the {max_kilobytes} KB this server reads"
    MISMATCH = "the document's client_id is not the address it was fetched from"
    CONFIDENTIAL = "the document holds a client secret or an authentication method other than none"
    NO_REDIRECT_URIS = "the document lists no redirect_uris"
    GRANT_TYPES = "the document's grant_types must be authorization_code, and refresh_token if wanted"
    OVER_BOUND = (
        "the document is over a limit this server sets on client metadata "
        "(at most 10 redirect_uris, 2,000 characters per URI, 255 for client_name)"
    )
    HIDDEN_CHARACTERS = (
        "the document's client_name holds an invisible, control or direction-changing character, "
        "which could make it read as another application's name"
    )
    INVALID = "the document is not valid client metadata (see the redirect URI and public client rules)"


# DOT 3.4's CIMDError messages (oauth2_provider/cimd.py), by the words that tell them apart.
_DOT_MESSAGES = (
    ("must use the https scheme", CimdFailure.NOT_HTTPS),
    ("client_id URL must contain", CimdFailure.BAD_ADDRESS),
    ("client_id URL must not contain", CimdFailure.BAD_ADDRESS),
    ("client_id URL has an invalid port", CimdFailure.BAD_ADDRESS),
    ("could not resolve", CimdFailure.UNREACHABLE),
    ("did not resolve", CimdFailure.UNREACHABLE),
    ("non-public address", CimdFailure.UNREACHABLE),
    ("could not fetch", CimdFailure.UNREACHABLE),
    ("returned HTTP", CimdFailure.UNREACHABLE),
    ("is not JSON", CimdFailure.NOT_JSON),
    ("is not valid JSON", CimdFailure.NOT_JSON),
    ("must be a JSON object", CimdFailure.NOT_JSON),
    ("exceeds the maximum allowed size", CimdFailure.TOO_LARGE),
    ("does not match the client_id URL", CimdFailure.MISMATCH),
    ("CIMD clients must be public", CimdFailure.CONFIDENTIAL),
    ("must not include client_secret", CimdFailure.CONFIDENTIAL),
    ("redirect_uris must be a non-empty array", CimdFailure.NO_REDIRECT_URIS),
    ("grant_types must be an array", CimdFailure.GRANT_TYPES),
    ("non-refresh grant type", CimdFailure.GRANT_TYPES),
    ("unsupported grant_type", CimdFailure.GRANT_TYPES),
)


def failure_for(error: CIMDError) -> CimdFailure:
    """The reason a DOT `CIMDError` stands for; `INVALID` for anything not listed."""
    text = str(error)
    return next((failure for words, failure in _DOT_MESSAGES if words in text), CimdFailure.INVALID)


class ExplainingMetadataFetcher:
    """DOT's fetcher, remembering why a fetch failed; a drop-in `CIMD_METADATA_FETCHER`.

    Returns `(metadata, max_age_seconds)` or raises `CIMDError`, as DOT expects.
    `fetcher_class` does the network part (tests put a local one there).
    """

    fetcher_class: type = SafeMetadataFetcher

    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        try:
            metadata, max_age = self.fetcher_class().fetch(client_id)
        except CIMDError as error:
            record_cimd_failure(client_id, failure=failure_for(error))
            raise
        # DOT refuses these too, right after the fetch; refused here first so the page can say why.
        if metadata.get("client_id") != client_id:
            record_cimd_failure(client_id, failure=CimdFailure.MISMATCH)
            raise CIMDError("document client_id does not match the client_id URL")
        # The bounds of a registration hold for a document too: DOT does not check them.
        try:
            require_metadata_within_bounds(metadata)
        except MetadataOverBound as over:
            record_cimd_failure(client_id, failure=CimdFailure.OVER_BOUND)
            raise CIMDError(str(over)) from None
        # Its name is shown on the consent page, as a registered client's is (oauth/client_names.py).
        try:
            require_displayable_names(metadata)
        except UndisplayableName as undisplayable:
            record_cimd_failure(client_id, failure=CimdFailure.HIDDEN_CHARACTERS)
            raise CIMDError(str(undisplayable)) from None
        try:
            build_application_kwargs(metadata)
        except CIMDError as error:
            record_cimd_failure(client_id, failure=failure_for(error))
            raise
        return metadata, max_age


def _cache_key(client_id: str) -> str:
    # the id is client-controlled and up to 255 characters: hashed to fit any cache backend
    return FAILURE_CACHE_PREFIX + hashlib.sha256(client_id.encode("utf-8")).hexdigest()


def record_cimd_failure(client_id: str, *, failure: CimdFailure) -> None:
    """Remember why `client_id` failed, for as long as DOT waits before fetching it again."""
    cache.set(_cache_key(client_id), failure.name, oauth2_settings.CIMD_FAILURE_BACKOFF_SECONDS)


def cimd_failure(client_id: str) -> CimdFailure | None:
    """Why the document at `client_id` could not be used; None for a client ID that is no document address.

    An `http://` address is never fetched (DOT only treats `https://` ids as
    documents), so it is named as such. An https address without a remembered
    reason failed after the fetch, while DOT checked the metadata.
    """
    if client_id[:7].lower() == "http://":
        return CimdFailure.NOT_HTTPS
    if is_cimd_client_id(client_id):
        return CimdFailure.__members__.get(cache.get(_cache_key(client_id)), CimdFailure.INVALID)
    return None


def cimd_failure_message(client_id: str) -> str | None:
    """The error page's sentence for a client ID that is a document address; None for any other client ID."""
    failure = cimd_failure(client_id)
    if failure is None:
        return None
    reason = failure.value.format(max_kilobytes=oauth2_settings.CIMD_MAX_DOCUMENT_SIZE // 1024)
    return (
        f"This application's client ID, {client_id}, is the address of its metadata document, "
        f"and that document could not be used: {reason}."
    )
