"""Old migrations run tomorrow the SQL they ran when they shipped (organizations/migrations/_search/).

Each search schema version's install and uninstall statements are pinned by a
SHA-256 digest per vendor, so an edit to an old version fails here; the current
version's SQL (knowledge/search/schema.py) must be the newest frozen one's,
so a change to it comes with a new version and the migration that installs it.
"""

import hashlib
import importlib
import json
import pkgutil

from django.test import SimpleTestCase

from knowledge.search.schema import CURRENT_VERSION, INSTALL, UNINSTALL
from organizations.migrations import _search

VENDORS = ("sqlite", "postgresql")
# (version, vendor): (digest of the install statements, digest of the uninstall statements).
PINNED = {
    (1, "sqlite"): (
        "e0ab5507a689c9d099789c0d29ce6ac0adc3a744184a144234d1f47dd5d0c619",
        "7d6dcc8ff32faf1e704a390bfea91ffd6de5b837e75b65ac2322f712d7d8386a",
    ),
    (1, "postgresql"): (
        "5bcbbdfb460d507dbb30c4985ddd20522d8140013923fd232be5cc7958057999",
        "f7967b8a3eb8b14b21850afc69ea7d51369e495b6bb597ab3ae52bd54544dbef",
    ),
    (2, "sqlite"): (
        "d171ac98c8da5ce829bd7a2efff0219ac36afc447a8abc73e6d47ac99a56f095",
        "7d6dcc8ff32faf1e704a390bfea91ffd6de5b837e75b65ac2322f712d7d8386a",
    ),
    (2, "postgresql"): (
        "a51da3696d24a5f8ab3da46764402711967fbac96e99ba901a1952df6c82ff6e",
        "3b0beb28a31cd2980899e06bee9c831ee7dbd7a60c4c9de11ed64a17d489a7bf",
    ),
    (3, "sqlite"): (
        "647a73969e024fac4fa45703466b95cc58870ce65826a2356be164433825a759",
        "7d6dcc8ff32faf1e704a390bfea91ffd6de5b837e75b65ac2322f712d7d8386a",
    ),
    (3, "postgresql"): (
        "a51da3696d24a5f8ab3da46764402711967fbac96e99ba901a1952df6c82ff6e",
        "3b0beb28a31cd2980899e06bee9c831ee7dbd7a60c4c9de11ed64a17d489a7bf",
    ),
    (4, "sqlite"): (
        "647a73969e024fac4fa45703466b95cc58870ce65826a2356be164433825a759",
        "7d6dcc8ff32faf1e704a390bfea91ffd6de5b837e75b65ac2322f712d7d8386a",
    ),
    (4, "postgresql"): (
        "6d987cbb15d45046e9643edfa750bf1a54b4d5be06e9165803f5081fbda7418b",
        "5f6cd3dfedcbe0be17bc54e11b8c4f216afca410ab100f0b7164366266158426",
    ),
    (5, "sqlite"): (
        "59b7e48a130485423abbcddfc8b524e9719fa7c6b71f98c159788f0436263bbd",
        "7d6dcc8ff32faf1e704a390bfea91ffd6de5b837e75b65ac2322f712d7d8386a",
    ),
    (5, "postgresql"): (
        "6d987cbb15d45046e9643edfa750bf1a54b4d5be06e9165803f5081fbda7418b",
        "5f6cd3dfedcbe0be17bc54e11b8c4f216afca410ab100f0b7164366266158426",
    ),
}
# PostgreSQL's index part alone (install, uninstall), which migration 0006 swaps without the vector.
PINNED_POSTGRESQL_INDEX = {
    2: (
        "69cf48a83b78783f6cb58ce604c77e56a3969c48ff300bfc78b363becc11f295",
        "17aa326e6425fa4104f1cf533d643cbaaa65f8c5b6d60290c549b338a303220e",
    ),
    4: (
        "44f06f95ee52d54dfe7f9e5460a189696301c7f726753e40af0885c44d8d3b94",
        "1f2ca00337a26b9994b4c380acb8cc9f15c56a9e481c9e37e38cf97560b91199",
    ),
}


def digest(statements: tuple[str, ...]) -> str:
    return hashlib.sha256(json.dumps(list(statements)).encode()).hexdigest()


def frozen(version: int) -> object:
    return importlib.import_module(f"{_search.__name__}.v{version}")


class FrozenSearchSqlTests(SimpleTestCase):
    def test_every_version_runs_the_sql_it_shipped_with(self) -> None:
        for (version, vendor), (install, uninstall) in PINNED.items():
            with self.subTest(version=version, vendor=vendor):
                self.assertEqual(digest(frozen(version).INSTALL[vendor]), install)
                self.assertEqual(digest(frozen(version).UNINSTALL[vendor]), uninstall)

    def test_postgresql_index_parts_are_pinned_too(self) -> None:
        for version, (install, uninstall) in PINNED_POSTGRESQL_INDEX.items():
            with self.subTest(version=version):
                self.assertEqual(digest(frozen(version).POSTGRESQL_INDEX_INSTALL), install)
                self.assertEqual(digest(frozen(version).POSTGRESQL_INDEX_UNINSTALL), uninstall)

    def test_every_frozen_version_is_pinned(self) -> None:
        versions = {int(module.name[1:]) for module in pkgutil.iter_modules(_search.__path__)}

        self.assertEqual({(version, vendor) for version in versions for vendor in VENDORS}, set(PINNED))

    def test_the_current_sql_is_the_newest_frozen_version(self) -> None:
        newest = max(version for version, _ in PINNED)

        self.assertEqual(CURRENT_VERSION, newest)
        for vendor in VENDORS:
            with self.subTest(vendor=vendor):
                self.assertEqual(INSTALL[vendor], frozen(newest).INSTALL[vendor])
                self.assertEqual(UNINSTALL[vendor], frozen(newest).UNINSTALL[vendor])
