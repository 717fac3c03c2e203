"""Text a stranger chose, shown to a person: no character that hides, reorders or fakes what is read.

A registered client chooses its own name, and the consent page shows it where
the person decides. Characters of the Unicode categories in `HIDDEN_CATEGORIES`
can make one name read as another: Cf holds the bidirectional controls
(U+202A to U+202E, U+2066 to U+2069, U+200E, U+200F, U+061C), the zero-width
space, joiners and the byte-order mark; Cc the controls; Co private use; Cn
unassigned code points; Zl and Zp the line and paragraph separators.
Registration refuses them in a client's name (oauth/client_names.py); a name
stored before is shown through `display_safe`, on every page, in the admin and
in the audit export. The CSV writer skips the same characters when it looks
for a formula (operator_core/csv_cells.py). Why: docs/development/decisions.md#client-names.
"""

from __future__ import annotations

import unicodedata

HIDDEN_CATEGORIES = frozenset({"Cf", "Cc", "Co", "Cn", "Zl", "Zp"})
# Shown instead of a hidden character: the person sees that something is there.
REPLACEMENT = "\ufffd"


def is_hidden(character: str) -> bool:
    """Whether `character` (one code point) is invisible, a control, or changes the direction of text."""
    return unicodedata.category(character) in HIDDEN_CATEGORIES


def first_hidden_character(text: str) -> str | None:
    """The first hidden character of `text`, or None."""
    return next((character for character in text if is_hidden(character)), None)


def code_point(character: str) -> str:
    """`character` as a reader can name it: `U+202E`."""
    return f"U+{ord(character):04X}"


def display_safe(text: str) -> str:
    """`text` with each hidden character replaced by U+FFFD, so it reads in the order it is stored, as it is."""
    if first_hidden_character(text) is None:
        return text
    return "".join(REPLACEMENT if is_hidden(character) else character for character in text)
