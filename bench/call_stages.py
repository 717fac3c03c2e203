"""One tool call's app-server instructions by stage, counted by callgrind: repeatable on a shared machine.

Run under valgrind; it seeds the demo data as `hot_path.py` does, sends `--calls`
calls of one request through Django's `WSGIHandler` after a warm-up, and marks
each stage's start and end with a callgrind client request (a dump of the
counts so far, named after the stage that ran), through a ten-line C helper it
compiles with `cc` (valgrind's headers are needed); the instructions are
counted from the first measured call only (`--instr-atstart=no`: the setup's
migrations would take an hour under callgrind). Then, outside valgrind, run
it again with `--report DIR` to sum the dumps by stage and per call. A nested
stage's instructions are its own: a stage's figure leaves out the stages inside it.

    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/stages/cg.%p \\
        .venv/bin/python bench/call_stages.py --request list_modules --calls 20
    .venv/bin/python bench/call_stages.py --report /tmp/stages --calls 20

Set DATABASE_URL and REDIS_URL for the production setup. The servers' own CPU
is not here: `hot_path.py` reads it.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hot_path  # sets Django up, as each bench script does, before the imports of models below
import psycopg
import redis.commands.core
from django.db import connection

import knowledge.search.query
import mcp_operator.limits
import operator_core.mcp.transport
import operator_core.sql
from mcp_operator.views import operator_endpoint
from operator_core.mcp.transport import McpEndpoint

HELPER = """
#include <valgrind/callgrind.h>
void mark(const char *stage) { CALLGRIND_DUMP_STATS_AT(stage); }
void zero(void) { CALLGRIND_START_INSTRUMENTATION; CALLGRIND_ZERO_STATS; }
"""
OUTSIDE = "the WSGI handler, the middleware, the request signals, the bench's loop"
# (where, attribute, stage): what each stage is, as the functions that run it.
STAGES: tuple[tuple[Any, str, str], ...] = (
    (McpEndpoint, "handle", "the transport: headers, metrics, spans"),
    (McpEndpoint, "_check", "the envelope checks"),
    (McpEndpoint, "_dispatch", "the tool call: admission, arguments, the tool's Python"),
    (redis.commands.core.Script, "__call__", "the limits: EVALSHA (count and lease)"),
    (mcp_operator.limits, "_give_back", "the limits: ZREM, after the answer"),
    (operator_core.sql, "_with_guard_and_rider", "the access guard and the audit record put into the statement"),
    (psycopg.Cursor, "execute", "the statement: sent, waited for, rows loaded"),
    (psycopg.Cursor, "fetchall", "the statement: sent, waited for, rows loaded"),
    (psycopg.Cursor, "fetchone", "the statement: sent, waited for, rows loaded"),
    (knowledge.search.query, "snippet", "the snippets"),
    (knowledge.search.query, "query_pattern", "the snippets"),
    (operator_core.mcp.transport, "encode_result", "encoding the result and the response"),
    (operator_core.mcp.transport, "result_response", "encoding the result and the response"),
)


def helper() -> ctypes.CDLL:
    """The client requests, compiled once per run into a temporary folder."""
    folder = Path(tempfile.mkdtemp())
    (folder / "marks.c").write_text(HELPER)
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", folder / "marks.so", folder / "marks.c"], check=True)
    return ctypes.CDLL(str(folder / "marks.so"))


def marked(function: Callable[..., Any], stage: str, running: list[str], marks: ctypes.CDLL) -> Callable[..., Any]:
    """`function`, its instructions counted to `stage`; those before it to the stage that called it."""

    @functools.wraps(function)
    def counted(*args: Any, **kwargs: Any) -> Any:
        marks.mark(running[-1].encode())
        running.append(stage)
        try:
            return function(*args, **kwargs)
        finally:
            marks.mark(stage.encode())
            running.pop()

    return counted


def measure(request: str, calls: int) -> None:
    hot_path.setup_test_environment()
    database = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        organization, token = hot_path.seeded_token()
        method, tool, arguments = hot_path.requests_for(organization)[request]
        template = hot_path.environ_for(method, tool, arguments, token)
        handler = hot_path.WSGIHandler()
        marks = helper()
        running = [OUTSIDE]
        with hot_path.for_measuring():
            for _ in range(50):
                hot_path.send(handler, template)
            endpoint = operator_endpoint()
            # The endpoint is a frozen dataclass, built once per process: its authenticator is set past that.
            counted = marked(endpoint.authenticate, "authentication: the token", running, marks)
            object.__setattr__(endpoint, "authenticate", counted)
            tools: Any = endpoint.tools
            built = marked(tools._record_with_read, "the audit record: built", running, marks)
            tools._record_with_read = built
            tools._on_call = marked(tools._on_call, "the audit observer (the call's log and metrics)", running, marks)
            originals = [(where, name, getattr(where, name)) for where, name, _ in STAGES]
            for where, name, stage in STAGES:
                setattr(where, name, marked(getattr(where, name), stage, running, marks))
            marks.zero()
            for _ in range(calls):
                hot_path.send(handler, template)
            marks.mark(OUTSIDE.encode())
            # Unwrapped before the teardown: its cursors would mark too, and count dropping the test
            # database (a new connection's password exchange, 58 million instructions) as the calls' own.
            for where, name, original in originals:
                setattr(where, name, original)
    finally:
        connection.creation.destroy_test_db(database, verbosity=0)


def report(folder: Path, calls: int) -> None:
    """Instructions per call by stage, from the dumps in `folder`."""
    by_stage: Counter[str] = Counter()
    for dump in folder.glob("cg.*"):
        text = dump.read_text(errors="replace")
        trigger = re.search(r"^desc: Trigger: Client Request: (.*)$", text, re.MULTILINE)
        total = re.search(r"^(?:totals|summary): (\d+)", text, re.MULTILINE)
        if trigger and total:
            by_stage[trigger.group(1)] += int(total.group(1))
    whole = sum(by_stage.values())
    print(f"{'stage':<58}{'k instr/call':>14}{'share':>8}")
    for stage, count in by_stage.most_common():
        print(f"{stage:<58}{count / calls / 1000:>14.0f}{count / whole:>8.1%}")
    print(f"{'the whole call':<58}{whole / calls / 1000:>14.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--request", default="list_modules", choices=["tools/list", "list_modules", "search_knowledge"])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--report", type=Path, help="sum the dumps of an earlier run in this folder, then exit")
    options = parser.parse_args()
    if options.report:
        report(options.report, options.calls)
    else:
        measure(options.request, options.calls)


if __name__ == "__main__":
    sys.exit(main())
