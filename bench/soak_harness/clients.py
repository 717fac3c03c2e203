"""The soak's clients, each a thread talking HTTP to the proxy from a loopback address of its own.

Every per-IP limit then counts each client apart, as it would for people on
different machines (the proxy appends the peer to X-Forwarded-For and the app
servers trust one proxy). Tool calls are paced to a total rate; the others run
in loops with pauses. Every answer goes through the Recorder.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import secrets
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import httpx

from bench.soak_harness.answers import Recorder
from tests.flows.live_oauth import REDIRECT_URI, TOKEN_PATH
from tests.flows.support import parse_form
from tests.mcp_requests import DOCS_PATH, OPERATOR_PATH, envelope, routing_headers

TIMEOUT_SECONDS = 40  # past the proxy's 35 s server timeout: a hang shows as the proxy's answer
RETRIES = 5  # a refresh or headless request whose answer was lost or refused for an outage
_addresses = itertools.count(1)


def new_address() -> str:
    """A loopback address no other client of this run uses (127.0.0.0/8 all reaches the proxy)."""
    number = next(_addresses)
    return f"127.0.{1 + number // 250}.{1 + number % 250}"


def http_client(base_url: str, address: str, **options: Any) -> httpx.Client:
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=base_url, timeout=TIMEOUT_SECONDS, transport=transport, **options)


def retry_after(response: httpx.Response | None) -> float:
    """How long to wait before sending the same request again: its Retry-After, else a second."""
    if response is None:
        return 1.0
    try:
        return min(float(response.headers.get("retry-after", "1")), 10.0)
    except ValueError:
        return 1.0


def transient(response: httpx.Response | None) -> bool:
    """No answer, an outage answer or the proxy's: the request may be sent again as it was."""
    return response is None or response.status_code in (502, 503, 504)


def call_tool(
    http: httpx.Client, recorder: Recorder, token: str, tool: str, arguments: dict[str, Any]
) -> httpx.Response | None:
    message = envelope("tools/call", {"name": tool, "arguments": arguments})
    headers = {**routing_headers(message), "Authorization": f"Bearer {token}"}
    return recorder.send(f"tool:{tool}", lambda: http.post(OPERATOR_PATH, json=message, headers=headers))


@dataclass
class Context:
    """What every client needs: where the proxy is, the recorder, the stop signal."""

    base_url: str
    recorder: Recorder
    stopping: threading.Event


def tool_caller(context: Context, token: str, tool: str, arguments: dict[str, Any], interval: float) -> None:
    """One person calling one tool every `interval` seconds, whatever the answers."""
    with http_client(context.base_url, new_address()) as http:
        next_at = context.recorder.now()
        while not context.stopping.is_set():
            call_tool(http, context.recorder, token, tool, arguments)
            next_at = max(next_at + interval, context.recorder.now() - interval)
            context.stopping.wait(max(0.0, next_at - context.recorder.now()))


def docs_caller(context: Context, interval: float) -> None:
    """Anonymous calls of the docs endpoint, under its per-address limit."""
    with http_client(context.base_url, new_address()) as http:
        for number in itertools.count():
            if context.stopping.wait(interval):
                return
            if number % 2:
                message = envelope("tools/call", {"name": "search_docs", "arguments": {"query": "refresh token"}})
            else:
                message = envelope("tools/list")
            context.recorder.send("docs", lambda m=message: http.post(DOCS_PATH, json=m, headers=routing_headers(m)))


# --- OAuth: registration, sign-in, consent, refreshes ------------------------------------------


@dataclass
class Person:
    email: str
    password: str
    organization_id: str


def register(context: Context, http: httpx.Client) -> str | None:
    body = {"client_name": "Soak Agent", "redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"}
    response = context.recorder.send("register", lambda: http.post("/api/auth/oauth2/register", json=body))
    return response.json()["client_id"] if response is not None and response.status_code == 201 else None


def connect(context: Context, client_id: str, person: Person) -> dict[str, Any] | None:
    """Sign in and consent as a browser does, then exchange the code: the token answer, None if a step failed."""
    recorder = context.recorder
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    query = urlencode(
        {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": REDIRECT_URI,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": "soak",
            "scope": "mcp:operator.read",
        }
    )
    with http_client(context.base_url, new_address(), follow_redirects=True) as browser:
        sign_in = recorder.send("authorize", lambda: browser.get(f"/api/auth/oauth2/authorize?{query}"))
        if sign_in is None or sign_in.status_code != 200 or "/api/auth/sign-in" not in str(sign_in.url):
            return None
        fields = {**parse_form(sign_in.text).fields, "email": person.email, "password": person.password}
        page = str(sign_in.url)
        consent = recorder.send("sign-in", lambda: browser.post(page, data=fields, headers={"Referer": page}))
        if consent is None or consent.status_code != 200:
            return None
        form = parse_form(consent.text)
        choice = {**form.fields, "organization": person.organization_id, "allow": "true"}
        action = urljoin(str(consent.url), form.action or "")
        answer = recorder.send(
            "consent",
            lambda: browser.post(action, data=choice, headers={"Referer": str(consent.url)}, follow_redirects=False),
        )
        if answer is None or answer.status_code != 302:
            return None
    code = parse_qs(urlsplit(answer.headers["Location"]).query).get("code", [""])[0]
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT_URI,
        "client_id": client_id,
        "code_verifier": verifier,
    }
    with http_client(context.base_url, new_address()) as http:
        exchange = recorder.send("token:code", lambda: http.post(TOKEN_PATH, data=data))
    return exchange.json() if exchange is not None and exchange.status_code == 200 else None


def connector(context: Context, people: list[Person], interval: float) -> None:
    """New connections all run long: register, sign in, consent, exchange, one tool call."""
    for person in itertools.cycle(people):
        if context.stopping.wait(interval):
            return
        with http_client(context.base_url, new_address()) as http:
            client_id = register(context, http)
            tokens = connect(context, client_id, person) if client_id else None
            if tokens:
                call_tool(http, context.recorder, tokens["access_token"], "list_modules", {"limit": 5})


def _invalid_grant(response: httpx.Response) -> bool:
    """The answer a real replay must get (RFC 6749 §5.2)."""
    try:
        return response.status_code == 400 and response.json().get("error") == "invalid_grant"
    except ValueError:
        return False


@dataclass
class Family:
    """One connection's refresh-token family as its client holds it."""

    person: Person
    client_id: str = ""
    refresh_token: str = ""
    replayed: bool = False  # ended on purpose by a real replay
    refreshes: int = 0
    disagreements: list[str] = field(default_factory=list)  # concurrent or retried refreshes that differed


class Refresher:
    """Refreshes one connection every few seconds: alone, twice at once, and retried as if an answer was lost."""

    def __init__(self, context: Context, person: Person, *, interval: float, replay_at: float | None) -> None:
        self.context = context
        self.person = person
        self.interval = interval
        self.replay_at = replay_at  # run time of the one deliberate replay, or None
        self.families: list[Family] = []
        self.address = new_address()

    def _connect(self) -> Family | None:
        with http_client(self.context.base_url, self.address) as http:
            client_id = register(self.context, http)
        tokens = connect(self.context, client_id, self.person) if client_id else None
        if tokens is None:
            return None
        family = Family(self.person, client_id, tokens["refresh_token"])
        self.families.append(family)
        return family

    def refresh(
        self, family: Family, token: str, *, kind: str = "refresh", replay: bool = False
    ) -> httpx.Response | None:
        data = {"grant_type": "refresh_token", "refresh_token": token, "client_id": family.client_id}
        expect = _invalid_grant if replay else None
        with http_client(self.context.base_url, self.address) as http:
            response = None
            for _ in range(RETRIES):
                response = self.context.recorder.send(kind, lambda: http.post(TOKEN_PATH, data=data), expect=expect)
                if not transient(response) or self.context.stopping.wait(retry_after(response)):
                    break
        return response

    def _rotate(self, family: Family, mode: str) -> bool:
        token = family.refresh_token
        if mode == "concurrent":
            answers: list[httpx.Response | None] = [None, None]
            threads = [
                threading.Thread(
                    target=lambda i=i: answers.__setitem__(i, self.refresh(family, token, kind="refresh:concurrent"))
                )
                for i in range(2)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        else:
            answers = [self.refresh(family, token)]
            if mode == "retried":
                answers.append(self.refresh(family, token, kind="refresh:retried"))
        bodies = [a.json() for a in answers if a is not None and a.status_code == 200]
        if not bodies:
            return False
        if len({(b["access_token"], b["refresh_token"]) for b in bodies}) > 1:
            family.disagreements.append(mode)
        family.refresh_token = bodies[0]["refresh_token"]
        family.refreshes += 1
        with http_client(self.context.base_url, self.address) as http:
            call_tool(http, self.context.recorder, bodies[0]["access_token"], "list_sources", {"limit": 5})
        return True

    def _replay(self, family: Family) -> None:
        """A real replay: the token before last, after its successor was used; the family must end."""
        old = family.refresh_token
        if not self._rotate(family, "alone") or not self._rotate(family, "alone"):
            return
        self.refresh(family, old, kind="refresh:replay", replay=True)
        family.replayed = True

    def run(self) -> None:
        family = None
        modes = itertools.cycle(["alone", "concurrent", "alone", "retried"])
        while not self.context.stopping.wait(self.interval):
            if family is None:
                family = self._connect()
                continue
            if self.replay_at is not None and self.context.recorder.now() >= self.replay_at:
                self.replay_at = None
                self._replay(family)
                family = None
                continue
            self._rotate(family, next(modes))

    def final_check(self) -> list[str]:
        """Refresh every family once more: each must still be alive, unless ended by the deliberate replay."""
        problems = []
        for family in self.families:
            if family.replayed:
                continue
            response = self.refresh(family, family.refresh_token, kind="refresh:final")
            if response is None or response.status_code != 200:
                status = "no answer" if response is None else f"{response.status_code} {response.text[:120]}"
                problems.append(f"family of {family.person.email} (client {family.client_id}): {status}")
            problems.extend(
                f"{family.client_id}: a {mode} refresh answered two different pairs" for mode in family.disagreements
            )
        return problems
