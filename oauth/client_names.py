"""The rule on a client's name, registered (RFC 7591) or fetched (a Client ID Metadata Document).

`client_name`, and each language-tagged form of it (`client_name#ja`, RFC 7591
§2.2), is shown to the person on the consent page, so it holds no character
that `operator_core.display_text` hides: a right-to-left override or a
zero-width space lets one client pose as another. `register_client`
(oauth/services.py) answers a breach `invalid_client_metadata`, naming the
member and the character; the metadata fetcher (oauth/cimd.py) refuses the
document. Names stored before the rule are shown through `display_safe`.
"""

from typing import Any

from operator_core.display_text import code_point, first_hidden_character

CLIENT_NAME = "client_name"


class UndisplayableName(ValueError):
    """A client name holds a hidden character; the message names the member and the character."""


def require_displayable_names(metadata: dict[str, Any]) -> None:
    """Raise UndisplayableName for the first client name holding a hidden character; other members pass."""
    for member, value in metadata.items():
        if member.partition("#")[0] != CLIENT_NAME or not isinstance(value, str):
            continue
        hidden = first_hidden_character(value)
        if hidden is not None:
            raise UndisplayableName(
                f"{member} must not contain invisible, control or direction-changing characters "
                f"(it holds {code_point(hidden)})"
            )
