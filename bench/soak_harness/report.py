"""The one report of a soak run: answers, the unexplained ones in full, latency per phase, faults, invariants."""

from __future__ import annotations

from collections import Counter, defaultdict

from bench.soak_harness.answers import UNEXPLAINED, Answer
from bench.soak_harness.invariants import Result

MAX_UNEXPLAINED_PRINTED = 1000


def _group(kind: str) -> str:
    """Answers of the same sort of request, for the latency table."""
    if kind.startswith("tool:"):
        return "tool call"
    if kind.startswith(("refresh", "token:")):
        return "token"
    return kind.split(":")[0]


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def print_report(answers: list[Answer], invariants: dict[str, Result], *, header: list[str], duration: float) -> None:
    print("\n== Soak run")
    for line in header:
        print(f"  {line}")

    print(f"\n== Requests by answer ({len(answers)} in {duration:.0f} s)")
    counts = Counter((_group(a.kind), a.status, a.code, a.category) for a in answers)
    print(f"  {'request':<20}{'status':>7}  {'code':<28}{'category':<12}{'count':>7}")
    for (group, status, code, category), count in sorted(counts.items()):
        print(f"  {group:<20}{status:>7}  {code:<28}{category:<12}{count:>7}")

    unexplained = [a for a in answers if a.category == UNEXPLAINED]
    print(f"\n== Unexplained answers ({len(unexplained)}), by phase")
    runs: dict[tuple[str, str, int, str], list[Answer]] = defaultdict(list)
    for answer in unexplained:
        runs[(answer.phase, _group(answer.kind), answer.status, answer.code)].append(answer)
    for (phase, group, status, code), same in sorted(runs.items(), key=lambda item: item[1][0].started):
        print(
            f"  {phase:<17} {group:<12} {status:>3} {code:<22} x{len(same):<5} "
            f"t={same[0].started:.1f}..{same[-1].started:.1f}s  {same[0].detail[:70]}"
        )
    print("  each one:")
    for answer in unexplained[:MAX_UNEXPLAINED_PRINTED]:
        print(
            f"  t={answer.started:7.1f}s {answer.phase:<17} {answer.kind:<22} {answer.status:>3} {answer.code:<24} "
            f"{answer.detail[:90]}"
        )
    if len(unexplained) > MAX_UNEXPLAINED_PRINTED:
        print(f"  ... and {len(unexplained) - MAX_UNEXPLAINED_PRINTED} more")

    print("\n== Latency per phase (ms)")
    latencies: dict[tuple[str, str], list[float]] = defaultdict(list)
    for answer in answers:
        if answer.status:
            latencies[(answer.phase, _group(answer.kind))].append(answer.latency * 1000)
    print(f"  {'phase':<20}{'request':<20}{'count':>7}{'p50':>9}{'p99':>9}")
    for (phase, group), values in sorted(latencies.items()):
        print(
            f"  {phase:<20}{group:<20}{len(values):>7}{_percentile(values, 0.5):>9.1f}{_percentile(values, 0.99):>9.1f}"
        )

    print("\n== Invariants")
    for name, (held, lines) in invariants.items():
        print(f"  [{'held' if held else 'BROKEN'}] {name}")
        for line in lines:
            print(f"      {line}")
    broken = [name for name, (held, _) in invariants.items() if not held]
    print(f"\n== {'Every invariant held' if not broken else 'Broken: ' + ', '.join(broken)}")
