"""A real Prometheus scrapes a live gunicorn's `/metrics` (docs/operations.md#metrics).

Debian's `prometheus` binary, started here with a configuration of its own in a
temporary folder (never the system service), scrapes a gunicorn with two
workers once a second: one job with the bearer token from a file, as
deploy/prometheus.yml does, one without. After tool calls, Prometheus's query
API returns the tool-call histogram summed over both workers; the job without
the token is down, refused with 401. The test waits for scrapes, which come
every second, never for a time window's edge.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar

import httpx
from django.conf import settings
from django.test import SimpleTestCase, TransactionTestCase, override_settings

from tests.factories import make_membership, make_module, token_for
from tests.flows.live_gunicorn import LiveGunicorn
from tests.live_servers import free_port, stop, wait_for_port
from tests.mcp_requests import envelope, routing_headers
from tests.support import require

PROMETHEUS = "/usr/bin/prometheus"
PROMTOOL = "/usr/bin/promtool"
DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
METRICS_TOKEN = "e2e-metrics-token-0123456789abcdefghijklmnop"
CALLS = 7
SCRAPE_WAIT_SECONDS = 30
CONFIG = """
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: operator
    authorization:
      credentials_file: {token_file}
    static_configs:
      - targets: ["{target}"]
  - job_name: operator-without-token
    static_configs:
      - targets: ["{target}"]
"""


def require_prometheus() -> str:
    require(Path(PROMETHEUS).exists(), "Debian's prometheus is not installed", component="prometheus")
    return PROMETHEUS


class PrometheusScrapeTests(TransactionTestCase):
    server: ClassVar[LiveGunicorn]
    prometheus_url: ClassVar[str]

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        binary = require_prometheus()
        cls.server = LiveGunicorn(workers=2, threads=1, environment={"OPERATOR_METRICS_TOKEN": METRICS_TOKEN})
        cls.addClassCleanup(cls.server.stop)
        workdir = Path(tempfile.mkdtemp(prefix="operator-prometheus-"))
        cls.addClassCleanup(shutil.rmtree, workdir, ignore_errors=True)
        token_file = workdir / "metrics-token"
        token_file.write_text(METRICS_TOKEN)
        target = cls.server.base_url.removeprefix("http://")
        (workdir / "prometheus.yml").write_text(CONFIG.format(token_file=token_file, target=target))
        port = free_port()
        log = workdir / "prometheus.log"
        process = subprocess.Popen(  # the package's binary, our own arguments, no shell
            [
                binary,
                f"--config.file={workdir / 'prometheus.yml'}",
                f"--storage.tsdb.path={workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
        )
        cls.addClassCleanup(stop, process)
        wait_for_port(port, process, log)
        cls.prometheus_url = f"http://127.0.0.1:{port}"

    def query(self, expression: str) -> list[dict[str, Any]]:
        answer = httpx.get(f"{self.prometheus_url}/api/v1/query", params={"query": expression}, timeout=5).json()
        self.assertEqual(answer["status"], "success", answer)
        return answer["data"]["result"]

    def wait_for(self, expression: str, expected: float) -> list[dict[str, Any]]:
        """The query's result once its first value is `expected`, within a few scrapes."""
        deadline = time.monotonic() + SCRAPE_WAIT_SECONDS
        result: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            result = self.query(expression)
            if result and float(result[0]["value"][1]) == expected:
                return result
            time.sleep(0.5)
        self.fail(f"{expression} never reached {expected}: {json.dumps(result)}")

    def test_prometheus_sees_the_tool_calls_of_every_worker(self) -> None:
        membership = make_membership()
        make_module(organization=membership.organization)
        base = self.server.base_url
        # A token of the live server: its issuer and audience are its own origin's.
        with override_settings(
            OPERATOR={
                **settings.OPERATOR,
                "issuer": f"{base}/api/auth",
                "operator_endpoint_url": f"{base}/api/mcp/operator",
            }
        ):
            token = token_for(membership)
        message = envelope("tools/call", {"name": "list_modules", "arguments": {}})
        for _ in range(CALLS):
            # A connection each: gunicorn hands them to either worker.
            response = httpx.post(
                f"{self.server.base_url}/api/mcp/operator",
                json=message,
                headers={**routing_headers(message), "Authorization": f"Bearer {token}"},
                timeout=10,
            )
            self.assertEqual(response.status_code, 200, response.text)

        selector = 'job="operator",mcp_method_name="tools/call",gen_ai_tool_name="list_modules",error_type=""'
        self.wait_for(f"sum(mcp_server_operation_duration_seconds_count{{{selector}}})", CALLS)
        buckets = self.query(f'mcp_server_operation_duration_seconds_bucket{{{selector},le="+Inf"}}')
        self.assertEqual(float(buckets[0]["value"][1]), CALLS)
        p99 = self.query(
            f"histogram_quantile(0.99, sum by (le) (mcp_server_operation_duration_seconds_bucket{{{selector}}}))"
        )
        self.assertGreater(float(p99[0]["value"][1]), 0)

    def test_a_scrape_without_the_token_is_refused(self) -> None:
        self.wait_for('up{job="operator-without-token"}', 0)
        self.wait_for('up{job="operator"}', 1)
        targets = httpx.get(f"{self.prometheus_url}/api/v1/targets", timeout=5).json()["data"]["activeTargets"]
        refused = next(target for target in targets if target["labels"]["job"] == "operator-without-token")
        self.assertIn("401", refused["lastError"])


class ShippedConfigurationTests(SimpleTestCase):
    def test_promtool_accepts_the_shipped_scrape_configuration_and_alerts(self) -> None:
        require(Path(PROMTOOL).exists(), "Debian's prometheus (promtool) is not installed", component="prometheus")
        with tempfile.TemporaryDirectory(prefix="operator-promtool-") as folder:
            # The shipped files name /etc/prometheus/: the same files, in a folder of the test's own.
            for name in ("prometheus.yml", "prometheus-alerts.yml"):
                text = (DEPLOY / name).read_text().replace("/etc/prometheus/", f"{folder}/")
                (Path(folder) / name).write_text(text)
            (Path(folder) / "operator-metrics-token").write_text(METRICS_TOKEN)
            result = subprocess.run(  # the package's binary, our own arguments, no shell
                [PROMTOOL, "check", "config", f"{folder}/prometheus.yml"],
                capture_output=True,
                text=True,
                check=False,
                timeout=60,
            )

        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("SUCCESS: 7 rules found", result.stdout + result.stderr)
