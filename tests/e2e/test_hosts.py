"""Real MCP hosts against a live gunicorn, following docs/connecting.md: Claude Code, and Gemini CLI bridged.

The hosts are installed from npm at the versions the page names
(tests/e2e/hosts/package-lock.json; CI runs `npm ci` there), each with a home
folder of its own. Each opens the authorization URL with `$BROWSER`, which is
tests/e2e/host_browser.py: it signs in and allows consent as the person
would. Both sign in under a pseudo-terminal, as they need one.

- Claude Code 2.1.331, native HTTP: `claude mcp add --transport http`, then
  `claude mcp login` under `script`, then `claude mcp list` (its health check:
  server/discover and tools/list with the new token). It lists tools only in a
  session, which needs a model account: `claude -p` with a placeholder API
  key and a model URL where nothing listens prints its session's first line,
  naming the connected servers and every tool, before any model call fails.
- Gemini CLI 0.61.0 through mcp-remote 0.15.1 `--protocol auto`, configured in
  `.gemini/settings.json` as the page says (the bridge from this folder's
  install instead of `npx -y`): the interactive session runs in tmux, where
  mcp-remote signs in when the session starts, and `/mcp list` shows the
  tools. Gemini needs an authentication type to start; a placeholder API key
  is never used, since no prompt is sent.

CI cannot reach claude.ai: the server's CIMD fetcher answers Claude Code's
document address with the captured document (tests/e2e/host_settings.py).
Everything else is real.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from django.test import TransactionTestCase

from oauth.models import AccessToken, Application
from organizations.models import Role
from tests.factories import PASSWORD, make_membership, make_organization, make_user
from tests.flows.live_gunicorn import LiveGunicorn
from tests.hosts.captured import CLAUDE_CODE_CLIENT_ID
from tests.live_servers import free_port
from tests.support import require_hosts

BASE_DIR = Path(__file__).resolve().parents[2]
HOSTS_DIR = Path(__file__).resolve().parent / "hosts"
SERVER_NAME = "service-operator"
EXPECTED_TOOLS = ["fetch_knowledge", "get_module", "list_modules", "list_sources", "search_knowledge"]
EMAIL = "bob@acme.test"
STEP_TIMEOUT_SECONDS = 120
POLL_SECONDS = 0.5
ASK_AGAIN_SECONDS = 10
GEMINI_EMPTY_INPUT = "Type your message"


def wait_for(condition: Callable[[], bool], *, what: str, context: Callable[[], str]) -> None:
    """Poll `condition` until it holds; fail after STEP_TIMEOUT_SECONDS with `context()`."""
    deadline = time.monotonic() + STEP_TIMEOUT_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen:\n{context()}")
        time.sleep(POLL_SECONDS)


class RealHostTests(TransactionTestCase):
    server: ClassVar[LiveGunicorn]
    paths: ClassVar[dict[str, str]]

    @classmethod
    def setUpClass(cls) -> None:
        cls.paths = require_hosts(HOSTS_DIR)
        super().setUpClass()
        cls.server = LiveGunicorn(
            workers=2, threads=4, environment={"DJANGO_SETTINGS_MODULE": "tests.e2e.host_settings"}
        )
        cls.addClassCleanup(cls.server.stop)

    def setUp(self) -> None:
        organization = make_organization(slug="acme", name="Acme")
        self.user = make_user(email=EMAIL, password=PASSWORD)
        make_membership(role=Role.MEMBER, user=self.user, organization=organization)
        self.endpoint = f"{self.server.base_url}/api/mcp/operator"
        workdir = Path(tempfile.mkdtemp(prefix="operator-hosts-"))
        self.addCleanup(shutil.rmtree, workdir, ignore_errors=True)
        self.home = workdir / "home"
        self.project = workdir / "project"
        self.home.mkdir()
        self.project.mkdir()
        self.browser_log = workdir / "browser.jsonl"
        self.browser_log.touch()
        self.browser = self._browser_command(workdir)

    def _browser_command(self, workdir: Path) -> Path:
        """An executable for `$BROWSER` that runs tests/e2e/host_browser.py as this test's person."""
        config = workdir / "browser.json"
        config.write_text(json.dumps({"email": EMAIL, "password": PASSWORD, "log": str(self.browser_log)}))
        command = workdir / "browser"
        module = [sys.executable, "-m", "tests.e2e.host_browser", str(config)]
        command.write_text(f'#!/bin/sh\ncd {shlex.quote(str(BASE_DIR))} && exec {shlex.join(module)} "$@"\n')
        command.chmod(0o700)
        return command

    def environment(self, **extra: str) -> dict[str, str]:
        """A host's whole environment: its own home, the browser, and nothing of the test run's."""
        return {
            "HOME": str(self.home),
            "PATH": os.environ.get("PATH", ""),
            "LANG": "C.UTF-8",
            "TERM": "xterm-256color",
            "BROWSER": str(self.browser),
            **extra,
        }

    def browser_visits(self) -> list[dict]:
        return [json.loads(line) for line in self.browser_log.read_text().splitlines()]

    def assert_signed_in_once(self) -> None:
        visits = self.browser_visits()
        self.assertEqual(len(visits), 1, visits)
        self.assertNotIn("error", visits[0], visits[0])
        self.assertEqual(visits[0]["callback_status"], 200, visits[0])
        self.assertIn("code", visits[0]["answer"])

    def assert_person_holds_a_token_from(self, application: Application) -> None:
        self.assertTrue(AccessToken.objects.filter(application=application, user=self.user).exists())

    def server_log(self) -> str:
        return self.server.log_path.read_text()[-4000:]

    # --- Claude Code ----------------------------------------------------------------------

    def claude(self, *arguments: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.paths["claude"], *arguments],
            cwd=self.project,
            env=self.environment(**extra),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=STEP_TIMEOUT_SECONDS,
            check=False,
        )

    def claude_session_start(self) -> dict:
        """The first line of a `claude -p` session: its servers and tools, written before the model is asked."""
        unreachable_model = f"http://127.0.0.1:{free_port()}"
        process = subprocess.Popen(
            [self.paths["claude"], "-p", "Which tools do you have?", "--output-format", "stream-json", "--verbose"],
            cwd=self.project,
            env=self.environment(
                ANTHROPIC_API_KEY="placeholder-never-sent-anywhere",
                ANTHROPIC_BASE_URL=unreachable_model,
                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            ),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        self.addCleanup(self._end_group, process)
        line = process.stdout.readline() if process.stdout else ""
        self._end_group(process)
        self.assertTrue(line, "claude -p wrote nothing")
        return json.loads(line)

    @staticmethod
    def _end_group(process: subprocess.Popen) -> None:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)

    @staticmethod
    def _end_group_of(leader: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(leader, signal.SIGKILL)

    def test_claude_code_connects_natively_and_lists_the_tools(self) -> None:
        added = self.claude("mcp", "add", "--transport", "http", SERVER_NAME, self.endpoint)
        self.assertEqual(added.returncode, 0, added.stderr)

        # `claude mcp login` refuses to run without a terminal: `script` gives it one.
        login_command = shlex.join([self.paths["claude"], "mcp", "login", SERVER_NAME])
        login = subprocess.run(
            [self.paths["script"], "-q", "-e", "-f", "-c", login_command, "/dev/null"],
            cwd=self.project,
            env=self.environment(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=STEP_TIMEOUT_SECONDS,
            check=False,
        )
        self.assertEqual(login.returncode, 0, f"{login.stdout}\n{self.server_log()}")
        self.assertIn(f'Authenticated with "{SERVER_NAME}"', login.stdout)
        self.assert_signed_in_once()
        application = Application.objects.get(client_id=CLAUDE_CODE_CLIENT_ID)
        self.assertEqual(application.registration_source, Application.RegistrationSource.CIMD)
        self.assert_person_holds_a_token_from(application)

        health = self.claude("mcp", "list")
        self.assertEqual(health.returncode, 0, health.stderr)
        self.assertIn(f"{SERVER_NAME}: {self.endpoint} (HTTP) - ✔ Connected", health.stdout)

        session = self.claude_session_start()
        self.assertEqual(session["subtype"], "init", session)
        self.assertIn({"name": SERVER_NAME, "status": "connected", "source": "local"}, session["mcp_servers"])
        listed = sorted(tool for tool in session["tools"] if tool.startswith(f"mcp__{SERVER_NAME}__"))
        self.assertEqual(listed, [f"mcp__{SERVER_NAME}__{tool}" for tool in EXPECTED_TOOLS])

    # --- Gemini CLI through mcp-remote --------------------------------------------------

    def write_gemini_configuration(self) -> None:
        """The project's `.gemini/settings.json` as docs/connecting.md#gemini-cli gives it, and a trusted folder."""
        recipe = {
            "mcpServers": {
                SERVER_NAME: {"command": self.paths["mcp-remote"], "args": [self.endpoint, "--protocol", "auto"]}
            }
        }
        (self.project / ".gemini").mkdir()
        (self.project / ".gemini" / "settings.json").write_text(json.dumps(recipe))
        user_settings = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
            "privacy": {"usageStatisticsEnabled": False},
        }
        (self.home / ".gemini").mkdir()
        (self.home / ".gemini" / "settings.json").write_text(json.dumps(user_settings))
        # Gemini starts no project server in a folder the person has not trusted.
        trusted = {str(self.project): "TRUST_FOLDER"}
        (self.home / ".gemini" / "trustedFolders.json").write_text(json.dumps(trusted))

    def tmux(self, *arguments: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.paths["tmux"], "-S", str(self.tmux_socket), *arguments],
            env=self.environment(GEMINI_API_KEY="placeholder-never-sent-anywhere"),
            capture_output=True,
            text=True,
            timeout=STEP_TIMEOUT_SECONDS,
            check=False,
        )

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", "gemini").stdout

    def input_box(self) -> str:
        """The text of Gemini's input box: the last line of the screen that starts with its prompt."""
        lines = [line.strip() for line in self.screen().splitlines() if line.startswith(" > ")]
        return lines[-1] if lines else ""

    def ask_gemini(self, command: str) -> None:
        """Type `command` into the empty input box and submit it (Enter again if the first one completed it)."""
        wait_for(lambda: GEMINI_EMPTY_INPUT in self.input_box(), what="Gemini's empty input box", context=self.screen)
        self.tmux("send-keys", "-t", "gemini", "-l", command)
        wait_for(lambda: command in self.input_box(), what=f"{command} typed", context=self.screen)

        def submitted() -> bool:
            if GEMINI_EMPTY_INPUT in self.input_box():
                return True
            self.tmux("send-keys", "-t", "gemini", "Enter")
            return False

        wait_for(submitted, what=f"{command} submitted", context=self.screen)

    def test_gemini_cli_connects_through_mcp_remote_and_lists_the_tools(self) -> None:
        self.write_gemini_configuration()
        self.tmux_socket = self.home / "tmux.sock"
        self.addCleanup(self.tmux, "kill-server")

        started = self.tmux(
            "new-session", "-d", "-s", "gemini", "-x", "200", "-y", "60", "-c", str(self.project), self.paths["gemini"]
        )
        self.assertEqual(started.returncode, 0, started.stderr)
        # Gemini outlives the pane's hang-up, and its bridge with it: its process group is ended.
        pane_pid = int(self.tmux("display-message", "-p", "-t", "gemini", "#{pane_pid}").stdout)
        self.addCleanup(self._end_group_of, pane_pid)
        # mcp-remote signs in as the session starts its servers.
        wait_for(lambda: bool(self.browser_visits()), what="mcp-remote's sign-in", context=self.screen)
        self.assert_signed_in_once()

        asked_at = [0.0]

        def tools_listed() -> bool:
            if "Ready (5 tools" in self.screen():
                return True
            # Asked before the bridge had connected, or not asked yet: ask (again).
            if time.monotonic() - asked_at[0] > ASK_AGAIN_SECONDS:
                self.ask_gemini("/mcp list")
                asked_at[0] = time.monotonic()
            return False

        wait_for(tools_listed, what="Gemini CLI listing the server's tools", context=self.screen)
        screen = self.screen()
        for tool in EXPECTED_TOOLS:
            self.assertIn(f"- mcp_{SERVER_NAME}_{tool}", screen)
        application = Application.objects.get(name="MCP CLI Proxy")
        self.assertEqual(application.registration_source, Application.RegistrationSource.DCR)
        self.assert_person_holds_a_token_from(application)
