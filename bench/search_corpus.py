"""A deterministic knowledge corpus for the search benchmark (bench/search_knowledge.py).

English-like prose: sentences of stop words and pseudo-words drawn from a
Zipf-Mandelbrot distribution, so a few words are in a third of all chunks and
most are rare, as in real text. Pseudo-words end in b, k, m or p, which no
English stemmer touches, so PostgreSQL and SQLite index the same terms.

The corpus is a pure function of (seed, chunks): 100 organizations, the first
("big") holding 30% of the chunks in sources of about 6 chunks (50,000 sources
at 1 M chunks), the other 99 sharing the rest in sources of about 20 chunks.
Every document has its own random generator, seeded by its position, so any
document can be rebuilt alone (the query mix draws its phrases that way).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from dataclasses import dataclass

from knowledge.processing import normalise_text, split_into_chunks

ORGANIZATIONS = 100
BIG_SHARE = 0.3
BIG_SOURCE_CHUNKS = (1, 10)  # inclusive bounds of the chunks a big-organization source aims at
SMALL_SOURCE_CHUNKS = (5, 35)
VOCABULARY = 40_000
STOP_SHARE = 0.42  # of running words, roughly English
# Zipf-Mandelbrot: weight of rank r is 1 / (r + Q) ** S.
S, Q = 1.0, 2.7
_WORDS_PER_SENTENCE = (6, 18)
_SENTENCES_PER_PARAGRAPH = (2, 6)
_CHARACTERS_PER_CHUNK = 900  # what a chunk of about 1,000 characters holds once packed

_STOP_WORDS = (  # noqa: SIM905 - word lists read better as text
    "the of and to a in is it that for on was with as be by at this are or from an have not but they which "
    "you were all we there been has their if more when will would who so no what can its about into than "
    "them only other some then these two may could our out any over such each most after before between "
    "through should where both very how here while same once further under again"
).split()
_ONSETS = "b d f g h j k l m n p r s t v w z br dr fr gr kl pl st tr".split()  # noqa: SIM905
_VOWELS = ("a", "e", "i", "o", "u")
_CODAS = ("b", "k", "m", "p")


@dataclass(frozen=True)
class Document:
    organization: int
    number: int
    title: str
    origin: str
    text: str
    chunks: int


def pseudo_words(count: int) -> list[str]:
    """`count` distinct pseudo-words, shortest first (common words are short, as in English)."""
    syllables = [onset + vowel for onset in _ONSETS for vowel in _VOWELS]
    words: list[str] = []
    for length in itertools.count(1):
        for parts in itertools.product(syllables, repeat=length):
            for coda in _CODAS:
                words.append("".join(parts) + coda)
                if len(words) == count:
                    return words
    raise AssertionError("unreachable")


class Corpus:
    """The documents of one corpus, organization by organization, each built on demand."""

    def __init__(self, *, seed: int, chunks: int) -> None:
        self.seed = seed
        self.chunks = chunks
        words = pseudo_words(VOCABULARY)
        # Which pseudo-word gets which rank depends on the seed; short words stay the common ones.
        shuffler = random.Random(f"{seed}:vocabulary")
        for start, stop in ((0, 200), (200, VOCABULARY)):
            part = words[start:stop]
            shuffler.shuffle(part)
            words[start:stop] = part
        self.content_words = words
        stop_weights = [1 / (rank + Q) ** S for rank in range(1, len(_STOP_WORDS) + 1)]
        content_weights = [1 / (rank + Q) ** S for rank in range(1, VOCABULARY + 1)]
        stop_total, content_total = sum(stop_weights), sum(content_weights)
        self._words = [*_STOP_WORDS, *self.content_words]
        weights = [w * STOP_SHARE / stop_total for w in stop_weights]
        weights += [w * (1 - STOP_SHARE) / content_total for w in content_weights]
        self._cumulative = list(itertools.accumulate(weights))
        self._word_probability = dict(zip(self._words, weights, strict=True))

    def quota(self, organization: int) -> int:
        """Chunks the organization holds (the big one is organization 0)."""
        big = round(self.chunks * BIG_SHARE)
        if organization == 0:
            return big
        rest = self.chunks - big
        return rest // (ORGANIZATIONS - 1) + (1 if organization <= rest % (ORGANIZATIONS - 1) else 0)

    def documents(self, organization: int) -> Iterator[Document]:
        """The organization's documents, until their chunks reach its quota."""
        remaining = self.quota(organization)
        for number in itertools.count():
            if remaining <= 0:
                return
            document = self.document(organization, number, most=remaining)
            remaining -= document.chunks
            yield document

    def document(self, organization: int, number: int, *, most: int) -> Document:
        """Document `number` of the organization, aiming at no more than `most` chunks."""
        rng = random.Random(f"{self.seed}:{organization}:{number}")
        low, high = BIG_SOURCE_CHUNKS if organization == 0 else SMALL_SOURCE_CHUNKS
        target = min(rng.randint(low, high), most) * _CHARACTERS_PER_CHUNK
        title_words = rng.choices(self.content_words[:2000], k=rng.randint(2, 5))
        title = " ".join(title_words).capitalize()
        paragraphs: list[str] = []
        size = 0
        while size < target:
            paragraph = self._paragraph(rng)
            if rng.random() < 0.1:
                paragraph = f"## {' '.join(rng.choices(self.content_words[:5000], k=3)).capitalize()}\n\n{paragraph}"
            paragraphs.append(paragraph)
            size += len(paragraph) + 2
        text = normalise_text("\n\n".join(paragraphs))
        return Document(
            organization=organization,
            number=number,
            title=title,
            origin=f"org{organization}/doc-{number:06d}.md",
            text=text,
            chunks=len(split_into_chunks(text)),
        )

    def _paragraph(self, rng: random.Random) -> str:
        sentences = []
        for _ in range(rng.randint(*_SENTENCES_PER_PARAGRAPH)):
            words = rng.choices(self._words, cum_weights=self._cumulative, k=rng.randint(*_WORDS_PER_SENTENCE))
            sentences.append(" ".join(words).capitalize() + ".")
        return " ".join(sentences)

    def chunk_share(self, word: str) -> float:
        """Expected share of chunks (of about 150 words) that contain `word`."""
        probability = self._word_probability.get(word, 0.0)
        return 1 - (1 - probability) ** 150

    def words_in_band(self, low: float, high: float) -> list[str]:
        """Content words whose expected chunk share lies in [low, high), most common first."""
        return [word for word in self.content_words if low <= self.chunk_share(word) < high]
