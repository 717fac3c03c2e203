"""The error page's sentence for an authorization request that cannot go back to its client.

When the client or its redirect URI cannot be trusted, the authorization
endpoint answers with a page instead of a redirect (RFC 6749 §4.1.2.1).
oauthlib's descriptions ("Invalid client_id parameter value.", "Mismatching
redirect URI.") tell a person nothing they can act on; these name what is
wrong with this application, for the two cases people meet: a client ID
metadata document that cannot be used (`oauth.cimd`), and a redirect URI the
application never registered or its document does not list.
"""

from oauth2_provider.models import get_application_model
from oauthlib.oauth2.rfc6749 import errors

from oauth.cimd import cimd_failure_message

DEFAULT_MESSAGE = "The request is not valid."


def error_page_message(error: errors.OAuth2Error, *, client_id: str, redirect_uri: str) -> str:
    """The sentence for `error`, raised on a request naming `client_id` and `redirect_uri`."""
    description = getattr(error, "description", "") or DEFAULT_MESSAGE
    if isinstance(error, errors.InvalidClientIdError):
        return cimd_failure_message(client_id) or description
    if isinstance(error, errors.MismatchingRedirectURIError) and redirect_uri:
        return _unlisted_redirect_uri_message(client_id, redirect_uri) or description
    return description


def _unlisted_redirect_uri_message(client_id: str, redirect_uri: str) -> str | None:
    Application = get_application_model()
    application = Application.objects.filter(client_id=client_id).only("registration_source").first()
    if application is None:
        return None
    if application.registration_source == Application.RegistrationSource.CIMD:
        return (
            f"This application asked to come back to {redirect_uri}, which its metadata document, "
            f"{client_id}, does not list among its redirect_uris."
        )
    return f"This application asked to come back to {redirect_uri}, which is not a redirect URI it registered."
