"""The authorization server's JSON endpoints: token (RFC 6749, 7523), registration (RFC 7591), revocation (RFC 7009).

Each is DOT's view with our limits (oauth/limits.py) and, for registration,
our client rules (`register_client` in oauth/registration.py). The pages (sign-in,
authorization and consent) are in oauth/views.py.
"""

import json
from typing import Any

from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.decorators import method_decorator
from oauth2_provider import views as dot_views
from oauth2_provider.views import DynamicClientRegistrationView

from oauth.id_jag_grant import id_jag_token_response
from oauth.limits import REGISTRATION, REVOCATION, TOKEN, limited, presented_client_id
from oauth.models import JWT_BEARER_GRANT_TYPE
from oauth.registration import ClientMetadataError, RegistrationClosed, register_client
from operator_core.conf import operator_settings
from operator_core.json_bodies import MalformedJson, parse_json_body
from operator_core.telemetry import metrics

ERROR_INVALID_CLIENT = "invalid_client"


def _basic_and_body_clients_disagree(request: HttpRequest) -> bool:
    """Whether HTTP Basic authenticates one client while the body's `client_id` names another."""
    scheme, _, _ = request.headers.get("Authorization", "").partition(" ")
    body_client_id = request.POST.get("client_id")
    if scheme.lower() != "basic" or not body_client_id:
        return False
    basic_client_id = presented_client_id(request)
    return basic_client_id is not None and basic_client_id != body_client_id


def _registration_error(error: str, description: str, *, status: int = 400) -> JsonResponse:
    """An RFC 7591 §3.2.2 error response, as DOT's registration view answers one."""
    return JsonResponse({"error": error, "error_description": description}, status=status)


def _token_result(response: HttpResponse) -> str:
    """What a token answer came to, for the metrics: issued, or the OAuth error code of its body (RFC 6749 §5.2)."""
    if response.status_code == 200:
        return metrics.TOKEN_ISSUED
    try:
        error = json.loads(response.content).get("error")
    except (ValueError, AttributeError):
        return metrics.OTHER
    return error if isinstance(error, str) else metrics.OTHER


def _conflicting_clients_response() -> JsonResponse:
    """401 `invalid_client` with a Basic challenge (RFC 6749 §5.2: the scheme the client used).

    oauthlib answers this case `server_error`, as if the server had failed.
    """
    body = {
        "error": ERROR_INVALID_CLIENT,
        "error_description": "The client_id in the body is not the client authenticated by HTTP Basic.",
    }
    headers = {"WWW-Authenticate": f'Basic realm="{operator_settings().issuer}"', "Cache-Control": "no-store"}
    return JsonResponse(body, status=401, headers=headers)


@method_decorator(limited(TOKEN, per_client=True), name="dispatch")
class TokenView(dot_views.TokenView):
    """DOT's token endpoint, one transaction per request, limited per IP address and per client.

    With the grant row locked in `validate_code`, two concurrent exchanges of one
    code serialize: the second finds the code redeemed and revokes what the first
    issued, instead of both minting tokens. A request whose HTTP Basic client and
    body `client_id` differ is `invalid_client` before DOT sees it. An ID-JAG
    presented as a JWT bearer grant never reaches DOT (oauth/id_jag_grant.py).
    """

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = self._answer(request, *args, **kwargs)
        if metrics.counting():
            metrics.count_token_outcome(request.POST.get("grant_type"), _token_result(response))
        return response

    def _answer(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if _basic_and_body_clients_disagree(request):
            return _conflicting_clients_response()
        if request.POST.get("grant_type") == JWT_BEARER_GRANT_TYPE:
            # A grant DOT and oauthlib do not know: ours alone (oauth/id_jag_grant.py).
            with transaction.atomic():
                return id_jag_token_response(request)
        return self._exchange(request, *args, **kwargs)

    @method_decorator(transaction.atomic)
    def _exchange(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return super().post(request, *args, **kwargs)


@method_decorator(limited(REGISTRATION), name="dispatch")
class RegisterView(DynamicClientRegistrationView):
    """RFC 7591 registration, open to anyone by default, with our client rules (oauth/registration.py).

    No registration access token is issued: docs/authentication.md names no
    client configuration endpoint (RFC 7592), so a client that changes registers again.
    Limited per IP address; closed (403) or restricted to listed redirect hosts by settings.
    """

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            data = parse_json_body(request.body)
        except MalformedJson as malformed:
            return _registration_error("invalid_client_metadata", f"Request body refused: {malformed}")
        if not isinstance(data, dict):
            return _registration_error("invalid_client_metadata", "Request body must be a JSON object")
        try:
            registered = register_client(data)
        except RegistrationClosed as closed:
            return _registration_error(closed.error, closed.description, status=403)
        except ClientMetadataError as rejected:
            return _registration_error(rejected.error, rejected.description)
        response = JsonResponse(registered, status=201)
        response["Cache-Control"] = "no-store"
        return response


@method_decorator(limited(REVOCATION), name="dispatch")
class RevokeTokenView(dot_views.RevokeTokenView):
    """DOT's revocation endpoint (RFC 7009), limited per IP address; the validator records each revocation."""
