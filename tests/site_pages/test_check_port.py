"""`make run` checks its port before it migrates, seeds or prints the banner."""

import io
import re
import socket
from pathlib import Path

from django.conf import settings
from django.core.management import CommandError, call_command
from django.test import SimpleTestCase

from site_pages.port_check import SUGGESTION_RANGE


def listening_socket() -> socket.socket:
    """A socket listening on a loopback port, as a first `make run` would be."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    return server


def check_port(port: int) -> str:
    out = io.StringIO()
    call_command("check_port", "--host", "127.0.0.1", "--port", str(port), stdout=out)
    return out.getvalue()


class CheckPortTests(SimpleTestCase):
    def test_a_busy_port_is_one_line_suggesting_make_run_on_a_free_port(self) -> None:
        server = self.enterContext(listening_socket())
        port = server.getsockname()[1]

        with self.assertRaises(CommandError) as refused:
            check_port(port)

        message = str(refused.exception)
        self.assertNotIn("\n", message)
        self.assertIn(f"Port {port} on 127.0.0.1 is already in use", message)
        suggested = int(re.search(r"make run PORT=(\d+)$", message).group(1))
        self.assertTrue(port < suggested <= port + SUGGESTION_RANGE)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", suggested))  # the suggestion is free

    def test_a_free_port_passes_silently(self) -> None:
        server = listening_socket()
        port = server.getsockname()[1]
        server.close()

        self.assertEqual(check_port(port), "")

    def test_make_run_checks_the_port_before_anything_else(self) -> None:
        makefile = (Path(settings.BASE_DIR) / "Makefile").read_text()
        run = makefile.split("\nrun:", 1)[1].split("\n\n", 1)[0]
        commands = re.findall(r"manage\.py (\w+)", run)

        self.assertEqual(commands[0], "check_port")
        self.assertIn("check_port --host $(HOST) --port $(PORT)", run)
