"""Email delivery off the request path.

The headless path must answer a known and an unknown email alike
(docs/development/decisions.md#headless-path), so the SMTP round trip cannot
be part of the answer. A small pool of threads sends instead;
`concurrent.futures` joins its threads when the process exits, so a worker
that stops still delivers what it accepted.
"""

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

_executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="agent-auth-mail")
_pending: set[Future[Any]] = set()
_pending_lock = threading.Lock()


def send_in_background(send: Callable[..., None], **arguments: Any) -> None:
    """Run `send(**arguments)` on the mail pool; it must handle its own failures."""
    future = _executor.submit(send, **arguments)
    with _pending_lock:
        _pending.add(future)
    future.add_done_callback(_forget)


def _forget(future: Future[Any]) -> None:
    with _pending_lock:
        _pending.discard(future)


def wait_for_outbox(timeout: float = 30) -> None:
    """Block until every email handed over so far has been sent (or has failed)."""
    with _pending_lock:
        pending = set(_pending)
    wait(pending, timeout=timeout)
