"""The one snippet builder of both databases (knowledge/search/snippets.py), on plain text."""

import random
from pathlib import Path

from django.test import SimpleTestCase

from knowledge.processing import normalise_text, split_into_chunks
from knowledge.search.query import ENGLISH_STOP_WORDS
from knowledge.search.snippets import SNIPPET_WORDS, query_pattern, snippet
from tests.knowledge.snippets_reference import reference_snippet

FILLER = " ".join(f"word{number}" for number in range(60))
DEMO_CONTENT = Path(__file__).resolve().parents[2] / "knowledge" / "demo" / "content"
# The queries of bench/search_quality.py's judged set.
JUDGED_QUERIES = (
    "refund", "flights", "audit logs", "declare an incident", "rollback", "password", "on-call", "personal data",
    "deploy", "canary", "incident commander", "phishing", "lockout", "warranty claim", "spill", "first aid",
    "defect", "complaint", "receipts", "protective equipment",
)  # fmt: skip
# Query words, and what a text makes of them: plural and longer forms, case, a prefix or a joined word.
STEMS = ("policy", "refund", "helmet", "inspect", "data", "go", "class", "fly", "audit", "ab")
FORMS = ("{}", "{}s", "{}ies", "{}ed", "{}ing", "{}ion", "{}ations", "{}e", "{}ss")
WRAPS = ("{}", "{}", "{}.", "({})", "anti-{}", "un{}", "_{}", "{}/{}", "«{}»", "{}_x", "{}'s")
OTHER_WORDS = ("the", "and", "of", "a", "İstanbul", "ΟΔΟΣ", "straße", "x2", "3.5", "ŉ", "-", "…")
SPACES = (" ", " ", " ", "  ", "\n", "\n\n", "\t", "\u00a0", "\u2028")


def cut(text: str, query: str) -> str:
    return snippet(text, query_pattern(query, ENGLISH_STOP_WORDS))


def generated_text(chance: random.Random) -> str:
    """Up to 120 words, of which a share (from none to most) are query words in some form."""
    share = chance.choice((0.0, 0.05, 0.2, 0.6))
    pieces = []
    for _ in range(chance.randrange(121)):
        if chance.random() < share:
            form = chance.choice(FORMS).format(chance.choice(STEMS))
            word = chance.choice(WRAPS).format(form, chance.choice(STEMS))
            word = chance.choice((word, word, word.capitalize(), word.upper()))
        else:
            word = chance.choice((*OTHER_WORDS, f"w{chance.randrange(50)}"))
        pieces += [word, chance.choice(SPACES)]
    return chance.choice(("", " ", "\n")) + "".join(pieces)


def generated_query(chance: random.Random) -> str:
    words = [chance.choice(FORMS[:3]).format(chance.choice(STEMS)) for _ in range(chance.randrange(1, 4))]
    return " ".join(words + chance.sample(["the", "and", "zeppelin", "POLICIES"], chance.randrange(2)))


class SnippetTests(SimpleTestCase):
    def test_the_query_words_and_their_plural_and_longer_forms_are_marked_in_the_texts_case(self) -> None:
        text = "Our Refund policies: a refunded order, a policy exception, helmets and one helmet."

        self.assertEqual(
            cut(text, "refunds policy helmet"),
            "Our «Refund» «policies»: a «refunded» order, a «policy» exception, «helmets» and one «helmet».",
        )

    def test_a_stop_word_or_a_word_inside_another_is_not_marked(self) -> None:
        self.assertEqual(
            cut("The lanolin, unlanolin and the rest.", "the lanolin"), "The «lanolin», unlanolin and the rest."
        )

    def test_the_window_holds_the_most_query_words_and_says_where_text_was_cut(self) -> None:
        text = f"forklift once. {FILLER} forklift drivers wear helmets. {FILLER}"

        found = cut(text, "forklift helmets")

        self.assertTrue(found.startswith("…word58 word59 «forklift» drivers wear «helmets».") and found.endswith("…"))
        self.assertEqual(len(found.strip("…").split()), SNIPPET_WORDS)

    def test_a_text_without_a_match_gives_its_beginning_on_one_line(self) -> None:
        self.assertEqual(cut("First line\n\nsecond   line", "zeppelin"), "First line second line")
        self.assertEqual(cut("Only stop words here", "the and"), "Only stop words here")


class SnippetSameAsBeforeTests(SimpleTestCase):
    """The cheaper builder cuts the same snippets, byte for byte, as the one before it (snippets_reference.py)."""

    def assert_same_snippets(self, cases: list[tuple[str, str]]) -> None:
        for text, query in cases:
            pattern = query_pattern(query, ENGLISH_STOP_WORDS)
            with self.subTest(text=text, query=query):
                self.assertEqual(snippet(text, pattern), reference_snippet(text, pattern))

    def test_generated_texts_and_queries_get_the_same_window_and_marks_as_before(self) -> None:
        chance = random.Random(37)

        self.assert_same_snippets([(generated_text(chance), generated_query(chance)) for _ in range(3000)])

    def test_every_demo_chunk_gets_the_same_snippet_as_before_for_each_judged_query(self) -> None:
        chunks = [
            chunk
            for path in sorted(DEMO_CONTENT.rglob("*.md"))
            for chunk in split_into_chunks(normalise_text(path.read_text(encoding="utf-8")))
        ]

        self.assertGreater(len(chunks), 100)
        self.assert_same_snippets([(chunk, query) for chunk in chunks for query in JUDGED_QUERIES])
