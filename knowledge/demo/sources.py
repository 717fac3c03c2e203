"""The demo sources of `seed_demo`: the folder of processed files, and the unprocessed ones."""

from pathlib import Path

from knowledge.models import SourceKind

# One folder per organization slug; every `*.md` in it becomes a processed source.
CONTENT_DIR = Path(__file__).resolve().parent / "content"

# Sources that exist but are not processed: tools must never show them.
# (title, kind, origin, text, process) - processing an empty text fails.
UNPROCESSED_SOURCES: dict[str, tuple[tuple[str, str, str, str, bool], ...]] = {
    "acme": (
        (
            "Roadmap draft (awaiting processing)",
            SourceKind.URL,
            "https://wiki.acme.test/roadmap-draft",
            "Unreleased roadmap codename Quasarwing: not yet processed, never visible to tools.",
            False,
        ),
        ("Scanned vendor contract", SourceKind.FILE, "vendor-contract-scan.pdf", "", True),
    ),
    "globex": (
        (
            "Plant expansion memo (awaiting processing)",
            SourceKind.URL,
            "https://intranet.globex.test/expansion-memo",
            "Confidential plant expansion codename Ironheron: not yet processed, never visible to tools.",
            False,
        ),
        ("Scanned supplier certificate", SourceKind.FILE, "supplier-certificate-scan.pdf", "", True),
    ),
}
