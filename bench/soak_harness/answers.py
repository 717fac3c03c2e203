"""Every answer a soak client got, sorted into what the documentation promises and what it does not.

An answer is one of:
- `success`;
- `limited`: a documented limit, HTTP 429 with `Retry-After`, or a tool error
  `rate_limited` / `concurrency_limited` with `retryAfterSeconds` (docs/limits.md);
- `unavailable`: a documented outage answer, HTTP 503 with `Retry-After` in the
  path's own format (JSON on every API path, the error page on the sign-in and
  consent pages), or a tool error `temporarily_unavailable` with
  `retryAfterSeconds` (docs/operations.md#outages);
- `expected`: an answer the scenario provokes on purpose and the docs promise
  (a deliberate refresh-token replay's `invalid_grant`, a 409
  `request_in_progress` for a same-key retry sent while the first runs);
- `unexplained`: everything else, printed one by one in the report.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

SUCCESS, LIMITED, UNAVAILABLE, EXPECTED, UNEXPLAINED = "success", "limited", "unavailable", "expected", "unexplained"
LIMIT_TOOL_ERRORS = {"rate_limited", "concurrency_limited"}
PAGE_PATHS = ("/api/auth/sign-in", "/api/auth/oauth2/authorize", "/api/auth/consent")


@dataclass(frozen=True)
class Answer:
    kind: str
    phase: str
    started: float  # seconds since the run started
    latency: float  # seconds
    status: int  # 0: no HTTP answer at all
    code: str
    category: str
    request_id: str = ""
    detail: str = ""


def _json(response: httpx.Response) -> Any:
    if not response.headers.get("content-type", "").startswith("application/json"):
        return None
    try:
        return response.json()
    except ValueError:
        return None


def tool_error(body: Any) -> dict[str, Any] | None:
    """The tool error of a `tools/call` answer (either shape of docs/errors.md#tool-errors), else None."""
    result = body.get("result") if isinstance(body, dict) else None
    if not isinstance(result, dict):
        return None
    structured = result.get("structuredContent") or {}
    if result.get("isError") or structured.get("success") is False:
        error = structured.get("error")
        return error if isinstance(error, dict) else {"code": "unknown"}
    return None


def error_code(response: httpx.Response) -> str:
    """The error code of any of the service's formats: JSON-RPC, tool error, OAuth, headless; `html` for a page."""
    body = _json(response)
    if body is None:
        return "html" if "html" in response.headers.get("content-type", "") else "-"
    if (error := tool_error(body)) is not None:
        return str(error.get("code"))
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, str):
        return error
    if isinstance(error, dict):
        data = error.get("data") if isinstance(error.get("data"), dict) else {}
        return str(data.get("code") or error.get("code"))
    return "-"


def classify(response: httpx.Response) -> tuple[str, str]:
    """(category, code) of one answer, by the rules of the module docstring."""
    code = error_code(response)
    status = response.status_code
    retry_after = response.headers.get("retry-after")
    is_json = _json(response) is not None
    page = response.request.url.path.startswith(PAGE_PATHS)
    if status == 200 and (body := _json(response)) is not None and (error := tool_error(body)) is not None:
        if error.get("retryAfterSeconds") is not None:
            if code in LIMIT_TOOL_ERRORS:
                return LIMITED, code
            if code == "temporarily_unavailable":
                return UNAVAILABLE, code
        return UNEXPLAINED, code
    if 200 <= status < 400:
        return SUCCESS, "-"
    if status == 429 and retry_after and (is_json or page):
        return LIMITED, code
    if status == 503 and retry_after and (is_json or page):
        return UNAVAILABLE, code
    return UNEXPLAINED, code


class Recorder:
    """Collects the answers of every client thread, each tagged with the phase it was sent in."""

    def __init__(self) -> None:
        self.origin = time.monotonic()
        self.phase = "steady"
        self.answers: list[Answer] = []
        self._lock = threading.Lock()

    def now(self) -> float:
        return time.monotonic() - self.origin

    def send(
        self,
        kind: str,
        request: Callable[[], httpx.Response],
        *,
        expect: Callable[[httpx.Response], bool] | None = None,
    ) -> httpx.Response | None:
        """Run `request`, record its answer; `expect` marks the answers this request provokes on purpose."""
        phase, started = self.phase, self.now()
        try:
            response = request()
        except httpx.HTTPError as failure:
            self._add(Answer(kind, phase, started, self.now() - started, 0, type(failure).__name__, UNEXPLAINED))
            return None
        category, code = classify(response)
        if category != SUCCESS and expect is not None and expect(response):
            category = EXPECTED
        detail = "" if category == SUCCESS else response.text[:200].replace("\n", " ")
        request_id = response.headers.get("x-request-id", "")
        self._add(
            Answer(kind, phase, started, self.now() - started, response.status_code, code, category, request_id, detail)
        )
        return response

    def _add(self, answer: Answer) -> None:
        with self._lock:
            self.answers.append(answer)

    def snapshot(self) -> list[Answer]:
        with self._lock:
            return list(self.answers)
