"""The snippet builder as it was before it was made cheaper (knowledge/search/snippets.py at 00dc9ae).

Kept as the reference its replacement must match byte for byte: the window
each recounted in full (quadratic), each word's start found by a regex scan.
Only the tests import it; `query_pattern`, which was not changed, is not copied.
"""

from __future__ import annotations

import bisect
import re

# Its constants too, so that a change of any of them in the builder shows.
SNIPPET_START = "«"
SNIPPET_STOP = "»"
SNIPPET_ELLIPSIS = "…"
SNIPPET_WORDS = 32
_LEAD_WORDS = 2
_TRIMMED_FROM = 5
_WORD_RUN = re.compile(r"\S+")


def reference_snippet(text: str, pattern: re.Pattern[str] | None) -> str:
    words = text.split()
    starts = [word.start() for word in _WORD_RUN.finditer(text)]
    matched: dict[int, str] = {}
    for place, found in _matches(text, pattern):
        matched.setdefault(bisect.bisect_right(starts, place) - 1, _stem(found))
    first = _best_start(len(words), matched)
    end = min(len(words), first + SNIPPET_WORDS)
    window = [
        _marked(word, pattern) if index in matched else word for index, word in enumerate(words[first:end], first)
    ]
    cut = " ".join(window)
    if first > 0:
        cut = f"{SNIPPET_ELLIPSIS}{cut}"
    if end < len(words):
        cut = f"{cut}{SNIPPET_ELLIPSIS}"
    return cut


def _matches(text: str, pattern: re.Pattern[str] | None) -> list[tuple[int, str]]:
    if pattern is None:
        return []
    lowered = text.lower()
    if len(lowered) != len(text):
        lowered = "".join(character.lower()[:1] for character in text)
    return [
        (match.start(), match.group())
        for match in pattern.finditer(lowered)
        if not match.start() or not (lowered[match.start() - 1].isalnum() or lowered[match.start() - 1] == "_")
    ]


def _marked(word: str, pattern: re.Pattern[str] | None) -> str:
    pieces, cursor = [], 0
    for place, found in _matches(word, pattern):
        pieces += [word[cursor:place], SNIPPET_START, word[place : place + len(found)], SNIPPET_STOP]
        cursor = place + len(found)
    return "".join(pieces) + word[cursor:]


def _best_start(total: int, matched: dict[int, str]) -> int:
    best, best_score = 0, (0, 0)
    for first in matched:
        start = max(0, min(first - _LEAD_WORDS, total - SNIPPET_WORDS))
        inside = [stem for index, stem in matched.items() if 0 <= index - start < SNIPPET_WORDS]
        score = (len(set(inside)), len(inside))
        if score > best_score:
            best, best_score = start, score
    return best


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word[:-1] if len(word) >= _TRIMMED_FROM else word
