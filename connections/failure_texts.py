"""Why a connection failed or stopped, in plain words, and what to do: one entry per `FailureReason`.

The person reads "you"; an admin of the organization reads the same facts
about "the person" and what an admin can do. The texts are documented, word
for word, in docs/managing-connections.md#why-a-connection-stopped; each has a
test that makes the refusal happen and finds its words on the page.
"""

from __future__ import annotations

from dataclasses import dataclass

from audit.failures import FailureReason
from organizations.models import OPERATOR_ROLES, Role


@dataclass(frozen=True)
class Explanation:
    what: str
    to_do: str


def _role_text(organization: str, role: str | None, *, admin: bool) -> Explanation:
    subject, possessive = ("The person", "Their") if admin else ("You", "Your")
    if role is None:
        verb = "is" if admin else "are"
        what = f"{subject} {verb} no longer in {organization}, so the connection ended at its next refresh."
    elif role in OPERATOR_ROLES:
        what = (
            f"{possessive} role in {organization} was changed to one that cannot connect clients, so the connection "
            f"ended at its next refresh; the role has been given back since."
        )
    else:
        label = Role(role).label.lower()
        what = f"{possessive} role in {organization} changed to {label}, so the connection ended at its next refresh."
    if role in OPERATOR_ROLES:
        to_do = "They connect the client again." if admin else "Connect the client again."
    elif admin:
        to_do = f"If they should connect, make them a member of {organization} again; they then connect again."
    else:
        to_do = f"Ask an admin of {organization}."
    return Explanation(what, to_do)


def explain(reason: FailureReason, *, organization: str, role: str | None, admin: bool = False) -> Explanation:
    """The words for `reason` in `organization` (its name), given the person's current `role` there (None: none)."""
    person = "the person" if admin else "you"
    connect_again = "They connect again" if admin else "Connect again"
    if reason == FailureReason.REFRESH_ROLE:
        return _role_text(organization, role, admin=admin)
    if reason == FailureReason.FORBIDDEN:
        return Explanation(
            f"A tool call was refused: {person} did not hold the admin or member role in {organization} at the time.",
            f"If they should, give them the member role in {organization}."
            if admin
            else f"Ask an admin of {organization}. Once your role is back, the client's next call works.",
        )
    if reason in (FailureReason.REFRESH_CLIENT_POLICY, FailureReason.CONSENT_CLIENT_POLICY):
        ended = (
            "so the connection ended at its next refresh"
            if reason == FailureReason.REFRESH_CLIENT_POLICY
            else "so it was refused at consent"
        )
        return Explanation(
            f"{organization} allows only approved clients, and this client is not one, {ended}.",
            "If it should connect, add it to the client policy below; they then connect again."
            if admin
            else f"Ask an admin of {organization} to approve this client, then connect again.",
        )
    return _EXPLANATIONS[reason](person, connect_again, "their account" if admin else "your account")


_EXPLANATIONS = {
    FailureReason.REUSE_AFTER_WINDOW: lambda person, again, account: Explanation(
        "This client presented an old sign-in token after the safe retry window, so the service ended the "
        f"connection to protect {account}.",
        f"{again}; if it happens often, update the client.",
    ),
    FailureReason.REUSE_AFTER_SUCCESSOR: lambda person, again, account: Explanation(
        "This client presented an old sign-in token after it had already used the new one, so the service ended "
        f"the connection to protect {account}.",
        f"{again}; if it happens often, update the client.",
    ),
    FailureReason.CODE_REPLAY: lambda person, again, account: Explanation(
        "This client used the same one-time sign-in code twice, so the service revoked the tokens it had received "
        f"with it, to protect {account}.",
        f"{again}; if it happens often, update the client.",
    ),
    FailureReason.CONSENT_DENIED: lambda person, again, account: Explanation(
        f"On the consent page, {person} chose Deny, so the client got no access.",
        f"Nothing, if that was meant. Otherwise: {again.lower()} and choose Allow.",
    ),
    FailureReason.REVOKED_BY_CLIENT: lambda person, again, account: Explanation(
        "The client ended this connection itself: it revoked its sign-in token, as a client does when the "
        "connection is removed or signed out in it.",
        f"Nothing, if that was meant. Otherwise: {again.lower()} from the client.",
    ),
    FailureReason.EXPIRED: lambda person, again, account: Explanation(
        "The client did not use this connection for 30 days, so its sign-in token expired and the connection ended.",
        f"{again}. A client that is used at least once a month stays connected.",
    ),
    FailureReason.REFRESH_EXPIRED: lambda person, again, account: Explanation(
        "The client presented a sign-in token that had expired: the connection was not used for 30 days, so it ended.",
        f"{again}. A client that is used at least once a month stays connected.",
    ),
    FailureReason.CLIENT_DOCUMENT_REFUSED: lambda person, again, account: Explanation(
        "This client's ID is the address of its metadata document, and the service could not use that document, "
        "so it could not tell which application this is and refused the sign-in. The page shown then said what "
        "was wrong with it.",
        "Nothing on your side: the client's maker must fix the document, or use another client. Once it is "
        "fixed, connect again.",
    ),
    FailureReason.ENDED_BY_STAFF: lambda person, again, account: Explanation(
        "The service's staff ended this connection: they revoked its sign-in tokens, as they do before "
        "removing a client.",
        f"{again} if the client may still be used; if it cannot connect any more, ask the service's operators.",
    ),
    FailureReason.RATE_LIMITED: lambda person, again, account: Explanation(
        "The client made tool calls faster than the service allows, so some were refused for a short while.",
        "Nothing: calls work again within a minute. If it happens often, let the client work more slowly.",
    ),
    FailureReason.CONCURRENCY_LIMITED: lambda person, again, account: Explanation(
        "The client ran more tool calls at once than the service allows, so some were refused.",
        "Nothing: calls work again as the running ones finish. If it happens often, let the client run fewer "
        "calls at once.",
    ),
}
