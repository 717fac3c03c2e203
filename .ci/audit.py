"""`make audit`: pip-audit of each lock, strict, skipped without failing when no advisory service answers.

    python .ci/audit.py requirements.txt requirements-dev.txt [-- PIP_AUDIT_ARGS...]

pip-audit looks every pinned release up in an advisory service (PyPI's JSON
API by default). When that service cannot be reached, pip-audit either stops
on the connection error or skips every package as "not found on PyPI" and
still prints "No known vulnerabilities found". A skipped package is never
reported as clean here (docs/dependencies.md, "Auditing"):

1. `pip-audit --strict` runs first: it fails on a known advisory and on any
   package it could not audit. Exit 0 from it is the only "clean".
2. When it fails, its JSON report (not strict) says why:
   - a known advisory, or some packages audited and others not: fail;
   - no package audited at all, or a connection error: the advisory service is
     unreachable. Print "advisory service unreachable: N packages not audited"
     and exit 0, so a machine without the service skips the audit, as CI does.

Arguments after `--` go to pip-audit unchanged (for example another service:
`-s osv`, `--osv-url`).
"""

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# A pinned line of a pip-compile lock: `name==version \`.
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", re.MULTILINE)
# How requests names a failure to reach a host; pip-audit lets these escape as a traceback.
NETWORK_FAILURES = re.compile(
    r"requests\.exceptions\.(ConnectionError|ProxyError|SSLError|Timeout|ConnectTimeout|ReadTimeout)"
    r"|pip_audit\._service\.interface\.(ConnectionError|ServiceError)"
)


@dataclass(frozen=True)
class Verdict:
    passed: bool
    message: str


def pinned_count(lock: Path) -> int:
    return len(PIN.findall(lock.read_text()))


def classify(report: dict[str, Any]) -> Verdict:
    """The verdict on a pip-audit JSON report (`--format json`, not strict)."""
    dependencies = report.get("dependencies", [])
    skipped = [dependency for dependency in dependencies if "skip_reason" in dependency]
    vulnerable = [dependency for dependency in dependencies if dependency.get("vulns")]
    if vulnerable:
        lines = [
            f"{dependency['name']} {dependency.get('version', '')}: {vuln['id']}"
            + (f" (fixed in {', '.join(vuln['fix_versions'])})" if vuln.get("fix_versions") else "")
            for dependency in vulnerable
            for vuln in dependency["vulns"]
        ]
        return Verdict(False, "known advisories:\n  " + "\n  ".join(lines))
    if dependencies and len(skipped) == len(dependencies):
        return Verdict(
            True,
            f"advisory service unreachable: {len(skipped)} packages not audited ({skipped[0]['skip_reason']})",
        )
    if skipped:
        names = ", ".join(dependency["name"] for dependency in skipped)
        return Verdict(False, f"{len(skipped)} packages not audited: {names}")
    # Reached only when the strict run failed for a reason the report does not show.
    return Verdict(False, "pip-audit --strict failed but its report shows no advisory and no skipped package")


def pip_audit(lock: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pip_audit", "--disable-pip", "--progress-spinner", "off", "-r", str(lock), *args]
    return subprocess.run(command, capture_output=True, text=True, check=False)  # noqa: S603


def audit(lock: Path, extra_args: list[str]) -> bool:
    strict = pip_audit(lock, "--strict", *extra_args)
    if strict.returncode == 0:
        summary = (strict.stdout + strict.stderr).strip() or "No known vulnerabilities found"
        print(f"{lock}: {pinned_count(lock)} packages audited: {summary}")
        return True
    run = pip_audit(lock, "--format", "json", *extra_args)
    try:
        verdict = classify(json.loads(run.stdout))
    except json.JSONDecodeError:
        failure = NETWORK_FAILURES.search(run.stderr)
        if failure is None:
            print(f"{lock}: pip-audit failed:\n{run.stderr.strip()}")
            return False
        verdict = Verdict(
            True, f"advisory service unreachable: {pinned_count(lock)} packages not audited ({failure.group(0)})"
        )
    print(f"{lock}: {verdict.message}")
    return verdict.passed


def main(argv: list[str]) -> int:
    split = argv.index("--") if "--" in argv else len(argv)
    locks, extra_args = argv[:split], argv[split + 1 :]
    if not locks:
        print(__doc__)
        return 2
    results = [audit(Path(lock), extra_args) for lock in locks]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
