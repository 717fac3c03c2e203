"""examples/operator_client.py, run as a person runs it, against a live server on a non-default port.

The script finds the endpoint from PORT (as after `make run PORT=…`), prints the
sign-in URL (`--no-browser`), and listens on a loopback port; this test plays
the browser with the real sign-in and consent pages and follows the redirect
to the script's listener, as a browser would. With no server it must fail in
one line.
"""

import html
import os
import re
import socket
import subprocess
import sys
import threading
import unittest
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
from django.conf import settings
from django.test import LiveServerTestCase, SimpleTestCase

from examples.operator_client import DEFAULT_URL, endpoint_url
from oauth.views import NO_ELIGIBLE_ORGANIZATION
from organizations.models import Role
from tests.e2e.browser_flow import post_forms_until_redirect
from tests.factories import PASSWORD, make_membership, make_module, make_organization, make_source, make_user
from tests.flows.support import live_base_url_settings

SCRIPT = Path(settings.BASE_DIR) / "examples" / "operator_client.py"
AUTHORIZE_URL = re.compile(r"\s(https?://\S+/api/auth/oauth2/authorize\?\S+)")
TIMEOUT_SECONDS = 120


def script_environment(**variables: str) -> dict[str, str]:
    """This process's environment without the test suite's OPERATOR_BASE_URL, plus `variables`."""
    environment = {key: value for key, value in os.environ.items() if key not in ("OPERATOR_BASE_URL", "HOST")}
    return {**environment, **variables}


class ExampleClientTests(LiveServerTestCase):
    host = "127.0.0.1"

    def setUp(self) -> None:
        self.enterContext(live_base_url_settings(self.live_server_url))
        organization = make_organization(slug="acme", name="Acme")
        make_membership(role=Role.MEMBER, user=make_user(email="bob@acme.test"), organization=organization)
        make_module(organization=organization, title="Forklift safety")
        make_source(organization=organization, title="Handbook", text="Safety training happens every spring.")

    def start_script(self, *arguments: str) -> subprocess.Popen:
        process = subprocess.Popen(
            [sys.executable, "-u", str(SCRIPT), "--no-browser", *arguments],
            env=script_environment(PORT=str(self.server_thread.port)),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.addCleanup(process.kill)
        timer = threading.Timer(TIMEOUT_SECONDS, process.kill)
        timer.start()
        self.addCleanup(timer.cancel)
        return process

    def printed_authorization_url(self, process: subprocess.Popen) -> str:
        printed = []
        for line in process.stdout:
            printed.append(line)
            found = AUTHORIZE_URL.search(line)
            if found:
                return found.group(1)
        self.fail(f"no sign-in URL printed: {''.join(printed)} {process.stderr.read()}")

    def test_follows_port_and_completes_the_flow(self) -> None:
        port = str(self.server_thread.port)
        process = self.start_script("--query", "safety training")

        authorization_url = self.printed_authorization_url(process)
        self.assertTrue(authorization_url.startswith(f"http://127.0.0.1:{port}/"), authorization_url)
        redirect_uri = parse_qs(urlsplit(authorization_url).query)["redirect_uri"][0]
        with httpx.Client(timeout=30) as browser:
            answer = post_forms_until_redirect(
                browser, authorization_url, redirect_uri=redirect_uri, email="bob@acme.test", password=PASSWORD
            )
            browser.get(f"{redirect_uri}?{urlencode(answer)}")
        output, errors = process.communicate(timeout=TIMEOUT_SECONDS)

        self.assertEqual(process.returncode, 0, errors)
        self.assertIn("protocol 2026-07-28", output)
        self.assertIn("5 tools:", output)
        self.assertIn("Organization: Acme (acme)", output)
        self.assertIn("module: Forklift safety", output)
        self.assertIn("Handbook", output)

    def test_refused_sign_in_stops_the_script_at_once_with_the_reason(self) -> None:
        make_membership(role=Role.LEARNER, user=make_user(email="lea@acme.test"))
        process = self.start_script()
        authorization_url = self.printed_authorization_url(process)

        with httpx.Client(timeout=30, follow_redirects=True) as browser:
            refused = sign_in_until_refused(browser, authorization_url, email="lea@acme.test", password=PASSWORD)
            browser.get(refused)
        output, errors = process.communicate(timeout=30)

        self.assertEqual(process.returncode, 1)
        self.assertEqual(errors, f"Sign-in refused (access_denied): {NO_ELIGIBLE_ORGANIZATION}\n")
        self.assertNotIn("tools:", output)

    def test_localhost_for_127001_is_named_in_one_line_with_the_url_to_use(self) -> None:
        port = self.server_thread.port
        served = f"http://127.0.0.1:{port}/api/mcp/operator"

        stderr = run_script_to_failure(
            self, "--no-browser", "--url", f"http://localhost:{port}/api/mcp/operator", environment=script_environment()
        )

        self.assertEqual(
            stderr,
            f"http://localhost:{port}/api/mcp/operator is not the URL this server serves, {served}: "
            f"run again with --url {served}\n",
        )


def sign_in_until_refused(browser: httpx.Client, authorization_url: str, *, email: str, password: str) -> str:
    """Sign in from `authorization_url` to the 403 page; return its "Return to the application" link."""
    sign_in_page = browser.get(authorization_url)
    fields = dict(re.findall(r'name="(csrfmiddlewaretoken|next)" value="([^"]*)"', sign_in_page.text))
    refused = browser.post(
        str(sign_in_page.url),
        data={**fields, "next": html.unescape(fields["next"]), "email": email, "password": password},
    )
    assert refused.status_code == 403, refused.text[:500]
    return html.unescape(re.search(r'<a href="([^"]+)" id="return-to-application">', refused.text).group(1))


def run_script_to_failure(test: unittest.TestCase, *arguments: str, environment: dict[str, str]) -> str:
    """Run the example with `arguments`; check it failed with status 1 and printed nothing on stdout; its stderr."""
    finished = subprocess.run(
        [sys.executable, str(SCRIPT), *arguments],
        env=environment,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
    )
    test.assertEqual(finished.returncode, 1)
    test.assertEqual(finished.stdout, "")
    return finished.stderr


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ExampleClientAddressTests(SimpleTestCase):
    def test_url_then_base_url_then_port_then_the_default(self) -> None:
        environ = {"OPERATOR_BASE_URL": "http://127.0.0.1:9100/", "PORT": "9200"}

        self.assertEqual(
            endpoint_url("https://op.example/api/mcp/operator", environ), "https://op.example/api/mcp/operator"
        )
        self.assertEqual(endpoint_url(None, environ), "http://127.0.0.1:9100/api/mcp/operator")
        self.assertEqual(endpoint_url(None, {"PORT": "9200"}), "http://127.0.0.1:9200/api/mcp/operator")
        self.assertEqual(
            endpoint_url(None, {"HOST": "0.0.0.0", "PORT": "9200"}), "http://0.0.0.0:9200/api/mcp/operator"
        )
        self.assertEqual(endpoint_url(None, {}), DEFAULT_URL)

    def test_says_in_one_line_that_no_server_answers(self) -> None:
        closed = f"http://127.0.0.1:{free_port()}"

        stderr = run_script_to_failure(self, "--no-browser", environment=script_environment(OPERATOR_BASE_URL=closed))

        self.assertEqual(
            stderr,
            f"No server answers at {closed}/api/mcp/operator (Connection refused). "
            "Start it with `make run`, or pass --url.\n",
        )
