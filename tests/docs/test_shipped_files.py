"""What an operator copies from docs/ is what was tested: every block shown as a shipped file is that file.

The convention (docs/development/code-style.md#shipped-files): a fenced block
that shows a file of the repository whole is preceded by the HTML comment
`<!-- shipped: deploy/Caddyfile -->`, invisible on the rendered page, and its
text is the file's, byte for byte. A block whose introducing line names a
shipped file and ends with a colon, which a reader takes for that file, must
carry the marker, unless that line calls it a variant or an excerpt.
"""

from __future__ import annotations

import re
from pathlib import Path

from django.test import SimpleTestCase

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs").rglob("*.md"))
# The files docs/deploy.md lists as what the repository ships for a deployment.
SHIPPED = (
    "Dockerfile",
    "gunicorn.conf.py",
    "compose.yaml",
    "deploy/env.example",
    "deploy/Caddyfile",
    "deploy/prometheus.yml",
)
MARKER = re.compile(r"^<!-- shipped: (\S+) -->$")
NOT_THE_FILE = ("variant", "excerpt")
FENCE = re.compile(r"^(```+|~~~+)")


def fenced_blocks(text: str) -> list[tuple[str | None, str, str]]:
    """Each fenced block of a page: (its marker's path or None, the line introducing it, its text)."""
    lines = text.splitlines()
    blocks = []
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index].strip())
        if not opening:
            index += 1
            continue
        before = [line.strip() for line in lines[:index] if line.strip()]
        marker = MARKER.match(before[-1]) if before else None
        introduction = before[-2] if marker and len(before) > 1 else (before[-1] if before else "")
        end = next(
            (number for number in range(index + 1, len(lines)) if lines[number].strip() == opening.group(1)),
            len(lines),
        )
        blocks.append((marker.group(1) if marker else None, introduction, "\n".join(lines[index + 1 : end]) + "\n"))
        index = end + 1
    return blocks


class ShippedFilesTests(SimpleTestCase):
    def test_every_block_marked_as_a_shipped_file_is_that_file(self) -> None:
        marked = 0
        for page in PAGES:
            for path, _, block in fenced_blocks(page.read_text()):
                if path is None:
                    continue
                marked += 1
                with self.subTest(page=page.relative_to(ROOT).as_posix(), file=path):
                    self.assertTrue((ROOT / path).is_file(), f"{path} is no file of the repository")
                    self.assertEqual(block, (ROOT / path).read_text())
        self.assertGreater(marked, 0, "no block is marked as a shipped file")

    def test_a_block_introduced_as_a_shipped_file_is_marked(self) -> None:
        for page in PAGES:
            for path, introduction, _ in fenced_blocks(page.read_text()):
                named = [name for name in SHIPPED if f"`{name}`" in introduction]
                admitted = any(word in introduction.lower() for word in NOT_THE_FILE)
                if path is None and named and introduction.endswith(":") and not admitted:
                    self.fail(f"{page.relative_to(ROOT)}: a block introduced by {introduction!r} is not marked")

    def test_a_block_that_differs_from_its_file_is_found(self) -> None:
        shipped = (ROOT / "deploy" / "Caddyfile").read_text()
        page = f"Caddy:\n\n<!-- shipped: deploy/Caddyfile -->\n```\n{shipped.replace('request_buffers', '#')}```\n"
        [(path, introduction, block)] = fenced_blocks(page)
        self.assertEqual((path, introduction), ("deploy/Caddyfile", "Caddy:"))
        self.assertNotEqual(block, shipped)
