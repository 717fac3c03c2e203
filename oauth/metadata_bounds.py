"""The bounds on client metadata, registered (RFC 7591) or fetched (a Client ID Metadata Document).

Without them one registration could hold tens of thousands of redirect URIs,
and every later authorization request naming that client compared against all
of them (docs/limits.md#registered-clients). Both ways in check the same
bounds, before any other rule: `register_client` (oauth/services.py) answers
a breach `invalid_client_metadata` (RFC 7591 §3.2.2), and the metadata
fetcher (oauth/cimd.py) refuses the document.

- At most 10 redirect URIs: real clients register one to three
  (tests/oauth/client_registrations.py).
- At most 2,000 characters per URI: the authorization request carries its
  redirect URI and the redirect back carries it again with the code, and a
  URI longer than this no longer fits an address browsers and proxies handle
  everywhere. Real callbacks are under 100.
- `client_name` at most 255 characters (the column that stores it); `scope` at
  most 1,000; `software_statement` (a JWT, ignored here) at most 8,000; the
  other short members of RFC 7591 §2 (`software_id`, `software_version`,
  `token_endpoint_auth_method`, `application_type`, and each item of
  `contacts`, `grant_types`, `response_types`) at most 255; any other string
  member, known or not, at most 2,000, as a URI. A language-tagged member
  (`client_name#ja`, RFC 7591 §2.2) has the bound of its member.
- At most 10 items in any other array (`grant_types`, `response_types`, `contacts`).
- At most 16 KiB for the whole metadata as compact JSON: the size the
  fetcher reads of a document (`CIMD_MAX_DOCUMENT_SIZE`).
"""

import json
from typing import Any

MAX_REDIRECT_URIS = 10
MAX_ARRAY_ITEMS = 10
MAX_URI_LENGTH = 2_000
MAX_SHORT_STRING_LENGTH = 255
MAX_METADATA_BYTES = 16 * 1024

# Members not listed (the URIs, and members this server does not know) get MAX_URI_LENGTH.
STRING_LENGTHS = {
    "client_name": MAX_SHORT_STRING_LENGTH,
    "scope": 1_000,
    "software_statement": 8_000,
    **dict.fromkeys(
        (
            "software_id",
            "software_version",
            "token_endpoint_auth_method",
            "application_type",
            "contacts",
            "grant_types",
            "response_types",
        ),
        MAX_SHORT_STRING_LENGTH,
    ),
}


class MetadataOverBound(ValueError):
    """The metadata breaks a bound; the message names the member and the bound."""


def require_metadata_within_bounds(metadata: dict[str, Any]) -> None:
    """Raise MetadataOverBound naming the first member over its bound; the members' types are not checked here."""
    size = len(json.dumps(metadata, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass"))
    if size > MAX_METADATA_BYTES:
        raise MetadataOverBound(f"client metadata may be at most {MAX_METADATA_BYTES} bytes as JSON, not {size}")
    for name, value in metadata.items():
        if isinstance(value, list):
            _require_array_within_bounds(name, value)
        elif isinstance(value, str):
            _require_string_within_bounds(name, value)


def _require_array_within_bounds(name: str, items: list[Any]) -> None:
    most = MAX_REDIRECT_URIS if name == "redirect_uris" else MAX_ARRAY_ITEMS
    if len(items) > most:
        raise MetadataOverBound(f"{name} may hold at most {most} items, not {len(items)}")
    for index, item in enumerate(items):
        if isinstance(item, str):
            _require_string_within_bounds(f"{name}[{index}]", item, member=name)


def _require_string_within_bounds(label: str, value: str, *, member: str | None = None) -> None:
    member = (member or label).partition("#")[0]
    most = STRING_LENGTHS.get(member, MAX_URI_LENGTH)
    if len(value) > most:
        raise MetadataOverBound(f"{label} may be at most {most} characters, not {len(value)}")
