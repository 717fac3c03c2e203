"""Why a sign-in through an identity provider was refused: one code for the audit trail, one sentence for the page."""

from enum import StrEnum

from operator_core.errors import Forbidden


class Refusal(StrEnum):
    """The `outcome` of a refused `provider_sign_in` event (docs/authentication.md#single-sign-on)."""

    PROVIDER_ERROR = "provider_error"
    INVALID_STATE = "invalid_state"
    PROVIDER_UNAVAILABLE = "provider_unavailable"
    PROVIDER_MALFORMED = "provider_malformed"
    SECRET_UNAVAILABLE = "secret_unavailable"
    CODE_REFUSED = "code_refused"
    NO_ID_TOKEN = "no_id_token"
    INVALID_SIGNATURE = "invalid_signature"
    EXPIRED_ID_TOKEN = "expired_id_token"
    INVALID_ID_TOKEN = "invalid_id_token"
    EMAIL_UNVERIFIED = "email_unverified"
    EMAIL_OUTSIDE_DOMAINS = "email_outside_domains"
    EMAIL_CHANGED = "email_changed"
    SUBJECT_CHANGED = "subject_changed"
    NO_ACCOUNT = "no_account"
    NOT_LINKED = "not_linked"
    ACCOUNT_INACTIVE = "account_inactive"


_MESSAGES = {
    Refusal.PROVIDER_ERROR: "Your organization's sign-in service did not sign you in ({detail}).",
    Refusal.INVALID_STATE: (
        "This sign-in link was already used, has expired, or was started in another browser. "
        "Start again from the application."
    ),
    Refusal.PROVIDER_UNAVAILABLE: (
        "Your organization's sign-in service did not answer in time. Try again in a few minutes."
    ),
    Refusal.PROVIDER_MALFORMED: (
        "Your organization's sign-in service sent an answer this service cannot read. "
        "Ask your administrator to check its configuration."
    ),
    Refusal.SECRET_UNAVAILABLE: (
        "Sign-in through your organization's service is unavailable here for now. Ask an administrator of this service."
    ),
    Refusal.CODE_REFUSED: "Your organization's sign-in service refused to complete the sign-in. Start again.",
    Refusal.NO_ID_TOKEN: "Your organization's sign-in service did not say who you are. Start again.",
    Refusal.INVALID_SIGNATURE: (
        "The answer from your organization's sign-in service could not be verified, so it was not trusted."
    ),
    Refusal.EXPIRED_ID_TOKEN: "The answer from your organization's sign-in service had expired. Start again.",
    Refusal.INVALID_ID_TOKEN: (
        "The answer from your organization's sign-in service was not meant for this sign-in ({detail}). Start again."
    ),
    Refusal.EMAIL_UNVERIFIED: (
        "Your organization's sign-in service has not verified your email address. Ask your administrator."
    ),
    Refusal.EMAIL_OUTSIDE_DOMAINS: (
        "Your organization's sign-in service signed you in with an email address outside the domains it serves here."
    ),
    Refusal.EMAIL_CHANGED: (
        "Your email address at your organization's sign-in service no longer matches your account here. "
        "Ask an administrator of this service to update your account."
    ),
    Refusal.SUBJECT_CHANGED: (
        "Your account here is linked to another person at your organization's sign-in service. "
        "Ask an administrator of this service."
    ),
    Refusal.NO_ACCOUNT: (
        "You signed in at your organization's sign-in service, but you have no account here. "
        "Ask an admin of your organization to add you."
    ),
    Refusal.NOT_LINKED: "Your account at your organization's sign-in service is linked to no account here.",
    Refusal.ACCOUNT_INACTIVE: "Your account here is deactivated. Ask an administrator of this service.",
}


class ProviderSignInRefused(Forbidden):
    """A sign-in through a provider that ends on a page saying why; `reason` is audited, never the token."""

    def __init__(self, reason: Refusal, *, detail: str = "", person_id: int | None = None) -> None:
        super().__init__(_MESSAGES[reason].format(detail=detail or "no reason given"))
        self.reason = reason
        self.person_id = person_id
        if reason in (Refusal.PROVIDER_UNAVAILABLE, Refusal.PROVIDER_MALFORMED, Refusal.SECRET_UNAVAILABLE):
            # The provider failed, not the person: a bad gateway, as a proxy would say.
            self.http_status = 502
        # The email typed at the sign-in page, when known: the refusal counts against its limit.
        self.typed_email = ""
