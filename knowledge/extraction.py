"""Turning files into (title, text) for import: Markdown, plain text and HTML.

HTML goes through the standard library's parser: script, style and other
non-content elements are dropped, block elements become paragraph breaks. No
network, no external programs. Reading a file raises `InvalidArguments` (field
"path") for anything that is not a readable, non-empty UTF-8 text file.
"""

from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from knowledge.processing import normalise_text
from operator_core.errors import InvalidArguments

SUPPORTED_SUFFIXES = (".md", ".markdown", ".txt", ".html", ".htm")
HTML_SUFFIXES = (".html", ".htm")
# Large enough for any policy or manual; stops a stray multi-gigabyte file.
MAX_FILE_BYTES = 10 * 1024 * 1024

_SKIPPED_ELEMENTS = frozenset({"script", "style", "template", "noscript", "svg", "head", "title", "iframe", "object"})
_BLOCK_ELEMENTS = frozenset(
    {
        "address", "article", "aside", "blockquote", "dd", "details", "div", "dl", "dt", "fieldset",
        "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr",
        "li", "main", "nav", "ol", "p", "pre", "section", "summary", "table", "tr", "ul",
    }
)  # fmt: skip
_VOID_ELEMENTS = frozenset(
    {"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "source", "wbr"}
)


@dataclass(frozen=True)
class Document:
    title: str
    text: str


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title_parts: list[str] = []
        self.first_heading: list[str] = []
        self._skip_depth = 0
        self._in_title = False
        self._in_h1 = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        if tag in _SKIPPED_ELEMENTS and tag not in _VOID_ELEMENTS:
            self._skip_depth += 1
            return
        if tag == "h1" and not self.first_heading:
            self._in_h1 = True
        if tag == "br":
            self.parts.append("\n")
        elif tag in _BLOCK_ELEMENTS:
            self.parts.append("\n\n")
            if tag == "li":
                self.parts.append("- ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in _SKIPPED_ELEMENTS and tag not in _VOID_ELEMENTS:
            self._skip_depth = max(0, self._skip_depth - 1)
            return
        if tag == "h1":
            self._in_h1 = False
        if tag in _BLOCK_ELEMENTS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title_parts.append(data)
        if self._skip_depth:
            return
        if self._in_h1:
            self.first_heading.append(data)
        # Source line breaks inside HTML text are just spaces.
        self.parts.append(data.replace("\n", " "))


def html_to_document(html: str) -> Document:
    """Visible text of an HTML page; title from <title>, else the first <h1>."""
    extractor = _TextExtractor()
    extractor.feed(html)
    extractor.close()
    text = normalise_text("".join(extractor.parts))
    title = normalise_text(" ".join(extractor.title_parts) or " ".join(extractor.first_heading))
    return Document(title=title.replace("\n", " "), text=text)


def plain_to_document(text: str, *, fallback_title: str) -> Document:
    """Markdown or plain text: title from the first `# ` heading, else `fallback_title`."""
    text = normalise_text(text)
    title = fallback_title
    for line in text.split("\n"):
        if line.startswith("# "):
            title = line[2:].strip() or fallback_title
            break
    return Document(title=title, text=text)


def read_document(path: Path) -> Document:
    """Read and extract one file; raises InvalidArguments(field="path") when unusable."""
    if path.suffix.lower() not in SUPPORTED_SUFFIXES:
        raise InvalidArguments("Unsupported file type (use .md, .txt or .html).", field="path")
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise InvalidArguments("File is larger than 10 MiB.", field="path")
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InvalidArguments("File not found.", field="path") from None
    except IsADirectoryError:
        raise InvalidArguments("Path is a directory.", field="path") from None
    except OSError:
        raise InvalidArguments("File could not be read.", field="path") from None
    # NUL bytes never occur in text files; this catches UTF-16 and binaries alike.
    if b"\x00" in raw:
        raise InvalidArguments("File is not a UTF-8 text file.", field="path")
    try:
        decoded = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InvalidArguments("File is not a UTF-8 text file.", field="path") from None
    fallback_title = path.stem.replace("-", " ").replace("_", " ").strip() or path.name
    if path.suffix.lower() in HTML_SUFFIXES:
        document = html_to_document(decoded)
        document = Document(title=document.title or fallback_title, text=document.text)
    else:
        document = plain_to_document(decoded, fallback_title=fallback_title)
    if not document.text:
        raise InvalidArguments("File has no text.", field="path")
    return document
