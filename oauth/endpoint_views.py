"""The authorization server's JSON endpoints: token (RFC 6749), registration (RFC 7591), revocation (RFC 7009).

Each is DOT's view with our limits (oauth/limits.py) and, for registration,
our client rules (`register_client` in oauth/services.py). The pages (sign-in,
authorization and consent) are in oauth/views.py.
"""

from typing import Any

from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.decorators import method_decorator
from oauth2_provider import views as dot_views
from oauth2_provider.views import DynamicClientRegistrationView
from oauth2_provider.views.dynamic_client_registration import _error_response

from oauth.limits import REGISTRATION, REVOCATION, TOKEN, limited
from oauth.services import ClientMetadataError, RegistrationClosed, register_client
from operator_core.json_bodies import MalformedJson, parse_json_body


@method_decorator(limited(TOKEN, per_client=True), name="dispatch")
class TokenView(dot_views.TokenView):
    """DOT's token endpoint, one transaction per request, limited per IP address and per client.

    With the grant row locked in `validate_code`, two concurrent exchanges of one
    code serialize: the second finds the code redeemed and revokes what the first
    issued, instead of both minting tokens.
    """

    @method_decorator(transaction.atomic)
    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return super().post(request, *args, **kwargs)


@method_decorator(limited(REGISTRATION), name="dispatch")
class RegisterView(DynamicClientRegistrationView):
    """RFC 7591 registration, open to anyone by default, with our client rules (`register_client` in oauth/services.py).

    No registration access token is issued: docs/authentication.md names no
    client configuration endpoint (RFC 7592), so a client that changes registers again.
    Limited per IP address; closed (403) or restricted to listed redirect hosts by settings.
    """

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            data = parse_json_body(request.body)
        except MalformedJson as malformed:
            return _error_response("invalid_client_metadata", f"Request body refused: {malformed}")
        if not isinstance(data, dict):
            return _error_response("invalid_client_metadata", "Request body must be a JSON object")
        try:
            registered = register_client(data)
        except RegistrationClosed as closed:
            return _error_response(closed.error, closed.description, status=403)
        except ClientMetadataError as rejected:
            return _error_response(rejected.error, rejected.description)
        response = JsonResponse(registered, status=201)
        response["Cache-Control"] = "no-store"
        return response


@method_decorator(limited(REVOCATION), name="dispatch")
class RevokeTokenView(dot_views.RevokeTokenView):
    """DOT's revocation endpoint (RFC 7009), limited per IP address; the validator records each revocation."""
