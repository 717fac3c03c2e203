"""CSV the service writes, made safe to open in a spreadsheet.

Every CSV writer of the service goes through `SafeCsvWriter`, which gives a
leading `'` to any text cell a spreadsheet would run as a formula (see
`spreadsheet_safe`), so a value a stranger chose, such as a registered
client's name, shows as text (docs/operations.md#audit-trail). Nothing else is
changed; JSON exports are not spreadsheets and keep their values as they are.
"""

from __future__ import annotations

import csv
import unicodedata
from collections.abc import Mapping, Sequence
from io import TextIOBase
from typing import Any

from operator_core.display_text import is_hidden

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
TEXT_MARKER = "'"


def spreadsheet_safe(value: Any) -> Any:
    """`value` with a leading `'` when it is text beginning with a formula character; anything else unchanged.

    "Beginning" looks past leading white space and the characters
    `operator_core.display_text` hides (controls, invisible formatting marks
    such as a zero-width space or a byte-order mark), which an import that
    trims cells would drop, and through NFKC, which reads a
    full-width `＝` as `=`. Numbers stay numbers: a negative duration is data,
    not a formula, and the `csv` module writes it from a number, never from a
    stranger's text.
    """
    if isinstance(value, str) and _begins_with_formula(value):
        return TEXT_MARKER + value
    return value


def _begins_with_formula(text: str) -> bool:
    if text.startswith(FORMULA_PREFIXES):
        return True
    for character in unicodedata.normalize("NFKC", text):
        if character.isspace() or is_hidden(character):
            continue
        return character in FORMULA_PREFIXES
    return False


class SafeCsvWriter:
    """`csv.DictWriter` with `spreadsheet_safe` applied to every cell, the header included."""

    def __init__(self, stream: TextIOBase, *, fieldnames: Sequence[str]) -> None:
        self._fieldnames = tuple(fieldnames)
        self._writer = csv.writer(stream)

    def writeheader(self) -> None:
        self._writer.writerow([spreadsheet_safe(name) for name in self._fieldnames])

    def writerow(self, row: Mapping[str, Any]) -> None:
        self._writer.writerow([spreadsheet_safe(row.get(name)) for name in self._fieldnames])
