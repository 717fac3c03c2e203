"""The one parse step of every JSON request body: both MCP endpoints, registration, the headless path.

`parse_json_body` accepts exactly RFC 8259 JSON text in UTF-8 that every later
step can handle, and raises `MalformedJson` otherwise: bytes that are not UTF-8,
`NaN`, `Infinity` or a number too large for a float, nesting deeper than
`MAX_JSON_DEPTH`, a lone UTF-16 surrogate. Each endpoint turns it into its own
documented 400. Nothing here judges content (NUL is valid JSON); the endpoints
do that where it matters. Why: docs/development/decisions.md#hostile-input.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

# Deep enough for any real request (an MCP tool call nests about five levels).
MAX_JSON_DEPTH = 64

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_TOO_DEEP = f"the body nests deeper than {MAX_JSON_DEPTH} levels"


class MalformedJson(ValueError):
    """The body is not JSON this service reads; the message says why, in a sentence a client can act on."""


def parse_json_body(body: bytes) -> Any:
    """The JSON value `body` holds, or `MalformedJson`; never any other exception."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise MalformedJson("the body is not UTF-8") from None
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        raise MalformedJson(_TOO_DEEP) from None
    except ValueError:
        raise MalformedJson("the body is not valid JSON") from None
    # A lone surrogate can only come from a \u escape, and a body with few
    # brackets cannot nest deeply: most bodies skip the walk altogether.
    check_strings = _SURROGATE_ESCAPE.search(text) is not None
    if check_strings or text.count("[") + text.count("{") > MAX_JSON_DEPTH:
        _require_readable(value, check_strings=check_strings)
    return value


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def _finite_float(literal: str) -> float:
    number = float(literal)
    if not math.isfinite(number):
        raise ValueError("number out of range")
    return number


def _require_readable(value: Any, *, check_strings: bool) -> None:
    """Walk the parsed value a level at a time, without recursion: its depth and, if asked, every string and key."""
    level = [value]
    for depth in range(MAX_JSON_DEPTH + 1):
        if check_strings and any(isinstance(item, str) and _LONE_SURROGATE.search(item) for item in level):
            raise MalformedJson("the body holds a lone UTF-16 surrogate, which is not a character")
        containers = [item for item in level if isinstance(item, dict | list)]
        if not containers:
            return
        if depth == MAX_JSON_DEPTH:
            raise MalformedJson(_TOO_DEEP)
        level = [member for container in containers for member in _members(container, keys=check_strings)]


def _members(container: dict | list, *, keys: bool) -> list[Any]:
    if isinstance(container, list):
        return container
    return [*container, *container.values()] if keys else list(container.values())
