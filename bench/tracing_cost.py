"""What tracing costs the app server per `tools/call`: this process's CPU with tracing off and on.

Each measurement is a process of its own (tracing is set up once per process,
before the first database connection, as a gunicorn worker does after its fork):
it seeds the demo data into a throw-away test database, then sends `list_modules`
and `search_knowledge` through Django's real `WSGIHandler` and reports its own
CPU time per call. "on" exports every span (the default sampler keeps all) over
OTLP/HTTP to a receiver in this parent process, on a real socket, and records
the metrics (Prometheus registry and OTLP instruments); its clock stops only
after the last batch was sent (`force_flush`), so the exporter's thread is
counted. "on 10%" keeps one trace in ten (`parentbased_traceidratio`). Rounds
interleave the modes; medians are printed, and the spans received per call.

With `--instructions` each process runs under callgrind (valgrind) instead and
reports the instructions it executed per call, its exporter's thread included:
a count a busy machine does not disturb (docs/development/performance.md#tracing).
The test database is then made once and kept until the last process is done.

    DATABASE_URL=postgres://... REDIS_URL=redis://... OPERATOR_BASE_URL=http://testserver \\
        .venv/bin/python bench/tracing_cost.py [--calls 2000] [--rounds 3] [--instructions]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ("list_modules", "search_knowledge")
WARM_UP_CALLS = 100
# A metrics token of the length production asks for: the Prometheus instruments record too.
METRICS_TOKEN = "bench-metrics-token-" + "0" * 32


def child(calls: int, *, keep_database: bool, callgrind: bool) -> None:
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

    def collect(state: str) -> None:
        if callgrind:
            subprocess.run(["callgrind_control", "--instr=" + state, str(os.getpid())], check=True, capture_output=True)

    setup_test_environment()
    database = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=keep_database)
    results: dict[str, float] = {}
    try:
        organization, token = seeded_token()
        handler = WSGIHandler()
        requests = requests_for(organization)
        with for_measuring():
            for name in TOOLS:
                method, tool, arguments = requests[name]
                template = environ_for(method, tool, arguments, token)
                for _ in range(WARM_UP_CALLS):
                    send(handler, template)
                if traced:
                    tracing._state.provider.force_flush()  # type: ignore[union-attr]
                collect("on")
                started = time.process_time()
                for _ in range(calls):
                    send(handler, template)
                if traced:
                    tracing._state.provider.force_flush()  # type: ignore[union-attr]
                results[name] = (time.process_time() - started) / calls * 1e6
                collect("off")
                if callgrind:
                    # One count per tool: callgrind writes what it counted so far and starts again at zero.
                    subprocess.run(["callgrind_control", "--dump=" + name, str(os.getpid())], check=True)
    finally:
        if not keep_database:
            connection.creation.destroy_test_db(database, verbosity=0)
    print(json.dumps({"traced": traced, **results}))


def drop_database() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "operator_site.settings")
    import django

    django.setup()
    from django.db import connection

    name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, keepdb=True)
    connection.creation.destroy_test_db(name, verbosity=0)


def instructions_per_call(output_prefix: Path, calls: int) -> dict[str, float]:
    """Each tool's instructions per call, from the dumps callgrind wrote under `output_prefix`."""
    counts: dict[str, float] = {}
    for path in output_prefix.parent.glob(output_prefix.name + "*"):
        text = path.read_text(errors="replace")
        trigger = next((line for line in text.splitlines() if line.startswith("desc: Trigger:")), "")
        totals = next((line for line in text.splitlines() if line.startswith("totals:")), "totals: 0")
        for tool in TOOLS:
            if trigger.endswith(tool):
                counts[tool] = int(totals.split()[1]) / calls
        path.unlink()
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--instructions", action="store_true", help="count instructions under callgrind")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--keep-database", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--callgrind", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--drop-database", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.drop_database:
        drop_database()
        return
    if options.child:
        child(options.calls, keep_database=options.keep_database, callgrind=options.callgrind)
        return
    sys.path.insert(0, str(ROOT))
    from tests.telemetry.otlp_receiver import OtlpReceiver

    receiver = OtlpReceiver()
    receiver.start()
    base = {name: value for name, value in os.environ.items() if not name.startswith("OTEL_")}
    base.pop("OPERATOR_METRICS_TOKEN", None)
    traced = {**base, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OPERATOR_METRICS_TOKEN": METRICS_TOKEN}
    sampled = {**traced, "OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.1"}
    modes = {"off": base, "on": traced, "on 10%": sampled}
    figures: dict[str, dict[str, list[float]]] = {mode: {tool: [] for tool in TOOLS} for mode in modes}
    spans_per_call: list[float] = []
    scratch = Path(tempfile.mkdtemp(prefix="tracing_cost-"))
    command = [sys.executable, __file__, "--child", "--calls", str(options.calls)]
    try:
        if options.instructions:
            # The test database made and seeded once, outside valgrind, where migrating is quick.
            subprocess.run([*command[:3], "--calls", "1", "--keep-database"], env=base, check=True, capture_output=True)
        for _ in range(options.rounds):
            for mode, environment in modes.items():
                prefix = scratch / mode.replace(" ", "").replace("%", "")
                run = command
                if options.instructions:
                    run = [
                        "valgrind",
                        "--tool=callgrind",
                        "--instr-atstart=no",
                        f"--callgrind-out-file={prefix}.%p",
                        *command,
                        "--keep-database",
                        "--callgrind",
                    ]
                if options.instructions:
                    # Strings hash alike in every process, so that two counts of the same code agree.
                    environment = {**environment, "PYTHONHASHSEED": "0"}
                received = len(receiver.received())
                output = subprocess.run(run, env=environment, check=True, capture_output=True, text=True)
                measured = json.loads(output.stdout.strip().splitlines()[-1])
                if measured["traced"] != (mode != "off"):
                    raise SystemExit(f"the {mode} run traced={measured['traced']}")
                if mode == "on":
                    spans_per_call.append(
                        (len(receiver.received()) - received) / (len(TOOLS) * (WARM_UP_CALLS + options.calls))
                    )
                if options.instructions:
                    measured.update(instructions_per_call(prefix, options.calls))
                for tool in TOOLS:
                    figures[mode][tool].append(measured[tool])
    finally:
        receiver.stop()
        if options.instructions:
            subprocess.run([sys.executable, __file__, "--drop-database"], env=base, check=False)
    unit = "Ir" if options.instructions else "cpu us"
    print(f"database={os.environ.get('DATABASE_URL', 'sqlite').split(':')[0]} calls={options.calls} unit={unit}")
    print(f"spans received per traced call: {statistics.median(spans_per_call):.2f}")
    print(f"{'tool':<18}" + "".join(f"{mode + ' ' + unit:>16}{'x off':>7}" for mode in modes) + "   rounds")
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
