"""Seeded generators of hostile JSON for robustness tests.

Values of every JSON type, out-of-range numbers, huge and odd strings, nesting:
what a buggy or malicious client may send. A fixed seed makes every run send
the same requests, so a failure is reproducible.
"""

import random
import string
from typing import Any

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
]


def hostile_value(rng: random.Random, *, depth: int = 0) -> Any:
    makers = [
        lambda: None,
        lambda: rng.choice([True, False]),
        lambda: rng.choice([0, -1, 1, 2**31, -(2**63), 2**70, 10**400]),
        lambda: rng.choice([0.5, -1e308, 1e308]),
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
