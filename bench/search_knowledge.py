"""Latency of knowledge search at 10 k, 100 k or 1 M chunks, through the project's own selector.

    OPERATOR_BASE_URL=http://testserver .venv/bin/python bench/search_knowledge.py [--chunks 10000]
        [--seed 1] [--keep] [--check] [--import-speed] [--lists] [--passes 3] [--http URL]

Generates the corpus of bench/search_corpus.py (100 organizations, one holding
30% of the chunks) through `import_text_sources`, the bulk path of
`import_sources`, then times `search_chunks` for 200 queries in the big
organization and in a small one, and prints p50/p95/max per query class.
Each query's time is the fastest of --passes runs of the whole mix, so that
other processes on a shared machine do not decide the figures.

- By default everything happens in a throw-away test database. `--keep` uses
  the configured database itself (DATABASE_URL; migrated first) and keeps the
  corpus there, so a later run with the same --chunks and --seed reuses it.
- `--check` verifies every answer (organization, order, determinism, words
  present, empty for no match) and exits 1 on a failure; timings still print
  but are not judged. CI runs it at 10 k chunks on both databases.
- `--import-speed` times `manage.py import_sources` of 1,000 files of about 20
  chunks into a fresh organization (then again, unchanged).
- `--lists` times the first pages of list_sources and list_modules in the big
  organization (50,000 sources at 1 M chunks).
- `--alone` generates only the small organization, as it is within the full
  corpus, and times it alone: what a search costs it without the others' data.
- `--http URL` (with `--keep`) sends the queries as `search_knowledge` tool
  calls to a server at URL that uses the same database, signing key and
  OPERATOR_BASE_URL (= URL), with OPERATOR_TOOL_CALLS_PER_MINUTE raised.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "operator_site.settings")

import django

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from search_corpus import ORGANIZATIONS, Corpus  # noqa: E402
from search_http import http_search  # noqa: E402

from knowledge.models import Source, SourceChunk, SourceStatus  # noqa: E402
from knowledge.search.query import ENGLISH_STOP_WORDS  # noqa: E402
from knowledge.selectors import (  # noqa: E402
    modules_for_organization,
    processed_sources_for_organization,
    search_chunks,
)
from knowledge.services import TextDocument, create_module, import_text_sources  # noqa: E402
from organizations.models import Organization  # noqa: E402

BIG, SMALL = 0, 50  # the organization holding 30%, and a typical small one
BATCH = 500
ROUNDS = 100  # turns in which the organizations import their documents
CLASSES = {  # query class: (queries, expected share of chunks holding a word, words per query)
    "rare": (40, (0.0, 0.0005), 1),
    "medium": (40, (0.002, 0.01), 1),
    "common": (30, (0.03, 0.12), 1),
    "two words": (30, None, 2),
    "three words": (30, None, 3),
    "very common": (15, (0.25, 0.5), 1),
    "no match": (15, None, 1),
}
_WORD = re.compile(r"[a-z]+")


def slug(corpus: Corpus, organization: int) -> str:
    return f"bench-n{corpus.chunks}-s{corpus.seed}-{organization:02d}"


def generate(corpus: Corpus, numbers: list[int]) -> None:
    """Create the corpus's organizations `numbers` unless this database already holds them.

    The organizations import in ROUNDS turns, each taking its share of every
    turn, so their chunks interleave in the table and the indexes as a live
    service's do (one organization's chunks side by side would flatter a search).
    """
    if Organization.objects.filter(slug=slug(corpus, numbers[-1])).exists():
        print(f"corpus of {corpus.chunks} chunks (seed {corpus.seed}) already present")
        return
    started = time.perf_counter()
    organizations = [
        Organization.objects.get_or_create(slug=slug(corpus, number), defaults={"name": f"Bench {number}"})[0]
        for number in numbers
    ]
    streams = [corpus.documents(number) for number in numbers]
    imported = [0] * len(numbers)
    sources: list[list[tuple[object, str]]] = [[] for _ in numbers]
    for turn in range(1, ROUNDS + 1):
        for position, (number, organization) in enumerate(zip(numbers, organizations, strict=True)):
            batch: list[TextDocument] = []
            while imported[position] < corpus.quota(number) * turn // ROUNDS:
                document = next(streams[position], None)
                if document is None:
                    break
                imported[position] += document.chunks
                batch.append(TextDocument(title=document.title, origin=document.origin, text=document.text))
                if len(batch) == BATCH or imported[position] >= corpus.quota(number) * turn // ROUNDS:
                    outcomes = import_text_sources(organization=organization, documents=batch)
                    sources[position] += [(outcome.source.id, outcome.source.title) for outcome in outcomes]
                    batch = []
        if turn % 10 == 0:
            print(f"  turn {turn:>3}: {sum(imported):>9} chunks, {time.perf_counter() - started:7.0f} s", flush=True)
    # Modules of 3 sources each, one per 25 sources (2,000 in the big organization at 1 M chunks).
    for organization, made in zip(organizations, sources, strict=True):
        for first in range(0, len(made) - 2, 25):
            create_module(
                organization=organization,
                title=f"Module {first // 25} on {made[first][1]}",
                summary=f"Built from {made[first][1]}.",
                status="published",
                sections=[(f"Part {part}", f"Read {made[first + part][1]}.") for part in range(3)],
                sources=[Source(id=source_id, organization=organization) for source_id, _ in made[first : first + 3]],
            )
    print(f"generated {SourceChunk.objects.count()} chunks in {time.perf_counter() - started:.0f} s", flush=True)


def settle() -> None:
    """Vacuum and analyze, as autovacuum does after a large import: the GIN pending list is merged into the
    index and the planner knows the tables' sizes."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("VACUUM (ANALYZE) organizations_sourcechunk, organizations_source, organizations_module")
        else:
            cursor.execute("ANALYZE")


def content_words(text: str) -> list[str]:
    return [word for word in _WORD.findall(text.lower()) if word not in ENGLISH_STOP_WORDS]


def query_mix(corpus: Corpus, organization: int) -> list[tuple[str, str]]:
    """200 (class, query) pairs drawn from the organization's own documents, deterministically."""
    rng = random.Random(f"{corpus.seed}:queries:{organization}")
    documents = [document for _, document in zip(range(400), corpus.documents(organization), strict=False)]
    words = sorted({word for document in documents for word in content_words(document.text)})
    queries: list[tuple[str, str]] = []
    for name, (count, band, size) in CLASSES.items():
        if name == "no match":
            queries += [(name, f"zyx{rng.randrange(10**6)}q") for _ in range(count)]
        elif band is None:
            for _ in range(count):
                sentence = rng.choice(rng.choice(documents).text.replace("\n", " ").split(". "))
                found = content_words(sentence)
                start = rng.randrange(max(1, len(found) - size + 1))
                queries.append((name, " ".join(found[start : start + size]) or found[0]))
        else:
            low, high = band
            candidates = [word for word in words if low <= corpus.chunk_share(word) < high]
            queries += [(name, word) for word in rng.sample(candidates, min(count, len(candidates)))]
    return queries


def timed(function: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    result = function()
    return (time.perf_counter() - started) * 1000, result


def check(organization: Organization, name: str, query: str, hits: list) -> list[str]:
    problems = []
    keys = [(-hit.score, hit.source_id, hit.chunk_index) for hit in hits]
    if keys != sorted(keys):
        problems.append("not ordered by (score desc, source id, chunk index)")
    if search_chunks(organization, query=query) != hits:
        problems.append("a second run gave another list")
    if name == "no match" and hits:
        problems.append("found something for a word nobody wrote")
    if name in ("rare", "two words", "three words") and not hits:
        problems.append("found nothing for words taken from the organization's text")
    ranked = [(hit.source_id, hit.chunk_index, hit.score) for hit in hits]
    if connection.vendor == "postgresql" and len(query.split()) == 1 and ranked != exact_ranking(organization, query):
        problems.append("a one-word query is not ranked as over all its matches")
    chunks = {
        (str(chunk.source_id), chunk.index): chunk
        for chunk in SourceChunk.objects.filter(source_id__in=[hit.source_id for hit in hits]).select_related("source")
    }
    for hit in hits:
        chunk = chunks.get((hit.source_id, hit.chunk_index))
        if chunk is None or chunk.source.organization_id != organization.id:
            problems.append(f"hit {hit.source_id}#{hit.chunk_index} is not this organization's")
        elif chunk.source.status != SourceStatus.PROCESSED:
            problems.append(f"hit {hit.source_id}#{hit.chunk_index} is not processed")
        elif not set(query.split()) <= set(content_words(chunk.text)):
            problems.append(f"hit {hit.source_id}#{hit.chunk_index} lacks a word of {query!r}")
    return problems


def exact_ranking(organization: Organization, query: str) -> list[tuple[str, int, float]]:
    """PostgreSQL: the first 10 of all the matches ranked by ts_rank_cd, as before the term-frequency sets."""
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT c.source_id, c."index", ROUND(ts_rank_cd(c.search_vector, q)::numeric, 6) AS score
               FROM organizations_sourcechunk c, websearch_to_tsquery('english', %s) AS q
               WHERE c.organization_id = %s AND c.search_vector @@ q
               ORDER BY score DESC, c.source_id, c."index" LIMIT 10""",
            [query, organization.id],
        )
        return [(str(source_id), index, float(score)) for source_id, index, score in cursor.fetchall()]


def ranking_agreement(organization: Organization, queries: list[str]) -> str:
    """PostgreSQL, for information: the first 10 of queries of several words against ranking every match."""
    same = found_total = exact_total = 0
    for query in queries:
        exact = exact_ranking(organization, query)
        found = [(hit.source_id, hit.chunk_index, hit.score) for hit in search_chunks(organization, query=query)]
        same += found == exact
        found_total += len({row[:2] for row in found} & {row[:2] for row in exact})
        exact_total += len(exact)
    return (
        f"{len(queries)} queries of several words: {same} ranked exactly as over all their matches; "
        f"{found_total} of the {exact_total} chunks of those exact rankings returned"
    )


def percentiles(timings: list[float]) -> str:
    ordered = sorted(timings)
    p95 = ordered[max(0, -(-len(ordered) * 95 // 100) - 1)]
    return f"{statistics.median(ordered):>8.1f}{p95:>8.1f}{ordered[-1]:>8.1f}"


def measure_search(
    corpus: Corpus, organizations: dict[str, int], *, verify: bool, passes: int, http: str | None
) -> int:
    """Time the query mix in the big and a small organization; each query's time is its fastest of `passes`
    runs, which filters out other processes of a shared machine. Then verify the answers if asked."""
    failures = 0
    for label, number in organizations.items():
        organization = Organization.objects.get(slug=slug(corpus, number))
        chunks = SourceChunk.objects.filter(organization=organization).count()
        queries = query_mix(corpus, number)
        search = http_search(http, organization) if http else partial(search_chunks, organization)
        for _, query in queries:  # warm the caches, as a running server's are
            search(query=query)
        best = [float("inf")] * len(queries)
        for _ in range(passes):
            for position, (_, query) in enumerate(queries):
                best[position] = min(best[position], timed(partial(search, query=query))[0])
        timings: dict[str, list[float]] = {}
        for (name, query), elapsed in zip(queries, best, strict=True):
            timings.setdefault(name, []).append(elapsed)
            if verify:
                for problem in check(organization, name, query, search_chunks(organization, query=query)):
                    failures += 1
                    print(f"FAIL {label} {name} {query!r}: {problem}")
        if verify and connection.vendor == "postgresql":
            print(ranking_agreement(organization, [query for name, query in queries if name.endswith(" words")]))
        where = f"over HTTP ({http})" if http else "in-process"
        print(f"\n{label} organization ({chunks} chunks), {len(queries)} queries {where}, best of {passes}, ms")
        print(f"{'class':<13}{'queries':>8}{'p50':>8}{'p95':>8}{'max':>8}")
        for name, values in timings.items():
            print(f"{name:<13}{len(values):>8}{percentiles(values)}")
        everything = [value for values in timings.values() for value in values]
        print(f"{'all':<13}{len(everything):>8}{percentiles(everything)}")
    return failures


def measure_import(seed: int) -> None:
    """1,000 files of about 20 chunks through `manage.py import_sources`, then the same again."""
    corpus = Corpus(seed=seed, chunks=4_000_000)  # small organizations of about 28,000 chunks
    Organization.objects.create(slug="bench-import", name="Import")
    with tempfile.TemporaryDirectory() as folder:
        for number, document in zip(range(1000), corpus.documents(3), strict=False):
            Path(folder, f"doc-{number:04d}.md").write_text(f"# {document.title}\n\n{document.text}\n")
        for label in ("import", "again, unchanged"):
            with open(os.devnull, "w") as quiet:
                elapsed, _ = timed(
                    lambda: call_command(
                        "import_sources", "--org", "bench-import", "--no-progress", folder, stdout=quiet
                    )
                )
            chunks = SourceChunk.objects.filter(organization__slug="bench-import").count()
            print(f"import_sources, 1,000 files, {chunks} chunks, {label}: {elapsed / 1000:.1f} s")


def measure_lists(corpus: Corpus) -> None:
    organization = Organization.objects.get(slug=slug(corpus, BIG))
    cases = {
        "list_sources first page": lambda: processed_sources_for_organization(organization, limit=26),
        "list_sources query": lambda: processed_sources_for_organization(organization, limit=26, query="zzq"),
        "list_modules first page": lambda: modules_for_organization(organization, limit=26),
        "list_modules query": lambda: modules_for_organization(organization, limit=26, query="zzq"),
    }
    print(f"\n{'selector':<26}{'p50':>8}{'p95':>8}{'max':>8}   (ms, 30 runs)")
    for name, case in cases.items():
        case()
        print(f"{name:<26}{percentiles([timed(case)[0] for _ in range(30)])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=10_000, help="corpus size (default 10000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="use and keep the configured database")
    parser.add_argument("--check", action="store_true", help="verify every answer; exit 1 on a failure")
    parser.add_argument("--import-speed", action="store_true", help="time import_sources instead")
    parser.add_argument("--lists", action="store_true", help="also time list_sources and list_modules")
    parser.add_argument("--passes", type=int, default=3, help="runs of the query mix; each query's best counts")
    parser.add_argument("--alone", action="store_true", help="only the small organization, without the others")
    parser.add_argument("--http", metavar="URL", help="search through the server at URL instead (needs --keep)")
    options = parser.parse_args()
    if options.http and not options.keep:
        parser.error("--http needs --keep: the server must read the same database")
    if options.alone and options.lists:
        parser.error("--lists times the big organization, which --alone leaves out")

    database = None
    if options.keep:
        call_command("migrate", verbosity=0)
    else:
        setup_test_environment()
        database = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    failures = 0
    try:
        print(f"database={connection.vendor}, load average {os.getloadavg()[0]:.1f}")
        if options.import_speed:
            measure_import(options.seed)
            return
        corpus = Corpus(seed=options.seed, chunks=options.chunks)
        organizations = {"small, alone": SMALL} if options.alone else {"big": BIG, "small": SMALL}
        generate(corpus, sorted(organizations.values()) if options.alone else list(range(ORGANIZATIONS)))
        settle()
        failures = measure_search(corpus, organizations, verify=options.check, passes=options.passes, http=options.http)
        print(f"\nload average {os.getloadavg()[0]:.1f}")
        if options.lists:
            measure_lists(corpus)
    finally:
        if database is not None:
            connection.creation.destroy_test_db(database, verbosity=0)
    if failures:
        raise SystemExit(f"{failures} check(s) failed")


if __name__ == "__main__":
    main()
