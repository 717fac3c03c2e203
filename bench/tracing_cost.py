"""What tracing costs the app server per `tools/call`: this process's CPU with tracing off and on.

Each measurement is a process of its own (tracing is set up once per process,
before the first database connection, as a gunicorn worker does after its fork):
it seeds the demo data into a throw-away test database, then sends `list_modules`
and `search_knowledge` through Django's real `WSGIHandler` and reports its own
CPU time per call. "on" exports every span (the default sampler keeps all) over
OTLP/HTTP to a receiver in this parent process, on a real socket; its clock
stops only after the last batch was sent (`force_flush`), so the exporter's
thread is counted. "on 10%" keeps one trace in ten (`parentbased_traceidratio`).
Rounds interleave the modes; medians are printed.

    DATABASE_URL=postgres://... REDIS_URL=redis://... OPERATOR_BASE_URL=http://testserver \\
        .venv/bin/python bench/tracing_cost.py [--calls 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ("list_modules", "search_knowledge")


def child(calls: int) -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "operator_site.settings")
    from operator_core.telemetry import tracing

    traced = tracing.configure_tracing()
    import django

    django.setup()
    import time

    from django.core.handlers.wsgi import WSGIHandler
    from django.db import connection
    from django.test.utils import setup_test_environment

    from bench.hot_path import environ_for, for_measuring, requests_for, seeded_token, send

    setup_test_environment()
    database = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    results: dict[str, float] = {}
    try:
        organization, token = seeded_token()
        handler = WSGIHandler()
        requests = requests_for(organization)
        with for_measuring():
            for name in TOOLS:
                method, tool, arguments = requests[name]
                template = environ_for(method, tool, arguments, token)
                for _ in range(100):
                    send(handler, template)
                if traced:
                    tracing._state.provider.force_flush()  # type: ignore[union-attr]
                started = time.process_time()
                for _ in range(calls):
                    send(handler, template)
                if traced:
                    tracing._state.provider.force_flush()  # type: ignore[union-attr]
                results[name] = (time.process_time() - started) / calls * 1e6
    finally:
        connection.creation.destroy_test_db(database, verbosity=0)
    print(json.dumps({"traced": traced, **results}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        child(options.calls)
        return
    sys.path.insert(0, str(ROOT))
    from tests.telemetry.otlp_receiver import OtlpReceiver

    receiver = OtlpReceiver()
    receiver.start()
    base = {name: value for name, value in os.environ.items() if not name.startswith("OTEL_")}
    traced = {**base, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint}
    sampled = {**traced, "OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.1"}
    modes = {"off": base, "on": traced, "on 10%": sampled}
    figures: dict[str, dict[str, list[float]]] = {mode: {tool: [] for tool in TOOLS} for mode in modes}
    try:
        for _ in range(options.rounds):
            for mode, environment in modes.items():
                command = [sys.executable, __file__, "--child", "--calls", str(options.calls)]
                output = subprocess.run(command, env=environment, check=True, capture_output=True, text=True)
                measured = json.loads(output.stdout.strip().splitlines()[-1])
                if measured["traced"] != (mode != "off"):
                    raise SystemExit(f"the {mode} run traced={measured['traced']}")
                for tool in TOOLS:
                    figures[mode][tool].append(measured[tool])
    finally:
        receiver.stop()
    print(f"database={os.environ.get('DATABASE_URL', 'sqlite').split(':')[0]} calls={options.calls}")
    print(f"spans received: {len(receiver.received())}")
    print(f"{'tool':<18}" + "".join(f"{mode + ' cpu us':>16}{'x off':>7}" for mode in modes) + "   rounds")
    for tool in TOOLS:
        off = statistics.median(figures["off"][tool])
        line = f"{tool:<18}"
        for mode in modes:
            median = statistics.median(figures[mode][tool])
            line += f"{median:>16.0f}{median / off:>7.2f}"
        rounds = " | ".join(" ".join(f"{value:.0f}" for value in figures[mode][tool]) for mode in modes)
        print(f"{line}   {rounds}")


if __name__ == "__main__":
    main()
