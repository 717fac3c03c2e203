"""Requests refused for their size or shape before any view reads them (docs/limits.md#request-size).

Each refusal is an `InvalidArguments` naming the `body`, so every renderer
already knows it: `BodyTooLarge` (413), judged on the declared `Content-Length`
alone before a byte is read, so a slow sender never holds a worker;
`LengthRequired` (411), a body sent chunked with no `Content-Length`, which
WSGI would read as empty (PEP 3333); and
`MalformedRequest` (400), a body Django refuses to parse (too many fields or
files), which `refusal_for` names for the `SuspiciousOperation` or `BadRequest`
Django raises. The edges that answer them: operator_site/request_refusals.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.exceptions import (
    BadRequest,
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.http import UnreadablePostError
from django.http.multipartparser import MultiPartParserError

from operator_core.errors import InvalidArguments

BODY_FIELD = "body"


class BodyTooLarge(InvalidArguments):
    http_status = 413

    def __init__(self, max_bytes: int) -> None:
        super().__init__(f"The request body exceeds {max_bytes} bytes.", field=BODY_FIELD)


class LengthRequired(InvalidArguments):
    """A body sent with `Transfer-Encoding` and no `Content-Length` (RFC 9110 §15.5.12)."""

    http_status = 411

    def __init__(self) -> None:
        super().__init__("Length required: send the body with a Content-Length.", field=BODY_FIELD)


class MalformedRequest(InvalidArguments):
    """A request Django refused to read; `field` is `body` when the body is at fault."""


def declared_length(meta: Mapping[str, Any]) -> int:
    """The body size the request declares (`CONTENT_LENGTH`), 0 when it declares none or nonsense.

    Django reads no more than that many bytes, and none without it, so the
    declared length bounds what any view can read.
    """
    try:
        return max(int(meta.get("CONTENT_LENGTH") or 0), 0)
    except ValueError:
        return 0


def sends_without_length(meta: Mapping[str, Any]) -> bool:
    """The request sends a body (`Transfer-Encoding`, chunked) without declaring its length."""
    return bool(meta.get("HTTP_TRANSFER_ENCODING")) and not meta.get("CONTENT_LENGTH")


def refusal_for(exception: BaseException, *, max_bytes: int) -> InvalidArguments | None:
    """The 4xx answer for an exception Django raised while reading a request, or None for any other."""
    if isinstance(exception, RequestDataTooBig):
        return BodyTooLarge(max_bytes)
    if isinstance(exception, TooManyFieldsSent | TooManyFilesSent):
        return MalformedRequest("The form has too many fields or files.", field=BODY_FIELD)
    if isinstance(exception, SuspiciousOperation | BadRequest | MultiPartParserError | UnreadablePostError):
        # A header Django refuses (the Host), a malformed multipart body, a body cut off: nothing to name.
        return MalformedRequest("The request is malformed.")
    return None
