"""`make audit` (.ci/audit.py): fails on an advisory or an unaudited package, and skips,
saying so, when no advisory service answers; a skipped package is never reported clean.

The service is a local stand-in for OSV's query API (pip-audit's `-s osv --osv-url`),
so each outcome is produced by the real pip-audit.
"""

import importlib.util
import json
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import ClassVar

from django.test import SimpleTestCase

PROJECT_DIR = Path(__file__).resolve().parent.parent.parent
AUDIT_SCRIPT = PROJECT_DIR / ".ci" / "audit.py"
ADVISORY = {
    "id": "GHSA-537c-gmf6-5ccf",
    "summary": "Vulnerable OpenSSL included in cryptography wheels",
    "affected": [
        {
            "package": {"name": "cryptography", "ecosystem": "PyPI"},
            "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": "50.0.0"}]}],
        }
    ],
}
# pip-audit reads pins and hashes only (--disable-pip): the hashes need not be real.
LOCK = "cryptography==48.0.0 \\\n    --hash=sha256:{0}\nsqlparse==0.6.1 \\\n    --hash=sha256:{0}\n".format("0" * 64)


def load_audit_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ci_audit", AUDIT_SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class AdvisoryService(BaseHTTPRequestHandler):
    """OSV's POST /v1/query: an advisory for cryptography in mode "advisory", 404 in mode "down"."""

    mode: ClassVar[str] = "clean"

    def do_POST(self) -> None:
        query = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.mode == "down":
            self.send_error(404)
            return
        vulnerable = self.mode == "advisory" and query["package"]["name"] == "cryptography"
        body = json.dumps({"vulns": [ADVISORY]} if vulnerable else {}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


class AuditScriptTests(SimpleTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.server = ThreadingHTTPServer(("127.0.0.1", 0), AdvisoryService)
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        cls.addClassCleanup(cls.server.server_close)
        cls.addClassCleanup(cls.server.shutdown)

    def setUp(self) -> None:
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.folder = Path(folder.name)
        self.lock = self.folder / "requirements.txt"
        self.lock.write_text(LOCK)

    def audit(self, mode: str, *, port: int | None = None) -> subprocess.CompletedProcess[str]:
        AdvisoryService.mode = mode
        url = f"http://127.0.0.1:{port or self.server.server_address[1]}/v1/query"
        args = ["-s", "osv", "--osv-url", url, "--cache-dir", str(self.folder / "cache"), "--timeout", "5"]
        command = [sys.executable, str(AUDIT_SCRIPT), str(self.lock), "--", *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)

    def test_a_lock_without_advisories_passes(self) -> None:
        result = self.audit("clean")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("2 packages audited: No known vulnerabilities found", result.stdout)

    def test_an_advisory_fails_and_is_named(self) -> None:
        result = self.audit("advisory")
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn("cryptography 48.0.0: GHSA-537c-gmf6-5ccf (fixed in 50.0.0)", result.stdout)

    def test_a_service_that_answers_nothing_is_a_skip_never_a_clean_audit(self) -> None:
        result = self.audit("down")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("advisory service unreachable: 2 packages not audited", result.stdout)
        self.assertNotIn("No known vulnerabilities", result.stdout)

    def test_a_service_that_refuses_connections_is_a_skip(self) -> None:
        with ThreadingHTTPServer(("127.0.0.1", 0), AdvisoryService) as closed:
            port = closed.server_address[1]
        result = self.audit("clean", port=port)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("advisory service unreachable: 2 packages not audited", result.stdout)


class VerdictTests(SimpleTestCase):
    """The verdict on pip-audit's JSON report, as pip-audit words it when PyPI's JSON API is out of reach."""

    def setUp(self) -> None:
        self.classify = load_audit_script().classify

    def skipped(self, name: str) -> dict[str, str]:
        return {"name": name, "skip_reason": f"Dependency not found on PyPI and could not be audited: {name} (1.0)"}

    def test_every_package_skipped_is_an_unreachable_service(self) -> None:
        verdict = self.classify({"dependencies": [self.skipped("django"), self.skipped("redis")]})
        self.assertTrue(verdict.passed)
        self.assertTrue(verdict.message.startswith("advisory service unreachable: 2 packages not audited"))

    def test_some_packages_skipped_fails(self) -> None:
        audited = {"name": "django", "version": "5.2.19", "vulns": []}
        verdict = self.classify({"dependencies": [audited, self.skipped("private-package")]})
        self.assertFalse(verdict.passed)
        self.assertEqual(verdict.message, "1 packages not audited: private-package")

    def test_an_advisory_fails_even_when_other_packages_were_skipped(self) -> None:
        vulnerable = {"name": "jwcrypto", "version": "1.5.8", "vulns": [{"id": "CVE-2026-80179", "fix_versions": []}]}
        verdict = self.classify({"dependencies": [vulnerable, self.skipped("django")]})
        self.assertFalse(verdict.passed)
        self.assertIn("jwcrypto 1.5.8: CVE-2026-80179", verdict.message)
