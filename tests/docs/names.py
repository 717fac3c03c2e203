"""Find the code names a Markdown page cites, and the ones the checkout no longer holds.

Read statically (the source's syntax tree, never an import), so a page can cite
any module, settings and migrations included. What counts as a cited name:

- a path of the checkout (`knowledge/search/query.py`, `operator_core/mcp/`,
  `.ci/run`), in backticks or not, whose first part is a top-level entry of the
  repository, or a bare `module.py` in backticks, which some file must be named;
- a dotted name in backticks whose first part is a top-level Python package
  (`operator_core.sql.fetch`, `knowledge.search.query`, `audit.AuditEvent`):
  the longest prefix that is a module, then names defined in it (for an
  `app.Model` label, in the app's `models.py`);
- a name tied to a module in backticks, "`fetch` (`operator_core/sql.py`)" or
  "`TOOLS` in `mcp_operator/tools/__init__.py`": defined or used in that module
  (`Class.method`: the method defined in that class);
- any other snake_case name in backticks (`make_module`, `prepare_threshold`):
  some file of the checkout's code, build or templates holds it as a word,
  unless it is another program's (`EXTERNAL_NAMES`);
- a link or citation of a page anchor (`decisions.md#tool-errors`, or
  `(#limits)` within the page): the page has that heading.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Top-level entries that are made, not checked in: a page may name what is in them.
MADE_ENTRIES = {".venv", ".venv-lock", "var", "node_modules"}
PATH = re.compile(r"(?<![\w./:~-])(\.?[A-Za-z_][\w-]*/(?:[\w.<>-]+/)*[\w.<>-]*)")
BARE_MODULE = re.compile(r"^[A-Za-z_]\w*\.py$")
BACKTICKED = re.compile(r"`([^`\n]+)`")
DOTTED = re.compile(r"^([a-z_]\w*)((?:\.[A-Za-z_]\w*)+)(?:\(\))?$")
NAME_IN_MODULE = re.compile(r"`([A-Za-z_][\w.]*)(?:\(\))?` (?:\(|in )`([\w./-]+\.py)`")
SNAKE_CASE = re.compile(r"`([A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+)(?:\(\))?`")
# Names of PostgreSQL, SQLite, Django and gunicorn settings and APIs that the pages discuss and
# the code never spells out.
EXTERNAL_NAMES = {
    # PostgreSQL's and Django's.
    "USERNAME_FIELD",
    "default_token_generator",
    "gin_pending_list_limit",
    "wal_autocheckpoint",
    "server_side_binding",
    "as_sql",
    # django-oauth-toolkit's, named where decisions.md#dot-private-names weighs its hooks.
    "authenticate_client_id",
    "validate_client_id",
    "CLIENT_SECRET_HASHER",
    # An OAuth error code (RFC 8628) that decisions.md#limits says why we do not answer.
    "slow_down",
}
CODE_SUFFIXES = {".py", ".html", ".toml", ".yaml", ".yml", ".cfg", ".txt", ".in", ".sh", ".js", ".ts", ".json"}
ANCHOR = re.compile(r"((?:[\w.-]+/)*[\w.-]+\.md)#([\w-]+)")


def _top_level_entries() -> set[str]:
    return {path.name for path in ROOT.iterdir()} - MADE_ENTRIES - {".git"}


def _packages() -> set[str]:
    return {path.parent.name for path in ROOT.glob("*/__init__.py")}


def cited_paths(text: str) -> set[str]:
    """Paths of the checkout the text names, and backticked bare module file names."""
    entries = _top_level_entries()
    found = {match.rstrip(".") for match in PATH.findall(text) if match.split("/", 1)[0] in entries}
    found |= {span for span in BACKTICKED.findall(text) if BARE_MODULE.match(span)}
    return found


def missing_paths(text: str) -> set[str]:
    missing = set()
    for path in cited_paths(text):
        if "/" in path:
            # A placeholder (`tests/mcp_operator/tools/test_<name>.py`) names a folder that must exist.
            exists = (
                (ROOT / path.split("<", 1)[0].rsplit("/", 1)[0]).is_dir() if "<" in path else (ROOT / path).exists()
            )
        else:
            exists = any(ROOT.glob(f"**/{path}"))
        if not exists:
            missing.add(path)
    return missing


@functools.cache
def _definitions(module: Path) -> dict[str, set[str]]:
    """Every name defined in a module (key ""), and the names defined in each class body."""
    tree = ast.parse(module.read_text(), filename=str(module))
    defined: dict[str, set[str]] = {"": set()}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined[""].add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                defined[""] |= {name.id for name in ast.walk(target) if isinstance(name, ast.Name)}
                if isinstance(target, ast.Attribute):
                    defined[""].add(target.attr)  # self.x = ...
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined[""] |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        if isinstance(node, ast.ClassDef):
            members = defined.setdefault(node.name, set())
            for child in node.body:
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    members.add(child.name)
                elif isinstance(child, (ast.Assign, ast.AnnAssign)):
                    targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                    members |= {
                        name.id for target in targets for name in ast.walk(target) if isinstance(name, ast.Name)
                    }
    return defined


@functools.cache
def _identifiers(module: Path) -> set[str]:
    """Every name the module defines, imports or reads (`dot_views.JwksInfoView` reads `JwksInfoView`)."""
    tree = ast.parse(module.read_text(), filename=str(module))
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    names |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    return names | _definitions(module)[""]


def _defines(module: Path, qualified: list[str], *, or_uses: bool = False) -> bool:
    if not module.is_file():
        return False
    defined = _definitions(module)
    if qualified[0] not in (_identifiers(module) if or_uses and len(qualified) == 1 else defined[""]):
        return False
    # Class.member: the member is in the class body, or assigned to the instance anywhere.
    return len(qualified) == 1 or qualified[1] in defined.get(qualified[0], set()) | defined[""]


def _module_file(parts: list[str]) -> Path | None:
    base = ROOT.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def dotted_name_exists(name: str) -> bool:
    parts = name.removesuffix("()").split(".")
    for cut in range(len(parts), 0, -1):
        module = _module_file(parts[:cut])
        if module is None:
            continue
        rest = parts[cut:]
        if not rest:
            return True
        if _defines(module, rest):
            return True
        # An app label and a model (`audit.AuditEvent`), as Django names models.
        return cut == 1 and _defines(ROOT / parts[0] / "models.py", rest)
    return False


def missing_dotted_names(text: str) -> set[str]:
    packages = _packages()
    return {
        span
        for span in BACKTICKED.findall(text)
        if (match := DOTTED.match(span)) and match.group(1) in packages and not dotted_name_exists(span)
    }


def missing_names_in_modules(text: str) -> set[str]:
    missing = set()
    for name, path in NAME_IN_MODULE.findall(text):
        if not _defines(ROOT / path, name.split("."), or_uses=True):
            missing.add(f"{name} in {path}")
    return missing


@functools.cache
def _code_words() -> frozenset[str]:
    """Every word of the checkout's code, build files and templates (never its Markdown, nor this folder)."""
    words: set[str] = set()
    for entry in _top_level_entries() - {"docs"}:
        for path in [ROOT / entry, *(ROOT / entry).rglob("*")] if (ROOT / entry).is_dir() else [ROOT / entry]:
            parts = path.relative_to(ROOT).parts
            if "node_modules" in parts or path.is_relative_to(Path(__file__).parent) or not path.is_file():
                continue
            if path.suffix in CODE_SUFFIXES or path.suffix == "" or path.name == "Dockerfile":
                words |= set(re.findall(r"\w+", path.read_text(errors="replace")))
    return frozenset(words)


def missing_words(text: str) -> set[str]:
    """Backticked snake_case names that no code, build file or template of the checkout holds."""
    words = _code_words()
    return {name for name in SNAKE_CASE.findall(text) if name not in words and name not in EXTERNAL_NAMES}


@functools.cache
def _anchors(page: Path) -> set[str]:
    """The anchors GitHub gives the page's headings."""
    anchors = set()
    for line in page.read_text().splitlines():
        if line.startswith("#"):
            heading = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", heading).replace(" ", "-"))
    return anchors


def missing_own_anchors(page: Path) -> set[str]:
    """Links within the page (`[Limits](#limits)`) whose heading is gone."""
    return {anchor for anchor in re.findall(r"\]\(#([\w-]+)\)", page.read_text()) if anchor not in _anchors(page)}


def missing_anchors(text: str, *, relative_to: Path) -> set[str]:
    """`page.md#anchor` citations whose page or heading is gone; a page is found relative
    to `relative_to`, to the checkout's root, or in docs/development/."""
    missing = set()
    for page, anchor in ANCHOR.findall(text):
        candidates = [relative_to / page, ROOT / page, ROOT / "docs" / page, ROOT / "docs" / "development" / page]
        found = next((candidate for candidate in candidates if candidate.is_file()), None)
        if found is None or anchor not in _anchors(found):
            missing.add(f"{page}#{anchor}")
    return missing
