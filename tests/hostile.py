"""Seeded generators of hostile JSON for robustness tests, and the check that nothing was logged.

Values of every JSON type, out-of-range numbers, huge and odd strings, nesting:
what a buggy or malicious client may send. A fixed seed makes every run send
the same requests, so a failure is reproducible. The fixed lists below are sent
to every field of every JSON endpoint: lone UTF-16 surrogates, NUL and other
control characters, floats where integers are expected, values of every other
type where a string is expected, and bodies nested 100,000 levels deep.

`assert_no_traceback_logged` holds each of those runs to its promise: a
documented 4xx answer, never a logged traceback.
"""

from __future__ import annotations

import contextlib
import json
import logging
import random
import string
import unittest
from collections.abc import Iterator
from typing import Any

# As a JSON body carries them: \u escapes pairing with nothing (json.dumps escapes them so).
LONE_SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff", "a\ud800b", "\udc00\ud800"]
# NUL, other C0 controls, DEL and C1 controls, alone and inside text.
CONTROL_STRINGS = ["\x00", "a\x00b", "\x01", "\x08", "\x1b[31m", "\x1f", "\x7f", "\x85", "\x9f", "a\nb", "\r\n", "\t"]
# Every JSON type but string.
NON_STRINGS: list[Any] = [None, True, 0, -1, 1.5, 2**70, [], ["a"], {}, {"a": 1}]
# Floats JSON Schema 2020-12 counts as integers, then floats it does not.
INTEGRAL_FLOATS = [1.0, 2.0, 1e1]
FRACTIONAL_FLOATS = [0.5, 2.5, -1.5, 1e308]
DEEP_LEVELS = 100_000
DEEP_PLACEHOLDER = "__deeply_nested__"

_ODD_STRINGS = [
    "",
    "\u0000",
    "\U0001f600" * 3,
    "' OR 1=1 --",
    '"); DROP TABLE organizations_source; --',
    "<script>alert(1)</script>",
    "../../etc/passwd",
    "00000000-0000-0000-0000-000000000000",
    "not-a-uuid",
    "https://127.0.0.1/x.json",
    "javascript:alert(1)",
    "a" * 5000,
    "\ud800",
    "\x1b[2J\x7f",
]


def hostile_value(rng: random.Random, *, depth: int = 0) -> Any:
    makers = [
        lambda: None,
        lambda: rng.choice([True, False]),
        lambda: rng.choice([0, -1, 1, 2**31, -(2**63), 2**70, 10**400]),
        lambda: rng.choice([0.5, -1e308, 1e308, 2.0]),
        lambda: rng.choice(_ODD_STRINGS),
        lambda: "".join(rng.choice(string.printable) for _ in range(rng.randrange(1, 40))),
    ]
    if depth < 3:
        makers += [
            lambda: [hostile_value(rng, depth=depth + 1) for _ in range(rng.randrange(4))],
            lambda: {
                rng.choice(_ODD_STRINGS[:8]): hostile_value(rng, depth=depth + 1) for _ in range(rng.randrange(3))
            },
        ]
    return rng.choice(makers)()


def hostile_object(rng: random.Random, *, keys: list[str]) -> dict[str, Any]:
    """An object using the names the endpoint expects, with values of any shape."""
    return {rng.choice(keys): hostile_value(rng, depth=1) for _ in range(rng.randrange(1, len(keys) + 1))}


def deeply_nested(levels: int = DEEP_LEVELS, *, kind: str = "array") -> str:
    """JSON text nested `levels` deep (arrays or objects), built as text: no encoder could recurse that far."""
    if kind == "array":
        return "[" * levels + "0" + "]" * levels
    return '{"a":' * levels + "0" + "}" * levels


def json_with_deep_value(template: Any, *, levels: int = DEEP_LEVELS, kind: str = "array") -> str:
    """`template` as JSON text, with every `DEEP_PLACEHOLDER` string replaced by a value nested `levels` deep."""
    return json.dumps(template).replace(json.dumps(DEEP_PLACEHOLDER), deeply_nested(levels, kind=kind))


# What a hostile tool argument must get (see `hostile_arguments`).
PARSE_ERROR = "parse error"  # HTTP 400 with JSON-RPC -32700: the body never reaches the tool
REFUSED = "refused"  # a tool error; `invalid_arguments` names the argument
ANSWERED = "answered"  # a result or a documented tool error: the value is odd, not invalid


def hostile_arguments(input_schema: dict[str, Any]) -> Iterator[tuple[str, Any, str]]:
    """(argument, value, expectation) for every argument of a tool's `inputSchema`.

    Lone surrogates and 100,000-level nesting are parse errors; NUL, a value of
    another type and a fractional float are refused; other control characters
    and floats with no fraction are ordinary values of their type. Arrays are
    taken to hold ids, so that `["a"]` is refused too.
    """
    for name, spec in input_schema["properties"].items():
        kind = spec.get("type")
        for surrogate in LONE_SURROGATES:
            yield name, surrogate, PARSE_ERROR
        yield name, DEEP_PLACEHOLDER, PARSE_ERROR
        for value in NON_STRINGS:
            is_integer = isinstance(value, int) and not isinstance(value, bool)
            if kind == "array" and isinstance(value, list):
                yield name, value, ANSWERED if value == [] else REFUSED
            elif kind == "array":
                yield name, value, REFUSED
                yield name, [value], REFUSED
            else:
                yield name, value, ANSWERED if kind == "integer" and is_integer else REFUSED
        if kind == "integer":
            yield from ((name, number, ANSWERED) for number in INTEGRAL_FLOATS)
            yield from ((name, number, REFUSED) for number in FRACTIONAL_FLOATS)
            continue
        for text in CONTROL_STRINGS:
            value = [text] if kind == "array" else text
            yield name, value, REFUSED if "\x00" in text else ANSWERED


def holds_lone_surrogate(value: Any) -> bool:
    """Whether `value` holds a lone surrogate anywhere: such a value has no UTF-8 form."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


class _TracebackCatcher(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.NOTSET)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info or record.levelno >= logging.ERROR:
            self.records.append(record)


@contextlib.contextmanager
def assert_no_traceback_logged(test: unittest.TestCase) -> Iterator[None]:
    """Fail `test` if anything inside the block logged a traceback or an error (every logger propagates to root)."""
    catcher = _TracebackCatcher()
    root = logging.getLogger()
    root.addHandler(catcher)
    try:
        yield
    finally:
        root.removeHandler(catcher)
    logged = [f"{record.name}: {record.getMessage()}" for record in catcher.records]
    test.assertEqual(logged, [], "a hostile request wrote a traceback or an error to the log")
