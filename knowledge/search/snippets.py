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
    # word index -> the stem it matched; one scan of the text
    matched: dict[int, str] = {}
    index, counted_to = -1, 0  # the last match's word, and where that match starts
    for place, found in _matches(text, pattern):
        # A match's word: the runs between white space that start up to its first letter, counted from the
        # last match on (a match never starts on white space, so that stretch's first run is counted already).
        index += len(text[counted_to : place + 1].split()) - (index >= 0)
        counted_to = place
        matched.setdefault(index, _stem(found))
    first = _best_start(len(words), matched)
    end = min(len(words), first + SNIPPET_WORDS)
    window = words[first:end]
    for index in matched:
        if first <= index < end:
            window[index - first] = _marked(words[index], pattern)
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
    found = []
    for match in pattern.finditer(lowered):
        place = match.start()
        if place:
            before = lowered[place - 1]
            if before.isalnum() or before == "_":
                continue
        found.append((place, match.group()))
    return found


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
    """Where the window starts: most distinct query words, then most matches, then earliest.

    Each match proposes a window from a word or two before it. The proposals
    come in word order, so one pass slides the window's two edges forward,
    counting the stems inside: linear in the matches, where recounting every
    window was quadratic.
    """
    places = list(matched)  # in word order: the scan of the text found them so
    best, best_score = 0, (0, 0)
    inside: dict[str, int] = {}  # stem -> matches of it in the window
    low = high = 0  # places[low:high] are the matches inside the window
    for first in places:
        start = max(0, min(first - _LEAD_WORDS, total - SNIPPET_WORDS))
        while high < len(places) and places[high] < start + SNIPPET_WORDS:
            stem = matched[places[high]]
            inside[stem] = inside.get(stem, 0) + 1
            high += 1
        while places[low] < start:
            stem = matched[places[low]]
            inside[stem] -= 1
            if not inside[stem]:
                del inside[stem]
            low += 1
        score = (len(inside), high - low)
        if score > best_score:
            best, best_score = start, score
    return best
