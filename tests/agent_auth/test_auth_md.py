"""/auth.md serves docs/headless.md itself, as Markdown."""

import re
from pathlib import Path

from django.conf import settings
from django.test import SimpleTestCase


class AuthMarkdownTests(SimpleTestCase):
    def test_auth_md_is_the_headless_doc_as_markdown(self) -> None:
        response = self.client.get("/auth.md")

        self.assertEqual(response.status_code, 200)
        self.assertEqual(response["Content-Type"], "text/markdown; charset=utf-8")
        source = (Path(settings.OPERATOR["docs_dir"]) / "headless.md").read_text(encoding="utf-8")
        self.assertEqual(response.content.decode(), source.replace("{base_url}", settings.OPERATOR["base_url"]))

    def test_auth_md_names_this_deployment_in_its_commands(self) -> None:
        text = self.client.get("/auth.md").content.decode()

        self.assertIn(f"BASE_URL={settings.OPERATOR['base_url']}", text)
        self.assertNotIn("{base_url}", text)

    def test_auth_md_describes_both_endpoints(self) -> None:
        text = self.client.get("/auth.md").content.decode()

        self.assertIn("/api/agent/auth", text)
        self.assertIn("/api/agent/auth/claim/complete", text)
        self.assertIn("Idempotency-Key", text)

    def test_auth_md_shows_a_placeholder_for_every_idempotency_key_never_a_literal_one(self) -> None:
        """Agents copy the commands as they stand: a literal key would be shared by all of them."""
        text = self.client.get("/auth.md").content.decode()

        values = re.findall(r"Idempotency-Key: ([^'\"\n]+)", text)

        self.assertGreaterEqual(len(values), 3)
        self.assertEqual(set(values), {"<a new UUID per request>"})

    def test_the_placeholder_sent_as_written_is_refused(self) -> None:
        response = self.client.post(
            "/api/agent/auth",
            {"email": "a@example.test"},
            content_type="application/json",
            headers={"Idempotency-Key": "<a new UUID per request>"},
        )

        self.assertEqual(response.status_code, 400)
        self.assertEqual(response.json()["error"]["field"], "Idempotency-Key")
