"""The search index (knowledge/search/schema.py) and the promises search keeps on both databases.

The suite runs on SQLite and, in CI, on PostgreSQL: every expectation written
here as a literal list holds on both, which is how "the same results on both
databases for a fixed corpus" is checked.
"""

import json
import sqlite3
import sys
import uuid
from unittest import skipUnless

from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.test import SimpleTestCase, TestCase, TransactionTestCase

from knowledge.models import Source, SourceChunk
from knowledge.search.schema import (
    FTS_TABLE,
    FTS_TOKENIZE,
    KEYS_FUNCTION,
    QUERY_FUNCTION,
    SEARCH_FUNCTION,
    SEARCH_INDEX,
    WORD,
    keyed_text,
    organization_word_key,
)
from knowledge.selectors import search_chunks
from knowledge.services import TextDocument, import_text_sources
from organizations.models import Organization
from tests.factories import make_organization, make_source

# One chunk each, of similar lengths; term frequencies differ clearly, or the texts
# are the same, so ts_rank_cd (PostgreSQL) and bm25 (SQLite) agree on every order
# below. The fillers keep each searched word in a minority of the chunks, as bm25
# gives no weight to a word that most chunks hold.
FILLERS = [f"Filler note {n} lists canteen opening hours and parking rules for the site." for n in range(8)]
FIXED_CORPUS = {
    "Forklift rules": "Forklift drivers inspect the forklift each shift. A forklift with a bent mast stays parked.",
    "Warehouse layout": "Aisles are wide enough for a forklift. Pallets stand on marked squares near the loading dock.",
    "Dock traffic": "Forklift traffic yields to people on foot. Every forklift stops at the dock gate.",
    "Helmet policy": "Helmets are worn in every hall. A helmet with a cracked shell is replaced at once.",
    "Visitors": "Visitors wear a helmet and a vest and sign the book at the front desk.",
    "Visitors, copy": "Visitors wear a helmet and a vest and sign the book at the front desk.",
    **{f"Filler {n}": text for n, text in enumerate(FILLERS)},
}


class FixedCorpusTests(TestCase):
    def setUp(self) -> None:
        self.organization = make_organization()
        self.ids = {
            title: str(make_source(organization=self.organization, title=title, text=text).id)
            for title, text in FIXED_CORPUS.items()
        }
        self.visitors = sorted(["Visitors", "Visitors, copy"], key=self.ids.get)

    def titles(self, query: str, **options: object) -> list[str]:
        return [hit.source_title for hit in search_chunks(self.organization, query=query, **options)]

    def test_one_word_ranks_by_how_often_it_occurs(self) -> None:
        self.assertEqual(self.titles("forklift"), ["Forklift rules", "Dock traffic", "Warehouse layout"])

    def test_two_words_rank_the_chunk_with_more_of_them_first(self) -> None:
        self.assertEqual(self.titles("forklift dock"), ["Dock traffic", "Warehouse layout"])

    def test_equal_chunks_follow_their_source_ids(self) -> None:
        self.assertEqual(self.titles("helmet"), ["Helmet policy", *self.visitors])
        self.assertEqual(self.titles("visitors vest helmets"), self.visitors)

    def test_a_small_limit_keeps_the_best(self) -> None:
        self.assertEqual(self.titles("forklift", limit=1), ["Forklift rules"])
        self.assertEqual(self.titles("helmet", limit=2), ["Helmet policy", self.visitors[0]])

    def test_nothing_matches_an_absent_word_or_only_common_words(self) -> None:
        self.assertEqual((self.titles("crane"), self.titles("the of and")), ([], []))

    def test_a_number_after_a_word_is_a_word_to_find_not_a_frequency(self) -> None:
        # The PostgreSQL index holds 'forklift 2' for a chunk with forklift twice; no query reaches it.
        self.assertEqual(self.titles("forklift 2"), [])


class UnicodeQueryTests(TestCase):
    def test_a_decomposed_query_finds_the_composed_text(self) -> None:
        # Text is stored in NFC; a client may send the same word decomposed (e + U+0301).
        organization = make_organization()
        make_source(organization=organization, title="Hiring", text="Every résumé is read twice before a call.")
        for filler in FILLERS:
            make_source(organization=organization, text=filler)

        for query in ("résumé", "re\u0301sume\u0301 twice"):
            with self.subTest(query=ascii(query)):
                self.assertEqual([hit.source_title for hit in search_chunks(organization, query=query)], ["Hiring"])


class TieOrderingTests(TestCase):
    def test_equal_scores_are_ordered_by_source_id_then_chunk_index(self) -> None:
        organization = make_organization()
        paragraph = "Quartz samples are logged at the bench. " + "Each entry names the shelf and the date. " * 14
        sources = [make_source(organization=organization, text=f"{paragraph}\n\n{paragraph}") for _ in range(3)]

        hits = search_chunks(organization, query="quartz", limit=50)

        expected = sorted((str(source.id), index) for source in sources for index in (0, 1))
        self.assertEqual([(hit.source_id, hit.chunk_index) for hit in hits], expected)
        self.assertEqual(len({hit.score for hit in hits}), 1)


class TermFrequencySetTests(TestCase):
    """Queries with many more matches than a page (PostgreSQL ranks them through its sets)."""

    MANY = 200

    def many_sources(self, organization: Organization, texts: list[str]) -> list[str]:
        """Source ids, in the order of `texts`; fillers without the searched words make up two thirds,
        so that bm25 (SQLite) still gives those words weight."""
        fillers = [FILLERS[n % len(FILLERS)] for n in range(2 * len(texts))]
        documents = [
            TextDocument(title=f"Text {n}", origin=f"text-{n}.md", text=text) for n, text in enumerate(texts + fillers)
        ]
        outcomes = import_text_sources(organization=organization, documents=documents)
        return [str(outcome.source.id) for outcome in outcomes[: len(texts)]]

    def test_the_chunk_where_the_word_is_densest_comes_first_among_many(self) -> None:
        organization = make_organization()
        ids = self.many_sources(
            organization,
            [f"Note {n} mentions the anvil." for n in range(self.MANY)]
            + ["Anvil care: oil the anvil, cover the anvil, anvil."],
        )

        self.assertEqual([hit.source_id for hit in search_chunks(organization, query="anvil", limit=1)], [ids[-1]])
        hits = search_chunks(organization, query="anvil", limit=5)
        self.assertEqual(hits[0].source_id, ids[-1])
        self.assertEqual(len(hits), 5)

    def test_one_word_in_few_dense_chunks_fills_the_page_as_a_full_ranking_would(self) -> None:
        # Two chunks hold the word twice or more, too few for a page: the page is those two
        # by rank, then the chunks that hold it once in (source id, chunk index) order.
        # Eight words each, so that bm25 (SQLite) ranks by the count alone too.
        organization = make_organization()
        *once, twice, thrice = self.many_sources(
            organization,
            [f"Entry {n} lists the anvil by the door." for n in range(self.MANY)]
            + ["The anvil rests by the anvil door now.", "Anvil, anvil and anvil by the door now."],
        )

        hits = search_chunks(organization, query="anvil", limit=5)

        self.assertEqual([hit.source_id for hit in hits], [thrice, twice, *sorted(once)[:3]])
        self.assertEqual(len({hit.score for hit in hits[2:]}), 1)
        self.assertGreater(hits[0].score, hits[1].score)
        self.assertGreater(hits[1].score, hits[2].score)

    def test_one_word_pages_agree_whether_the_first_sources_fill_them_or_not(self) -> None:
        # PostgreSQL looks for the page first among the chunks that hold the word twice or whose
        # source's id begins with 0, then among all matches; both must give the full ranking's page.
        organization = make_organization()
        twice, *once = self.many_sources(
            organization,
            ["The anvil rests by the anvil door now."] + [f"Entry {n} lists the anvil by the door." for n in range(40)],
        )
        first = [str(uuid.UUID(int=n)) for n in (1, 2, 3)]  # ids beginning with 0
        later = [str(uuid.UUID(int=(n % 14 + 1) << 124 | n)) for n in range(len(once) - 3)]  # beginning with 1 to e
        last = str(uuid.UUID("f" * 32))
        self.give_ids({twice: last, **dict(zip(once, first + later, strict=True))})

        def page(limit: int) -> list[str]:
            return [hit.source_id for hit in search_chunks(organization, query="anvil", limit=limit)]

        self.assertEqual(page(3), [last, *first[:2]])
        self.assertEqual(page(6), [last, *first, *sorted(later)[:2]])

    def give_ids(self, new_ids: dict[str, str]) -> None:
        """Give sources (and their chunks) other ids; the foreign keys are checked at commit."""
        for old, new in new_ids.items():
            Source.objects.filter(id=old).update(id=new)
            SourceChunk.objects.filter(source_id=old).update(source=new)

    def test_two_words_rank_the_chunks_that_hold_one_twice_among_many(self) -> None:
        organization = make_organization()
        ids = self.many_sources(
            organization,
            [f"Entry {n} lists the anvil and hammer." for n in range(self.MANY)]
            + [f"Anvil {n} keeps the anvil hammer." for n in range(4)],
        )

        hits = search_chunks(organization, query="anvil hammer", limit=3)

        self.assertEqual([hit.source_id for hit in hits], sorted(ids[-4:])[:3])

    @skipUnless(connection.vendor == "postgresql", "the tier lexemes are PostgreSQL's")
    def test_the_search_vector_holds_a_tier_lexeme_per_frequency_reached(self) -> None:
        source = make_source(text="Anvil, anvil, anvil. Hammer, hammer. Tongs.")

        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT search_vector::text FROM organizations_sourcechunk WHERE source_id = %s", [source.id]
            )
            vector = cursor.fetchone()[0]

        for lexeme in ("'anvil 2'", "'anvil 3'", "'hammer 2'"):
            self.assertIn(lexeme, vector)
        for lexeme in ("'anvil 4'", "'hammer 3'", "'tong 2'"):
            self.assertNotIn(lexeme, vector)

    @skipUnless(connection.vendor == "postgresql", "phrases, or and -word are PostgreSQL's")
    def test_phrases_or_and_negation_still_search_every_match(self) -> None:
        organization = make_organization()
        for title, text in FIXED_CORPUS.items():
            make_source(organization=organization, title=title, text=text)

        def titles(query: str) -> set[str]:
            return {hit.source_title for hit in search_chunks(organization, query=query)}

        self.assertEqual(titles('"loading dock"'), {"Warehouse layout"})
        self.assertEqual(titles('"dock loading"'), set())  # both words, but not in this order
        self.assertEqual(titles("mast or vest"), {"Forklift rules", "Visitors", "Visitors, copy"})
        self.assertEqual(titles("forklift -dock"), {"Forklift rules"})
        without = {title for title, text in FIXED_CORPUS.items() if "forklift" not in text.lower()}
        self.assertEqual(len(titles("-forklift")), 10)
        self.assertLessEqual(titles("-forklift"), without)


class TenantIsolationIndexTests(TestCase):
    def setUp(self) -> None:
        # Two ids alike but for their last characters: they share the organization key that
        # both databases put before each word (the first hex digits), so the index holds both
        # under one key and the query's organization filter decides.
        stem = "0" * 27 + "0ab"
        self.mine = Organization.objects.create(id=uuid.UUID(stem + "ee"), slug="mine", name="Mine")
        self.other = Organization.objects.create(id=uuid.UUID(stem + "ed"), slug="other", name="Other")
        make_source(organization=self.other, title="Theirs", text="Zephyrine is the other company's codename.")
        make_source(organization=self.mine, title="Mine", text="Our codename stays secret.")

    def test_a_word_only_another_organization_wrote_never_matches(self) -> None:
        self.assertEqual(search_chunks(self.mine, query="zephyrine codename", limit=50), [])
        self.assertEqual(search_chunks(self.mine, query='"zephyrine is" or zephyrine -secret', limit=50), [])
        self.assertEqual([hit.source_title for hit in search_chunks(self.other, query="zephyrine")], ["Theirs"])

    def test_the_index_itself_returns_nothing_of_another_organization(self) -> None:
        elsewhere = Organization.objects.create(id=uuid.UUID("f" * 32), slug="elsewhere", name="Elsewhere")
        make_source(organization=elsewhere, title="Elsewhere", text="Nothing about that codename here.")

        self.assertEqual(self.index_matches(elsewhere, "zephyrine"), 0)
        # The shared key: the index holds both, and only the query's organization filter tells.
        self.assertGreaterEqual(self.index_matches(self.other, "secret"), 1)
        self.assertGreaterEqual(self.index_matches(self.other, "zephyrine"), 1)  # GIN may count an entry twice

    def index_matches(self, organization: Organization, word: str) -> int:
        """Rows the index lookup for (organization, word) yields, before any table row is read."""
        with connection.cursor() as cursor:
            if connection.vendor == "sqlite":
                expression = f'"{organization_word_key(organization.id.hex)}{word}"'
                cursor.execute(f"SELECT count(*) FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s", [expression])
                return cursor.fetchone()[0]
            with transaction.atomic():
                cursor.execute("SET LOCAL enable_seqscan = off")
                cursor.execute(
                    f"EXPLAIN (ANALYZE, FORMAT JSON) SELECT id FROM organizations_sourcechunk WHERE "
                    f"{KEYS_FUNCTION}(organization_id, source_id, search_vector) "
                    f"@@ {QUERY_FUNCTION}(%s, to_tsquery('english', %s))",
                    [organization.id, word],
                )
                plan = cursor.fetchone()[0]
            scan = (json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"]["Plans"][0]
            self.assertEqual(scan["Node Type"], "Bitmap Index Scan")
            self.assertIn(KEYS_FUNCTION, scan["Index Cond"])
            return scan["Actual Rows"]


@skipUnless(connection.vendor == "postgresql", "the search function is PostgreSQL's")
class SearchFunctionSettingsTests(TestCase):
    def test_the_search_never_compiles_nor_parallelises_its_plans(self) -> None:
        # Its plans estimate thousands of rows per set, enough for JIT or parallel workers,
        # each of which cost more than the whole search (docs/development/architecture.md#search).
        with connection.cursor() as cursor:
            cursor.execute("SELECT proconfig FROM pg_proc WHERE proname = %s", [SEARCH_FUNCTION])
            settings = cursor.fetchone()[0]

        self.assertIn("jit=off", settings)
        self.assertIn("max_parallel_workers_per_gather=0", settings)


@skipUnless(connection.vendor == "postgresql", "the pending list is PostgreSQL's GIN index's")
class PendingEntriesTests(TestCase):
    """New chunks' index entries leave GIN's pending list, which every search would read whole."""

    def pending_pages_left(self) -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT gin_clean_pending_list(%s::regclass)", [SEARCH_INDEX])
            return cursor.fetchone()[0]

    def test_a_created_source_leaves_nothing_pending(self) -> None:
        make_source(text="Lanolin keeps the hinges supple. " * 40)

        self.assertEqual(self.pending_pages_left(), 0)

    def test_an_import_leaves_nothing_pending(self) -> None:
        documents = [
            TextDocument(title=f"Note {n}", origin=f"n{n}.md", text=f"Borax note {n}. " * 80) for n in range(30)
        ]
        import_text_sources(organization=make_organization(), documents=documents)

        self.assertEqual(self.pending_pages_left(), 0)


class SearchIndexMigrationTests(TransactionTestCase):
    """Migrations 0003, 0005, 0006 and 0007 build the new index over chunks that already exist."""

    before = [("organizations", "0002_search_and_indexes")]
    after = [("organizations", "0007_sqlite_snippets_from_plain_text")]

    def tearDown(self) -> None:
        MigrationExecutor(connection).migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())

    def test_existing_chunks_are_searchable_in_their_organization_only(self) -> None:
        executor = MigrationExecutor(connection)
        executor.migrate(self.before)
        old = executor.loader.project_state(self.before).apps
        organizations = [
            old.get_model("organizations", "Organization").objects.create(slug=slug, name=slug) for slug in ("a", "b")
        ]
        source_model = old.get_model("organizations", "Source")
        chunk_model = old.get_model("organizations", "SourceChunk")
        for organization, word in zip(organizations, ("lanolin", "borax"), strict=True):
            source = source_model.objects.create(
                organization=organization, title=f"Old {word}", kind="text", status="processed", text=word
            )
            chunk_model.objects.create(source=source, index=0, text=f"Old text about {word} and {word}.")

        executor = MigrationExecutor(connection)
        executor.migrate(self.after)

        # Only the columns this migration knows: later ones (the time zone) are not there yet.
        mine, theirs = (Organization.objects.only("id", "slug").get(slug=slug) for slug in ("a", "b"))
        self.assertEqual([hit.source_title for hit in search_chunks(mine, query="lanolin")], ["Old lanolin"])
        self.assertIn("text about «lanolin» and «lanolin»", search_chunks(mine, query="lanolin")[0].snippet)
        self.assertEqual(search_chunks(mine, query="borax"), [])
        self.assertEqual([hit.source_title for hit in search_chunks(theirs, query="borax")], ["Old borax"])
        new_source = make_source(organization=mine, text="New text about lanolin.")
        self.assertEqual(
            {hit.source_id for hit in search_chunks(mine, query="lanolin")},
            {str(new_source.id), str(source_model.objects.get(title="Old lanolin").id)},
        )


class KeyedTextTests(SimpleTestCase):
    """SQLite's index text: the organization's key before every word FTS5's unicode61 tokenizer cuts."""

    def test_every_word_and_only_words_get_the_key(self) -> None:
        organization_hex = "6ab6f427ecc0438f86347e3cf00ddc25"
        key = organization_word_key(organization_hex)

        text = keyed_text(organization_hex, "Café re\u0301sume\u0301, foo_bar x²y 42.")

        self.assertEqual(key, f"{0x6AB6F427ECC0:015d}")
        self.assertEqual(text, f"{key}Café {key}re\u0301sume\u0301, {key}foo_{key}bar {key}x²y {key}42.")
        self.assertIsNone(keyed_text(organization_hex, None))

    def test_a_query_is_cut_into_the_words_the_index_keys(self) -> None:
        text = "Café re\u0301sume\u0301, foo_bar x²y 42."

        self.assertEqual(WORD.findall(text), ["Café", "re\u0301sume\u0301", "foo", "bar", "x²y", "42"])
        self.assertEqual(keyed_text("0" * 32, text).count("0" * 15), len(WORD.findall(text)))

    def test_every_letter_a_key_may_precede_is_a_word_to_unicode61(self) -> None:
        # A key is glued to the word it precedes, so the keyed text has the plain text's
        # words in the same places, and a snippet placed by the index fits the plain text.
        characters = [chr(code) for code in range(sys.maxunicode + 1) if not 0xD800 <= code < 0xE000]
        letters = [character for character in characters if WORD.fullmatch(character)]
        index = sqlite3.connect(":memory:")
        index.execute(f"CREATE VIRTUAL TABLE words USING fts5(text, tokenize='{FTS_TOKENIZE}')")
        index.execute("CREATE VIRTUAL TABLE found USING fts5vocab(words, 'instance')")
        index.executemany("INSERT INTO words(rowid, text) VALUES (?, ?)", enumerate(letters))

        self.assertEqual(index.execute("SELECT count(*) FROM found").fetchone()[0], len(letters))
        self.assertGreater(len(letters), 100_000)


class SnippetTests(TestCase):
    def test_the_snippet_marks_the_word_found_after_words_of_every_kind(self) -> None:
        organization = make_organization()
        text = (
            "Intro: foo_bar x²y résumé 42 ᦰab 中文 co-op l'été "
            f"{organization_word_key(organization.id.hex)} stays, then the zeppelin hangar."
        )
        make_source(organization=organization, title="Mixed", text=text)

        (hit,) = search_chunks(organization, query="zeppelin")

        self.assertIn("the «zeppelin» hangar", hit.snippet)
        self.assertIn(organization_word_key(organization.id.hex), hit.snippet)
