"""The bounds on client metadata, registered (RFC 7591) or fetched (a Client ID Metadata Document).

Both ways in check the same bounds, before any other rule: `register_client`
(oauth/services.py) answers a breach `invalid_client_metadata` (RFC 7591
§3.2.2), naming the member and the bound, and the metadata fetcher
(oauth/cimd.py) refuses the document. The bounds are the constants below: 10
redirect URIs, 2,000 characters per URI or unknown string member, 255 per short
member (a language-tagged one, `client_name#ja`, has its member's), 10 items
per other array, 16 KiB for the whole metadata as compact JSON
(docs/limits.md#registered-clients). Why these figures:
docs/development/decisions.md#registration.
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
