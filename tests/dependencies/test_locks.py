"""The locks pin the whole tree with hashes, agree with each other and with the .in files
(docs/dependencies.md). Installing them with `--require-hashes` on a fresh machine is what
`make install` does in CI."""

import re
from pathlib import Path

from django.test import SimpleTestCase
from packaging.requirements import Requirement
from packaging.version import Version

PROJECT_DIR = Path(__file__).resolve().parent.parent.parent
# One requirement of a pip-compile lock: the pin line, then its `--hash` continuation lines.
ENTRY = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>\S+)(?P<rest>(?:[ \\]*\n +--hash=\S+)*)", re.M)


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_entries(filename: str) -> dict[str, tuple[str, list[str]]]:
    text = (PROJECT_DIR / filename).read_text()
    return {
        canonical(match["name"]): (match["version"], re.findall(r"--hash=(\S+)", match["rest"]))
        for match in ENTRY.finditer(text)
    }


def top_level(filename: str) -> list[Requirement]:
    lines = (PROJECT_DIR / filename).read_text().splitlines()
    return [Requirement(line.split("#")[0]) for line in lines if line.strip() and line[0] not in "#-"]


class LockTests(SimpleTestCase):
    def test_every_line_of_each_lock_is_an_exact_pin_with_sha256_hashes(self) -> None:
        for lock in ("requirements.txt", "requirements-dev.txt"):
            text = (PROJECT_DIR / lock).read_text()
            requirement_lines = [line for line in text.splitlines() if line and line[0] not in " #"]
            entries = lock_entries(lock)
            self.assertEqual(len(requirement_lines), len(entries), f"{lock} has a line that is not a pin")
            for name, (_version, hashes) in entries.items():
                self.assertTrue(hashes, f"{lock}: {name} has no hash")
                self.assertTrue(all(value.startswith("sha256:") for value in hashes), name)

    def test_the_dev_lock_holds_the_runtime_lock_at_the_same_versions(self) -> None:
        runtime, dev = lock_entries("requirements.txt"), lock_entries("requirements-dev.txt")
        for name, (version, hashes) in runtime.items():
            self.assertIn(name, dev)
            self.assertEqual(dev[name], (version, hashes), name)

    def test_each_lock_satisfies_its_top_level_requirements(self) -> None:
        for source, lock in (("requirements.in", "requirements.txt"), ("requirements-dev.in", "requirements-dev.txt")):
            entries = lock_entries(lock)
            for requirement in top_level(source):
                version, _hashes = entries[canonical(requirement.name)]
                self.assertTrue(requirement.specifier.contains(version), f"{lock}: {requirement} but {version}")

    def test_cryptography_and_jwcrypto_are_past_their_advisories(self) -> None:
        # cryptography 48.0.0: GHSA-537c-gmf6-5ccf, CVE-2026-69247; jwcrypto 1.5.8: CVE-2026-80179 (issue 14).
        entries = lock_entries("requirements.txt")
        self.assertEqual(Version(entries["cryptography"][0]).major, 50)
        self.assertGreaterEqual(Version(entries["jwcrypto"][0]), Version("1.6.1"))
