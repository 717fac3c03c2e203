from django.db import connection
from django.test import TestCase

from knowledge.models import SourceKind
from knowledge.selectors import search_chunks
from knowledge.services import import_text_source, mark_source_failed, register_source
from tests.factories import make_organization, make_source

FILLER = (
    "Employees keep their workspace tidy and follow the instructions posted at each station. "
    "Questions go to the team leader, who answers them during the shift. "
)
PRESS_TEXT = (
    "## Presses\n\n" + FILLER * 6 + "\n\n## Lockout\n\n"
    "Before reaching into a hydraulic press, apply your personal padlock to every isolation point, "
    "bleed the hydraulic pressure and lower the ram onto the die blocks. Lockout protects the technician."
    "\n\n## Canteen\n\n" + FILLER * 6
)


class SearchChunksTests(TestCase):
    def setUp(self) -> None:
        self.organization = make_organization()
        self.press = make_source(organization=self.organization, title="Safety manual", text=PRESS_TEXT)
        self.expenses = make_source(
            organization=self.organization,
            title="Expense policy",
            text="Submit each expense claim with a receipt within thirty days. The padlock budget is separate.",
        )

    def test_the_relevant_chunk_ranks_first(self) -> None:
        hits = search_chunks(self.organization, query="padlock hydraulic press")

        self.assertEqual(hits[0].source_id, str(self.press.id))
        self.assertIn("padlock", hits[0].snippet.lower().replace("«", "").replace("»", ""))
        lockout_index = next(c.index for c in self.press.chunks.all() if "padlock" in c.text)
        self.assertEqual(hits[0].chunk_index, lockout_index)
        self.assertEqual(hits[0].source_title, "Safety manual")
        self.assertGreater(hits[0].score, 0)

    def test_the_same_query_returns_the_same_list_twice(self) -> None:
        first = search_chunks(self.organization, query="padlock")

        self.assertEqual(search_chunks(self.organization, query="padlock"), first)
        self.assertEqual(len(first), 2)

    def test_scores_descend_and_ties_follow_source_id_then_chunk_index(self) -> None:
        hits = search_chunks(self.organization, query="team leader", limit=50)

        keys = [(-hit.score, hit.source_id, hit.chunk_index) for hit in hits]
        self.assertEqual(keys, sorted(keys))
        self.assertEqual([round(hit.score, 6) for hit in hits], [hit.score for hit in hits])

    def test_stemming_matches_other_forms_of_a_word(self) -> None:
        hits = search_chunks(self.organization, query="claims")

        self.assertEqual([hit.source_id for hit in hits], [str(self.expenses.id)])

    def test_other_organizations_chunks_never_appear(self) -> None:
        make_source(title="Foreign", text="The padlock rules of another company.")

        hits = search_chunks(self.organization, query="padlock", limit=50)

        self.assertEqual({hit.source_id for hit in hits}, {str(self.press.id), str(self.expenses.id)})

    def test_pending_and_failed_sources_never_appear(self) -> None:
        register_source(organization=self.organization, title="Pending", kind=SourceKind.TEXT, text="quasarwing")
        failed = make_source(organization=self.organization, title="Later failed", text="quasarwing")
        mark_source_failed(failed)

        self.assertEqual(search_chunks(self.organization, query="quasarwing"), [])

    def test_source_ids_narrow_the_search(self) -> None:
        hits = search_chunks(self.organization, query="padlock", source_ids=[str(self.expenses.id), "not-a-uuid"])

        self.assertEqual([hit.source_id for hit in hits], [str(self.expenses.id)])

    def test_only_malformed_source_ids_match_nothing(self) -> None:
        self.assertEqual(search_chunks(self.organization, query="padlock", source_ids=["nope"]), [])

    def test_limit_caps_the_results(self) -> None:
        self.assertEqual(len(search_chunks(self.organization, query="padlock", limit=1)), 1)

    def test_search_syntax_in_user_input_is_never_an_error(self) -> None:
        for query in ('"padlock', "padlock AND OR NOT", "pad* ^lock", "(padlock) NEAR/2 -", "col:padlock", "'; --"):
            with self.subTest(query=query):
                hits = search_chunks(self.organization, query=query)
                self.assertIsInstance(hits, list)

    def test_query_without_searchable_words_returns_nothing(self) -> None:
        for query in ("", "   ", "?!", "the of and"):
            with self.subTest(query=query):
                self.assertEqual(search_chunks(self.organization, query=query), [])

    def test_reprocessed_text_replaces_the_indexed_text(self) -> None:
        import_text_source(organization=self.organization, title="Memo", origin="memo.md", text="Old wording: zebra.")

        import_text_source(organization=self.organization, title="Memo", origin="memo.md", text="New wording: giraffe.")

        self.assertEqual(search_chunks(self.organization, query="zebra"), [])
        self.assertEqual(len(search_chunks(self.organization, query="giraffe")), 1)

    def test_search_is_one_query(self) -> None:
        with self.assertNumQueries(1):
            search_chunks(self.organization, query="padlock", source_ids=[str(self.press.id)])

    def test_snippet_marks_matches_on_one_line(self) -> None:
        hit = search_chunks(self.organization, query="receipt")[0]

        self.assertIn("«receipt»", hit.snippet)
        self.assertNotIn("\n", hit.snippet)
        self.assertNotIn("<", hit.snippet)


class SearchSchemaTests(TestCase):
    def test_the_vendor_search_structure_holds_the_organization(self) -> None:
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute(
                    "SELECT indexdef FROM pg_indexes WHERE indexname = 'organizations_sourcechunk_search_idx'"
                )
                self.assertIn(
                    "gin (organizations_search_keys(organization_id, source_id, search_vector))", cursor.fetchone()[0]
                )
            else:
                # The index is written from the keyed text; FTS5 reads the chunk table's own (version 5).
                cursor.execute("SELECT sql FROM sqlite_master WHERE name = 'organizations_sourcechunk_fts_insert'")
                self.assertIn("organizations_search_keyed_text(new.organization_id, new.text)", cursor.fetchone()[0])
                cursor.execute("SELECT sql FROM sqlite_master WHERE name = 'organizations_sourcechunk_fts'")
                self.assertIn("content='organizations_sourcechunk'", cursor.fetchone()[0])
