"""Reads over the user documentation in `docs/`: pages, sections and ranked search.

The pages are Markdown files in the repository, not database rows, so they are
loaded once per process (per docs directory) and kept in memory. Everything here
is a pure function of the files: the same query on the same files always returns
the same list (docs/docs-server.md describes the ranking to users).
"""

import functools
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from operator_core.conf import operator_settings
from operator_core.errors import NotFound

URI_SCHEME = "docs://"
INDEX_PAGE = "index.md"
SNIPPET_CHARACTERS = 240

# BM25 parameters (the usual defaults) and how much a heading word outweighs a body word.
BM25_K1 = 1.2
BM25_B = 0.75
TITLE_WEIGHT = 3.0
# A section holding the query's words side by side ("refresh token") beats one
# that only mentions them apart, and most of all when its heading does.
BODY_PHRASE_BONUS = 0.5
TITLE_PHRASE_BONUS = 1.0

_HEADING = re.compile(r"^(#{1,3})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_WORD = re.compile(r"[a-z0-9]+")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"[`*]+")
_MARKUP = re.compile(r"[>|]+|^#+\s*", re.MULTILINE)
_TABLE_RULE = re.compile(r"^\s*\|?(?:\s*:?-+:?\s*\|)+\s*:?-*:?\s*$", re.MULTILINE)
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Section:
    """One heading (`#`, `##` or `###`) of a page and the text up to the next heading."""

    path: str
    anchor: str
    title: str
    level: int
    position: int
    markdown: str
    # Tokens of the heading and of the body, for ranking.
    title_terms: tuple[str, ...] = field(repr=False)
    body_terms: tuple[str, ...] = field(repr=False)

    @property
    def uri(self) -> str:
        return f"{URI_SCHEME}{self.path}#{self.anchor}"


@dataclass(frozen=True)
class Page:
    path: str
    title: str
    markdown: str
    sections: tuple[Section, ...]

    @property
    def uri(self) -> str:
        return f"{URI_SCHEME}{self.path}"

    def section_markdown(self, anchor: str) -> tuple[Section, str]:
        """The section named by `anchor` with its subsections (up to the next heading of its level or higher).

        Raises `NotFound` when the page has no such anchor.
        """
        for index, section in enumerate(self.sections):
            if section.anchor != anchor:
                continue
            parts = [section.markdown]
            for following in self.sections[index + 1 :]:
                if following.level <= section.level:
                    break
                parts.append(following.markdown)
            return section, "".join(parts).strip() + "\n"
        raise NotFound(f"Page {self.path} has no section {anchor!r}.", path=self.path, section=anchor)


@dataclass(frozen=True)
class SearchHit:
    path: str
    section: str
    title: str
    snippet: str
    score: float
    uri: str


@dataclass(frozen=True)
class DocsLibrary:
    """Every page of one docs directory, in listing order (index first, then by file name)."""

    pages: tuple[Page, ...]
    # Corpus statistics for BM25, computed once.
    document_frequency: dict[str, int] = field(repr=False)
    average_length: float = field(repr=False)

    def page(self, path: str) -> Page:
        """The page at `path` (e.g. `authentication.md`); raises `NotFound` when there is none.

        `docs/authentication.md` and `authentication` name the same page, since
        clients copy paths from links as often as from search results.
        """
        wanted = path.removeprefix("docs/")
        if not wanted.endswith(".md"):
            wanted += ".md"
        for page in self.pages:
            if page.path == wanted:
                return page
        raise NotFound(f"There is no documentation page {path!r}.", path=path)

    def page_by_uri(self, uri: str) -> Page | None:
        if not uri.startswith(URI_SCHEME):
            return None
        path = uri.removeprefix(URI_SCHEME)
        return next((page for page in self.pages if page.path == path), None)

    def search(self, query: str, *, limit: int) -> list[SearchHit]:
        """Sections ranked for `query`, best first, at most `limit`.

        BM25 over sections, where heading words count `TITLE_WEIGHT` times, plus a
        bonus when the query's words appear side by side. Scores are rounded to four
        places before ordering, and equal scores are ordered by (page path, section
        position), so the list is the same on every run and every machine.
        """
        terms = tokenize(query)
        if not terms:
            return []
        unique_terms = list(dict.fromkeys(terms))
        total = sum(len(page.sections) for page in self.pages)
        scored: list[tuple[float, str, int, Section]] = []
        for page in self.pages:
            for section in page.sections:
                score = self._score(section, unique_terms, total)
                if score <= 0:
                    continue
                if len(terms) > 1:
                    score *= 1 + _phrase_bonus(section, terms)
                scored.append((round(score, 4), section.path, section.position, section))
        scored.sort(key=lambda item: (-item[0], item[1], item[2]))
        return [
            SearchHit(
                path=section.path,
                section=section.anchor,
                title=section.title,
                snippet=_snippet(section, unique_terms),
                score=score,
                uri=section.uri,
            )
            for score, _, _, section in scored[:limit]
        ]

    def _score(self, section: Section, terms: list[str], total: int) -> float:
        title_counts = Counter(section.title_terms)
        body_counts = Counter(section.body_terms)
        length = len(section.body_terms) + TITLE_WEIGHT * len(section.title_terms)
        norm = BM25_K1 * (1 - BM25_B + BM25_B * length / self.average_length) if self.average_length else BM25_K1
        score = 0.0
        for term in terms:
            frequency = body_counts[term] + TITLE_WEIGHT * title_counts[term]
            if not frequency:
                continue
            holders = self.document_frequency.get(term, 0)
            idf = math.log(1 + (total - holders + 0.5) / (holders + 0.5))
            score += idf * frequency * (BM25_K1 + 1) / (frequency + norm)
        return score


def docs_library() -> DocsLibrary:
    """The library of the configured docs directory (`operator_settings().docs_dir`), loaded once."""
    return load_library(operator_settings().docs_dir)


@functools.cache
def load_library(docs_dir: str) -> DocsLibrary:
    """Read and index every `*.md` file directly in `docs_dir` (cached per directory)."""
    files = sorted(Path(docs_dir).glob("*.md"), key=lambda item: (item.name != INDEX_PAGE, item.name))
    pages = tuple(parse_page(item.name, item.read_text(encoding="utf-8")) for item in files)
    sections = [section for page in pages for section in page.sections]
    frequency: Counter[str] = Counter()
    for section in sections:
        frequency.update(set(section.title_terms) | set(section.body_terms))
    lengths = [len(section.body_terms) + TITLE_WEIGHT * len(section.title_terms) for section in sections]
    average = sum(lengths) / len(lengths) if lengths else 0.0
    return DocsLibrary(pages=pages, document_frequency=dict(frequency), average_length=average)


def parse_page(path: str, markdown: str) -> Page:
    """Split one Markdown page into sections at its `#`, `##` and `###` headings.

    Headings inside fenced code blocks are text. Anchors follow the GitHub style
    (lowercase, punctuation dropped, spaces as hyphens, `-1`, `-2` for repeats), so
    links written for the repository also name sections here. Text before the first
    heading becomes a section titled after the page.
    """
    chunks: list[tuple[int, str, list[str]]] = []
    preamble: list[str] = []
    fenced = False
    for line in markdown.splitlines(keepends=True):
        if _FENCE.match(line):
            fenced = not fenced
        heading = None if fenced else _HEADING.match(line.rstrip("\n"))
        if heading:
            chunks.append((len(heading.group(1)), heading.group(2).strip(), [line]))
        elif chunks:
            chunks[-1][2].append(line)
        else:
            preamble.append(line)

    page_title = next((title for level, title, _ in chunks if level == 1), Path(path).stem)
    if "".join(preamble).strip():
        chunks.insert(0, (1, page_title, preamble))

    sections: list[Section] = []
    used: Counter[str] = Counter()
    for position, (level, title, lines) in enumerate(chunks):
        base = slugify(title)
        anchor = base if not used[base] else f"{base}-{used[base]}"
        used[base] += 1
        body = "".join(lines[1:]) if lines and _HEADING.match(lines[0].rstrip("\n")) else "".join(lines)
        sections.append(
            Section(
                path=path,
                anchor=anchor,
                title=_plain(title),
                level=level,
                position=position,
                markdown="".join(lines),
                title_terms=tuple(tokenize(title)),
                body_terms=tuple(tokenize(body)),
            )
        )
    return Page(path=path, title=_plain(page_title), markdown=markdown, sections=tuple(sections))


def tokenize(text: str) -> list[str]:
    """Lowercase alphanumeric words, with a plain English plural `s` dropped ("tokens" -> "token")."""
    return [_singular(word) for word in _WORD.findall(text.lower())]


def slugify(title: str) -> str:
    """The GitHub-style anchor of a heading: `Refresh tokens (30 days)` -> `refresh-tokens-30-days`."""
    text = _LINK.sub(r"\1", title).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.strip().replace(" ", "-")


def _singular(word: str) -> str:
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _plain(text: str) -> str:
    text = _TABLE_RULE.sub("", _LINK.sub(r"\1", text))
    return _SPACE.sub(" ", _MARKUP.sub(" ", _EMPHASIS.sub("", text))).strip()


def _phrase_bonus(section: Section, terms: list[str]) -> float:
    if _contains_phrase(section.title_terms, terms):
        return TITLE_PHRASE_BONUS
    if _contains_phrase(section.body_terms, terms):
        return BODY_PHRASE_BONUS
    return 0.0


def _contains_phrase(words: tuple[str, ...], terms: list[str]) -> bool:
    width = len(terms)
    return any(list(words[start : start + width]) == terms for start in range(len(words) - width + 1))


def _snippet(section: Section, terms: list[str]) -> str:
    """About `SNIPPET_CHARACTERS` of the section's plain text, starting near the first query word."""
    lines = section.markdown.splitlines()
    text = _plain("\n".join(lines[1:] if lines and _HEADING.match(lines[0]) else lines))
    if len(text) <= SNIPPET_CHARACTERS:
        return text
    lowered = text.lower()
    hits = [found for term in terms if (found := _find_word(lowered, term)) >= 0]
    start = max(0, min(hits) - SNIPPET_CHARACTERS // 4) if hits else 0
    if start:
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < start + 20 else start
    end = start + SNIPPET_CHARACTERS
    if end < len(text):
        space = text.rfind(" ", start, end)
        end = space if space > start else end
    return ("…" if start else "") + text[start:end].strip() + ("…" if end < len(text) else "")


def _find_word(lowered: str, term: str) -> int:
    found = re.search(rf"\b{re.escape(term)}", lowered)
    return found.start() if found else -1
