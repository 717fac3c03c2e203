"""The suite's test runner: Django's, with a cache of its own for every test.

Every rate limit counts in the default cache (docs/limits.md), keyed by client
address, and every test client comes from 127.0.0.1. Without isolation, the
counts of one test spill into the next: a few dozen registrations anywhere in
the suite and every later test that registers a client is refused with 429.
So each test gets a fresh key prefix, the way it gets a fresh database
transaction; a test that checks a limit sets the limit it needs.
"""

import os
import sys
import time
import unittest
from typing import Any

from django.db import connections
from django.test.runner import DiscoverRunner

from tests.support import own_cache_keys


def _with_own_cache(test: unittest.TestCase) -> None:
    set_up = test.setUp

    def set_up_with_own_cache() -> None:
        # Entered before the test's own setUp; left after its cleanups, tearDown included.
        test.enterContext(own_cache_keys())
        set_up()

    test.setUp = set_up_with_own_cache  # type: ignore[method-assign]


def _tests_of(suite: unittest.TestSuite) -> list[unittest.TestCase]:
    tests: list[unittest.TestCase] = []
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            tests.extend(_tests_of(item))
        else:
            tests.append(item)
    return tests


def _with_named_sessions(test_class: type[unittest.TestCase]) -> None:
    """PostgreSQL sessions opened during the class carry its name as application_name.

    libpq reads PGAPPNAME at each connect, and child processes inherit it, so a session
    a thread or a server process leaves open names the class that opened it.
    """
    set_up_class = test_class.setUpClass
    name = f"tests:{test_class.__module__.removeprefix('tests.')}.{test_class.__qualname__}"[-63:]

    def set_up_class_named() -> None:
        os.environ["PGAPPNAME"] = name
        set_up_class()

    test_class.setUpClass = staticmethod(set_up_class_named)  # type: ignore[method-assign]


class OperatorTestRunner(DiscoverRunner):
    def build_suite(self, *args: Any, **kwargs: Any) -> unittest.TestSuite:
        suite = super().build_suite(*args, **kwargs)
        tests = _tests_of(suite)
        for test in tests:
            _with_own_cache(test)
        for test_class in {type(test) for test in tests}:
            _with_named_sessions(test_class)
        return suite

    stray_sessions = 0

    def teardown_databases(self, old_config: Any, **kwargs: Any) -> None:
        self.stray_sessions = _end_stray_sessions()
        super().teardown_databases(old_config, **kwargs)

    def suite_result(self, suite: unittest.TestSuite, result: unittest.TestResult, **kwargs: Any) -> int:
        # A session left open fails the run, though every test passed: the next one may not drop the database.
        return super().suite_result(suite, result, **kwargs) + self.stray_sessions


# A session some test left open on PostgreSQL's test database (a thread's connection, a
# child process) makes DROP DATABASE fail after every test passed. Each is named on
# stderr, by the class that opened it and the last statement it ran, then ended, and
# the run fails.
_STRAY_SESSIONS = """
    SELECT pid, application_name, state, left(query, 200)
    FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
"""


def _lasting_sessions(cursor: Any) -> list[tuple[int, str, str, str]]:
    """The other sessions still open after up to 5 s: a server process a test just stopped may take a moment."""
    deadline = time.monotonic() + 5
    while True:
        cursor.execute(_STRAY_SESSIONS)
        sessions = cursor.fetchall()
        if not sessions or time.monotonic() > deadline:
            return sessions
        time.sleep(0.1)


def _end_stray_sessions() -> int:
    ended = 0
    for connection in connections.all():
        if connection.vendor != "postgresql":
            continue
        with connection.cursor() as cursor:
            for pid, application, state, query in _lasting_sessions(cursor):
                print(
                    f"tests: a session was left open on the test database: pid {pid}, {application!r}, "
                    f"{state}, last statement {query!r}; ended",
                    file=sys.stderr,
                )
                cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
                ended += 1
    return ended
