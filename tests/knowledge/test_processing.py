from django.test import SimpleTestCase

from knowledge.processing import CHUNK_MAX, normalise_text, split_into_chunks

PARAGRAPH = (
    "Acme deploys twice a day through the release train. Each train takes the newest releasable build. "
    "A release captain watches every train and can stop it at any time."
)


def _long_text() -> str:
    paragraphs = []
    for number in range(30):
        heading = f"## Section {number}"
        body = " ".join(f"Sentence {number}.{i} explains one more rule of the policy in plain words." for i in range(9))
        paragraphs.extend([heading, body])
    return normalise_text("\n\n".join(paragraphs))


class NormaliseTextTests(SimpleTestCase):
    def test_unifies_newlines_collapses_spaces_and_blank_lines(self) -> None:
        text = "  Title\r\n\r\n\r\n\r\nFirst\t\t line   here  \rSecond line\n\n\n\nEnd  "

        self.assertEqual(normalise_text(text), "Title\n\nFirst line here\nSecond line\n\nEnd")

    def test_composes_unicode_to_nfc(self) -> None:
        self.assertEqual(normalise_text("cafe\u0301"), "caf\u00e9")

    def test_whitespace_only_text_becomes_empty(self) -> None:
        self.assertEqual(normalise_text(" \n\t\r\n  "), "")


class SplitIntoChunksTests(SimpleTestCase):
    def test_same_text_gives_same_chunks_every_time(self) -> None:
        text = _long_text()

        self.assertEqual(split_into_chunks(text), split_into_chunks(text))

    def test_chunks_stay_under_the_ceiling_and_never_start_or_end_with_whitespace(self) -> None:
        chunks = split_into_chunks(_long_text())

        self.assertGreater(len(chunks), 10)
        for chunk in chunks:
            self.assertLessEqual(len(chunk), CHUNK_MAX)
            self.assertEqual(chunk, chunk.strip())
            self.assertTrue(chunk)

    def test_chunks_keep_every_word_in_order(self) -> None:
        text = _long_text()

        chunks = split_into_chunks(text)

        self.assertEqual(" ".join(chunks).split(), text.split())

    def test_short_paragraphs_are_packed_and_split_only_between_paragraphs(self) -> None:
        text = "\n\n".join([PARAGRAPH] * 12)

        chunks = split_into_chunks(text)

        self.assertGreater(len(chunks), 1)
        for chunk in chunks:
            self.assertTrue(chunk.startswith("Acme deploys"))
            self.assertTrue(chunk.endswith("at any time."))

    def test_heading_stays_with_the_paragraph_it_introduces(self) -> None:
        chunks = split_into_chunks(_long_text())

        for chunk in chunks:
            self.assertFalse(chunk.endswith(("## Section 3", "## Section 4")))

    def test_long_paragraph_is_split_at_sentence_ends(self) -> None:
        paragraph = " ".join(f"This is sentence number {i} of a very long paragraph." for i in range(80))

        chunks = split_into_chunks(paragraph)

        self.assertGreater(len(chunks), 2)
        for chunk in chunks:
            self.assertTrue(chunk.endswith("paragraph."))

    def test_a_word_longer_than_the_target_is_cut(self) -> None:
        chunks = split_into_chunks("x" * 2500)

        self.assertEqual([len(chunk) for chunk in chunks], [1000, 1000, 500])

    def test_empty_text_gives_no_chunks(self) -> None:
        self.assertEqual(split_into_chunks(""), [])
