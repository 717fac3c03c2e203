"""The one snippet builder of both databases (knowledge/search/snippets.py), on plain text."""

from django.test import SimpleTestCase

from knowledge.search.query import ENGLISH_STOP_WORDS
from knowledge.search.snippets import SNIPPET_WORDS, query_pattern, snippet

FILLER = " ".join(f"word{number}" for number in range(60))


def cut(text: str, query: str) -> str:
    return snippet(text, query_pattern(query, ENGLISH_STOP_WORDS))


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
