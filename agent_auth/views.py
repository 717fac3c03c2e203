"""HTTP edge of the headless path: parse, validate, apply limits and idempotency, call a service.

Order, for every well-formed request: the per-IP limit first, then the
`Idempotency-Key`, so a replay or a key conflict is counted like any request.
A start repeated under its key gets a new token for its claim
(`reissue_claim_token`), never the first answer; a completion's key is looked
up under its claim token only, a conflicting body there costs the claim an
attempt, and a claim out of attempts gets no replay (agent_auth.idempotency).

One handler (`_answer`) renders every `OperatorError` with `as_json_response`,
answers an outage of the database or Redis 503 `temporarily_unavailable`, and
turns anything else into `internal_error` after logging it, never with the
request's email, code or token. No cookies are read, so the endpoints are
csrf-exempt.
"""

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST, require_safe
from rest_framework import serializers

from agent_auth.errors import IdempotencyKeyReused
from agent_auth.idempotency import (
    FinishedRequest,
    IdempotencyTicket,
    Outcome,
    StoredResponse,
    begin_idempotent_request,
    release_idempotent_request,
    run_idempotent_request,
)
from agent_auth.selectors import claim_id_for_token_or_none, claim_token_hash, require_attempts_left
from agent_auth.serializers import CompleteClaimSerializer, StartClaimSerializer
from agent_auth.services import (
    StartedClaim,
    complete_claim,
    count_conflicting_completion,
    reissue_claim_token,
    start_claim,
)
from operator_core.conf import operator_settings
from operator_core.errors import InvalidArguments, OperatorError, as_json_response
from operator_core.json_bodies import MalformedJson, parse_json_body
from operator_core.outages import error_for_failure
from operator_core.rate_limits import OnOutage, require_within_ip_limit
from organizations.payloads import organization_summary

logger = logging.getLogger(__name__)

IDEMPOTENCY_HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
MAX_BODY_BYTES = 16 * 1024
MAX_KEY_LENGTH = 255
HEADLESS_DOC = "headless.md"
BASE_URL_PLACEHOLDER = "{base_url}"


@dataclass(frozen=True)
class _Endpoint:
    name: str
    serializer_class: type[serializers.Serializer]
    rate_group: str
    per_hour: Callable[[], int]
    success_status: int
    action: Callable[[dict[str, Any]], Outcome]
    # The answer to a request under a key: a replay, or the request run for the first time.
    keyed: Callable[["_Endpoint", str, dict[str, Any], dict[str, Any]], HttpResponse]


def _start_payload(started: StartedClaim) -> dict[str, Any]:
    return {"claim_token": started.claim_token, "expires_in": started.expires_in}


def _start(data: dict[str, Any]) -> Outcome:
    started = start_claim(email=data["email"])
    return Outcome(payload=_start_payload(started), claim_id=started.claim_id)


def _complete(data: dict[str, Any]) -> Outcome:
    organization_id = data.get("organization_id")
    completed = complete_claim(
        claim_token=data["claim_token"],
        code=data["code"],
        organization_id=str(organization_id) if organization_id else None,
    )
    return Outcome(
        payload={
            "access_token": completed.access_token,
            "token_type": "Bearer",
            "expires_in": completed.expires_in,
            "scope": " ".join(completed.scopes),
            "organization": organization_summary(completed.organization),
        }
    )


def _keyed_start(endpoint: "_Endpoint", key: str, body: dict[str, Any], data: dict[str, Any]) -> HttpResponse:
    outcome = begin_idempotent_request(endpoint=endpoint.name, key=key, body=body)
    if isinstance(outcome, FinishedRequest):
        # The first caller's token is never handed out again: a new one for the same claim, no
        # second email. The row of a finished start always names its claim (a constraint).
        started = reissue_claim_token(claim_id=cast(uuid.UUID, outcome.claim_id))
        return _json_response(StoredResponse(endpoint.success_status, _start_payload(started)), replayed=True)
    return _run_owned(endpoint, outcome, data, keep_answer=False)


def _keyed_completion(endpoint: "_Endpoint", key: str, body: dict[str, Any], data: dict[str, Any]) -> HttpResponse:
    claim_token = data["claim_token"]
    try:
        outcome = begin_idempotent_request(
            endpoint=endpoint.name,
            key=key,
            body=body,
            scope=claim_token_hash(claim_token),
            claim_id=claim_id_for_token_or_none(claim_token),
        )
    except IdempotencyKeyReused as conflict:
        # Another body under the same key and claim is another code: it costs an attempt.
        count_conflicting_completion(claim_id=conflict.claim_id)
        raise
    if isinstance(outcome, FinishedRequest):
        require_attempts_left(claim_id=outcome.claim_id)
        # A finished completion always kept its answer, sealed (`_run_owned`, keep_answer=True).
        return _json_response(cast(StoredResponse, outcome.response), replayed=True)
    return _run_owned(endpoint, outcome, data, keep_answer=True)


_START = _Endpoint(
    name="start",
    serializer_class=StartClaimSerializer,
    rate_group="agent_auth.registration",
    per_hour=lambda: operator_settings().headless_registrations_per_hour,
    success_status=202,
    action=_start,
    keyed=_keyed_start,
)
_COMPLETE = _Endpoint(
    name="complete",
    serializer_class=CompleteClaimSerializer,
    rate_group="agent_auth.completion",
    per_hour=lambda: operator_settings().headless_completions_per_hour,
    success_status=200,
    action=_complete,
    keyed=_keyed_completion,
)


def _idempotency_key(request: HttpRequest) -> str | None:
    key = request.headers.get(IDEMPOTENCY_HEADER)
    if key is None:
        return None
    if not 0 < len(key) <= MAX_KEY_LENGTH or not all("\x21" <= char <= "\x7e" for char in key):
        raise InvalidArguments(
            f"{IDEMPOTENCY_HEADER} must be 1 to {MAX_KEY_LENGTH} printable ASCII characters.",
            field=IDEMPOTENCY_HEADER,
        )
    return key


def _json_body(request: HttpRequest) -> dict[str, Any]:
    try:
        raw = request.body
    except RequestDataTooBig:
        raise InvalidArguments("The body is too large.", field="body") from None
    if len(raw) > MAX_BODY_BYTES:
        raise InvalidArguments("The body is too large.", field="body")
    try:
        body = parse_json_body(raw)
    except MalformedJson as malformed:
        raise InvalidArguments(f"The body must be a JSON object: {malformed}.", field="body") from None
    if not isinstance(body, dict):
        raise InvalidArguments("The body must be a JSON object.", field="body")
    return body


def _validated(endpoint: _Endpoint, body: dict[str, Any]) -> dict[str, Any]:
    serializer = endpoint.serializer_class(data=body)
    if not serializer.is_valid():
        field, messages = next(iter(serializer.errors.items()))
        message = str(messages[0]) if isinstance(messages, list) and messages else "Invalid value."
        raise InvalidArguments(f"{field}: {message}", field=field)
    return dict(serializer.validated_data)


def _json_response(stored: StoredResponse, *, replayed: bool = False) -> JsonResponse:
    response = JsonResponse(stored.payload, status=stored.status)
    if replayed:
        response[REPLAYED_HEADER] = "true"
    return response


def _require_within_ip_limit(request: HttpRequest, endpoint: _Endpoint) -> None:
    require_within_ip_limit(
        request,
        group=endpoint.rate_group,
        rate=f"{endpoint.per_hour()}/h",
        message="Too many requests from this address; retry later.",
        # Fails closed while Redis is away: each request may send an email or try a code
        # (docs/operations.md#outages).
        on_outage=OnOutage.REFUSE,
    )


def _respond(request: HttpRequest, endpoint: _Endpoint) -> HttpResponse:
    key = _idempotency_key(request)
    body = _json_body(request)
    data = _validated(endpoint, body)
    # Before the key is looked at: a replay or a key conflict counts like any request.
    _require_within_ip_limit(request, endpoint)
    if key is None:
        return _json_response(StoredResponse(status=endpoint.success_status, payload=endpoint.action(data).payload))
    return endpoint.keyed(endpoint, key, body, data)


def _run_owned(
    endpoint: _Endpoint, ticket: IdempotencyTicket, data: dict[str, Any], *, keep_answer: bool
) -> HttpResponse:
    stored: StoredResponse | None = None
    try:
        stored = run_idempotent_request(
            ticket, lambda: endpoint.action(data), success_status=endpoint.success_status, keep_answer=keep_answer
        )
    finally:
        if stored is None:
            # An error stored nothing: free the key for a retry.
            release_idempotent_request(ticket)
    return _json_response(stored)


def _answer(request: HttpRequest, endpoint: _Endpoint) -> HttpResponse:
    try:
        response = _respond(request, endpoint)
    except OperatorError as error:
        response = as_json_response(error)
    except Exception as failure:
        # The one catch-all of agent_auth: no body, header or value goes to the log. An outage
        # of the database or Redis is 503 `temporarily_unavailable` with Retry-After.
        unexpected = error_for_failure(
            failure,
            logger=logger,
            context=f"agent_auth: {endpoint.name} request",
            message="Internal error; retry later.",
        )
        response = as_json_response(unexpected)
    # Claim tokens and access tokens must not sit in caches (RFC 6749 §5.1).
    response["Cache-Control"] = "no-store"
    return response


@csrf_exempt
@require_POST
def start_claim_view(request: HttpRequest) -> HttpResponse:
    """POST /api/agent/auth {email} → 202 {claim_token, expires_in}."""
    return _answer(request, _START)


@csrf_exempt
@require_POST
def complete_claim_view(request: HttpRequest) -> HttpResponse:
    """POST /api/agent/auth/claim/complete {claim_token, code, organization_id?} → 200 {access_token, ...}."""
    return _answer(request, _COMPLETE)


@require_safe
def auth_markdown_view(request: HttpRequest) -> HttpResponse:
    """GET /auth.md: docs/headless.md itself, so the page and the docs never drift apart.

    `{base_url}` is filled in with this deployment's address, so an agent can run
    the curl commands as they stand.
    """
    conf = operator_settings()
    text = (Path(conf.docs_dir) / HEADLESS_DOC).read_text(encoding="utf-8")
    return HttpResponse(text.replace(BASE_URL_PLACEHOLDER, conf.base_url), content_type="text/markdown; charset=utf-8")
