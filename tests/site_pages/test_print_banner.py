"""`make run` prints where to go, who to sign in as and what to run, before the server starts."""

import io
import re
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.test import SimpleTestCase, override_settings

from organizations.demo.accounts import DEMO_PASSWORD, PEOPLE


def banner() -> str:
    out = io.StringIO()
    call_command("print_banner", stdout=out)
    return out.getvalue()


def on_port(port: int) -> override_settings:
    base = f"http://127.0.0.1:{port}"
    return override_settings(
        OPERATOR={**settings.OPERATOR, "base_url": base, "operator_endpoint_url": f"{base}/api/mcp/operator"}
    )


class PrintBannerTests(SimpleTestCase):
    def test_names_the_front_page_endpoint_docs_and_admin(self) -> None:
        with on_port(9000):
            text = banner()

        for address in ("/ ", "/api/mcp/operator", "/docs/", "/admin/"):
            self.assertIn(f"http://127.0.0.1:9000{address}", text)

    def test_lists_every_demo_account_and_the_password(self) -> None:
        text = banner()

        self.assertIn(f"password {DEMO_PASSWORD}", text)
        for email in PEOPLE:
            self.assertRegex(text, rf"\n  {re.escape(email)} +\S")
        self.assertRegex(text, r"erin@multi.test +member of acme, admin of globex: chooses at consent")

    def test_the_example_command_names_a_non_default_address(self) -> None:
        with on_port(9000):
            text = banner()

        self.assertIn(
            ".venv/bin/python examples/operator_client.py --url http://127.0.0.1:9000/api/mcp/operator\n", text
        )

    def test_the_example_command_is_plain_on_the_default_address(self) -> None:
        with on_port(8000):
            text = banner()

        self.assertIn(".venv/bin/python examples/operator_client.py\n", text)

    def test_make_run_prints_it_just_before_the_server_starts(self) -> None:
        makefile = (Path(settings.BASE_DIR) / "Makefile").read_text()
        run = makefile.split("\nrun:", 1)[1].split("\n\n", 1)[0]
        commands = re.findall(r"manage\.py (\w+)", run)

        self.assertEqual(commands[-2:], ["print_banner", "runserver"])
