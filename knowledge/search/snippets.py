"""A search hit's snippet, cut in Python from its chunk's plain text: one builder for both databases.

Both vendors' searches return each hit's chunk text (knowledge/search/query.py).
`snippet` cuts from it the window of `SNIPPET_WORDS` words (runs between
white space) that holds the most of the query's words, then the most matches, then
the earliest, from a word or two before its first match; it marks each match
«like this» and puts `…` where the text goes on. The indexes stem (Porter on
SQLite, Snowball English on PostgreSQL) and no stemmer runs in Python, so a
word matches a query word when it starts with that word's stem as cut here
(`_stem`: a plural ending off, then the last letter of a longer word) and goes
on for at most `_ENDING` letters: "helmets" and "helmet", "policy" and
"policies", "inspect" and "inspection". Why not `ts_headline`: it cost
PostgreSQL about 0.4 ms per snippet
(docs/development/performance.md#search-snippets-one-builder-for-both-databases).
"""

from __future__ import annotations

import bisect
import re

from knowledge.search.schema import WORD

SNIPPET_START = "«"
SNIPPET_STOP = "»"
SNIPPET_ELLIPSIS = "…"
# As many words as FTS5's snippet() was asked for (32 tokens).
SNIPPET_WORDS = 32
# Words of context shown before the window's first match.
_LEAD_WORDS = 2
# Letters a matching word may add to a query word's stem ("inspec" + "tion").
_ENDING = 4
# A query word this long or longer loses its last letter to its stem ("polic" for "policy").
_TRIMMED_FROM = 5
# A word as `str.split()` cuts them: a run between white space.
_WORD_RUN = re.compile(r"\S+")


def query_pattern(query: str, stop_words: frozenset[str]) -> re.Pattern[str] | None:
    """What a snippet marks: the query's words, cut as the index cuts text, stop words dropped; None if none.

    It is matched against lower-case text, case-sensitively: Python's `re` then
    skips ahead to the stems' first letters (with IGNORECASE or a look-behind
    it tries every position, four times slower).
    """
    words = dict.fromkeys(word for word in WORD.findall(query.lower()) if word not in stop_words)
    if not words:
        return None
    stems = sorted({_stem(word) for word in words}, key=len, reverse=True)
    return re.compile(rf"(?:{'|'.join(re.escape(stem) for stem in stems)})\w{{0,{_ENDING}}}(?!\w)")


def snippet(text: str, pattern: re.Pattern[str] | None) -> str:
    """The snippet of `text` for the query's `pattern` (`query_pattern`), on one line."""
    words = text.split()
    # Where each word starts, so that a match is placed among the words by a search, not a re-split of the text.
    starts = [word.start() for word in _WORD_RUN.finditer(text)]
    # word index -> the stem it matched; one scan of the text
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
    """(where, what in lower case) of each match of `pattern` at the start of a word of `text`."""
    if pattern is None:
        return []
    lowered = text.lower()
    if len(lowered) != len(text):  # a letter whose lower case is longer ("İ"): keep the places
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


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word[:-1] if len(word) >= _TRIMMED_FROM else word


def _best_start(total: int, matched: dict[int, str]) -> int:
    """Where the window starts: most distinct query words, then most matches, then earliest."""
    best, best_score = 0, (0, 0)
    for first in matched:
        start = max(0, min(first - _LEAD_WORDS, total - SNIPPET_WORDS))
        inside = [stem for index, stem in matched.items() if 0 <= index - start < SNIPPET_WORDS]
        score = (len(set(inside)), len(inside))
        if score > best_score:
            best, best_score = start, score
    return best
