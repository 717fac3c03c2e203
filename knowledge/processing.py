"""Deterministic text normalisation and chunking (docs/development/decisions.md#processing-and-search).

Pure functions: no database, no clock, no randomness, no model. The same input
always gives the same chunks, on every machine and every database.
"""

import re
import unicodedata

CHUNK_TARGET = 1000
# Hard ceiling: a chunk only grows past the target to keep a short heading with
# the paragraph it introduces.
CHUNK_MAX = 1200
# A chunk shorter than this (typically a lone heading) absorbs the next paragraph
# whole as long as the result stays under CHUNK_MAX.
_SHORT_CHUNK = 200

_NEWLINES = re.compile(r"\r\n|\r|\u2028|\u2029|\x85")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_INLINE_SPACE = re.compile(r"[ \t\f\v\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+")
_BLANK_LINES = re.compile(r"\n{3,}")
# A sentence ends with . ! ? or … (optionally followed by a closing quote or
# bracket) and then spaces; a line break inside a paragraph is a boundary too.
_SENTENCE_BOUNDARY = re.compile(r"((?:(?<=[.!?…])|(?<=[.!?…][\"'”’)\]]))[ ]+|\n)")


def normalise_text(text: str) -> str:
    """NFC, `\\n` newlines, one space for any run of spaces or tabs, lines stripped,
    at most one blank line in a row, no leading or trailing whitespace."""
    text = unicodedata.normalize("NFC", text)
    text = _NEWLINES.sub("\n", text)
    text = _CONTROL.sub("", text)
    text = _INLINE_SPACE.sub(" ", text)
    text = "\n".join(line.strip() for line in text.split("\n"))
    text = _BLANK_LINES.sub("\n\n", text)
    return text.strip()


def split_into_chunks(text: str, *, target: int = CHUNK_TARGET) -> list[str]:
    """Split normalised `text` into chunks of about `target` characters.

    Breaks fall on paragraph boundaries where possible, then on sentence (or line)
    boundaries, then on spaces; a word longer than `target` is cut. No chunk is
    empty, starts or ends with whitespace, or exceeds `target * 1.2`. Joining the
    chunks' words gives back the text's words, in order. Empty text gives [].
    """
    maximum = max(target, target * CHUNK_MAX // CHUNK_TARGET)
    chunks: list[str] = []
    current = ""

    def flush() -> None:
        nonlocal current
        if current:
            chunks.append(current)
        current = ""

    for paragraph in (p for p in text.split("\n\n") if p.strip()):
        if current:
            combined = len(current) + 2 + len(paragraph)
            starts_section = _is_heading(paragraph) and len(current) >= target // 2
            if not starts_section and (combined <= target or (len(current) < _SHORT_CHUNK and combined <= maximum)):
                current = f"{current}\n\n{paragraph}"
                continue
            if len(paragraph) <= target or len(current) >= target // 2:
                # A heading never ends a chunk: it moves on with its paragraph.
                current, carried = _without_trailing_heading(current)
                flush()
                current = carried
                if current and len(current) + 2 + len(paragraph) <= maximum:
                    current = f"{current}\n\n{paragraph}"
                    continue
        if not current and len(paragraph) <= target:
            current = paragraph
            continue
        # A paragraph longer than the target: pack its sentences (or words).
        separator = "\n\n" if current else ""
        for piece_separator, piece in _pieces(paragraph, target):
            joiner = separator or piece_separator
            separator = ""
            if not current:
                current = piece
            elif len(current) + len(joiner) + len(piece) <= target:
                current = f"{current}{joiner}{piece}"
            else:
                flush()
                current = piece
    flush()
    return chunks


def _is_heading(paragraph: str) -> bool:
    return paragraph.startswith("#") and len(paragraph) < _SHORT_CHUNK and "\n" not in paragraph


def _without_trailing_heading(chunk: str) -> tuple[str, str]:
    """(chunk without its last paragraph, that paragraph) when the chunk ends with a heading."""
    head, separator, last = chunk.rpartition("\n\n")
    if separator and _is_heading(last):
        return head, last
    return chunk, ""


def _pieces(paragraph: str, target: int) -> list[tuple[str, str]]:
    """(separator before it, piece) pairs, each piece at most `target` characters."""
    parts = _SENTENCE_BOUNDARY.split(paragraph)
    sentences = [(parts[i - 1] if i else "", parts[i]) for i in range(0, len(parts), 2)]
    pieces: list[tuple[str, str]] = []
    for separator, sentence in sentences:
        if not sentence:
            continue
        if len(sentence) <= target:
            pieces.append((_one_space(separator), sentence))
            continue
        for position, word in enumerate(sentence.split(" ")):
            word_separator = _one_space(separator) if position == 0 else " "
            for start in range(0, len(word), target):
                pieces.append((word_separator if start == 0 else "", word[start : start + target]))
    return pieces


def _one_space(separator: str) -> str:
    return "\n" if separator == "\n" else (" " if separator else "")
