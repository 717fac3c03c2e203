"""What staff may configure for a provider: its issuer URL and the email domains it serves.

Pure functions, shared by the admin's forms, the command and the services, each
raising `InvalidArguments` naming the field. The issuer is kept exactly as given
(OpenID Connect Discovery 1.0 §4.3 compares it character for character with the
discovery document's and every ID token's `iss`); a domain is stored in one form,
lower-case ASCII, so that comparing an email's domain with it is plain equality.
"""

import ipaddress
import re
from urllib.parse import urlsplit

from accounts.emails import folded_domain
from operator_core.errors import InvalidArguments

MAX_ISSUER_LENGTH = 255  # IdentityProvider.issuer
MAX_DOMAIN_LENGTH = 253  # RFC 1035 §2.3.4, without the final dot
# Development and tests run a provider on the machine itself; anywhere else, plain HTTP
# would let anyone on the path sign in as anyone (RFC 8252 §8.3 names the same hosts).
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
_PRINTABLE_ASCII = re.compile(r"^[\x21-\x7e]+$")


def valid_issuer(raw: str) -> str:
    """`raw` without surrounding blanks, if it is an issuer URL staff may configure."""
    issuer = raw.strip()
    if not issuer:
        raise InvalidArguments("Give the provider's issuer URL.", field="issuer")
    if len(issuer) > MAX_ISSUER_LENGTH:
        raise InvalidArguments(f"The issuer URL is longer than {MAX_ISSUER_LENGTH} characters.", field="issuer")
    # A backslash is a slash to some URL parsers and not to others.
    if not _PRINTABLE_ASCII.match(issuer) or "\\" in issuer:
        raise InvalidArguments("The issuer URL must be ASCII, without spaces or backslashes.", field="issuer")
    try:
        parts = urlsplit(issuer)
        parts.port  # noqa: B018 (parsing the port is what raises)
    except ValueError:
        raise InvalidArguments("The issuer URL is not a URL.", field="issuer") from None
    host = parts.hostname or ""
    if parts.scheme != "https" and not (parts.scheme == "http" and host in LOOPBACK_HOSTS):
        raise InvalidArguments(
            "The issuer URL must start with https:// (http:// only on 127.0.0.1, [::1] or localhost).",
            field="issuer",
        )
    if not host:
        raise InvalidArguments("The issuer URL has no host.", field="issuer")
    if parts.username is not None or parts.password is not None:
        raise InvalidArguments("The issuer URL must not hold a user name or password.", field="issuer")
    # "?" or "#" with nothing after them parse as empty, so the raw text is checked too.
    if parts.query or parts.fragment or "?" in issuer or "#" in issuer:
        raise InvalidArguments("The issuer URL must have no query and no fragment.", field="issuer")
    return issuer


def valid_domain(raw: str) -> str:
    """`raw` as one email domain in its stored form: lower-case, ASCII (IDNA), several labels."""
    text = raw.strip()
    if not text:
        raise InvalidArguments("Give an email domain, such as acme.example.", field="domain")
    if "@" in text or "/" in text or ":" in text:
        raise InvalidArguments(f"Give the domain alone, such as acme.example, not {text!r}.", field="domain")
    if "*" in text:
        raise InvalidArguments("A domain cannot be a wildcard: list each domain.", field="domain")
    if text.endswith("."):
        raise InvalidArguments("Give the domain without a final dot.", field="domain")
    try:
        domain = folded_domain(text)
    except UnicodeError:
        raise InvalidArguments(f"{text!r} is not a valid domain name.", field="domain") from None
    if _is_ip_address(domain):
        raise InvalidArguments("A domain cannot be an IP address.", field="domain")
    labels = domain.split(".")
    if len(domain) > MAX_DOMAIN_LENGTH or not all(_LABEL.match(label) for label in labels):
        raise InvalidArguments(f"{text!r} is not a valid domain name.", field="domain")
    # One label (`localhost`, `example`) is no one's email domain; a numeric top level is an address.
    if len(labels) < 2 or labels[-1].isdigit():
        raise InvalidArguments(f"{text!r} is not a full domain name, such as acme.example.", field="domain")
    return domain


def _is_ip_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return False
    return True
