"""Each private name of django-oauth-toolkit the oauth app relies on, pinned to the source it was written against.

DOT may change a private method in any release without notice. Each row holds
the SHA-256 of `inspect.getsource` of DOT's original, and what to check in our
code when it changes; docs/development/decisions.md#dot-private-names says why
each one has no public replacement. After re-checking, put the new digest here.
"""

import hashlib
import inspect
from collections.abc import Callable
from typing import Any

from django.test import SimpleTestCase
from oauth2_provider import cimd
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauth2_provider.views import dynamic_client_registration

# (DOT's original, SHA-256 of its source, what to re-check in ours when it changes)
PINNED: list[tuple[Callable[..., Any], str, str]] = [
    (
        OAuth2Validator._load_application,
        "d6038203ad28e2212aa4252ca619477d065edb44911c7f663653587caf4d4ab2",
        "OperatorOAuth2Validator._load_application (oauth/validators.py) still refuses a client id "
        "holding NUL before DOT's lookup, and DOT's lookup still returns the client or None.",
    ),
    (
        OAuth2Validator._create_authorization_code,
        "6aa66b1d03974f3e4c4af72beb3c9b02dec3b16c78dd73f3a831633878577338",
        "OperatorOAuth2Validator.save_authorization_code (oauth/validators.py) writes the grant "
        "instead of DOT: copy any field or check DOT added to its grant.",
    ),
    (
        OAuth2Validator._save_bearer_token,
        "bbf80b89d0b5645914c9cfc3081c210bafa76d726f5130be98c191c9c3934b7c",
        "OperatorOAuth2Validator._save_bearer_token (oauth/validators.py) and oauth/refresh_grace.py: "
        "a replay still stores nothing, and DOT still clears request.refresh_token_instance on rotation.",
    ),
    (
        OAuth2Validator._create_access_token,
        "b9b36b168ac8ba464970453fa934c706990a808ddf01b1bf9df2acc96de09358",
        "OperatorOAuth2Validator._create_access_token (oauth/validators.py) still completes a saved "
        "row DOT returns (organization, resource).",
    ),
    (
        OAuth2Validator._create_refresh_token,
        "eca3713cacfd672bf15e38521c2c80511e790689cbf08458dd09db32ce7001e0",
        "OperatorOAuth2Validator._create_refresh_token (oauth/validators.py) still completes a saved "
        "row DOT returns (family, organization, authorized_at, resource).",
    ),
    (
        OAuth2Validator._check_secret,
        "0582427eb9265142f32fef4047b0cdfebb270931b4b2f339ea3224ee61ca81d1",
        "OperatorOAuth2Validator._check_secret (oauth/validators.py) replaces DOT's check: is it still "
        "the one place a client secret is compared?",
    ),
    (
        OAuth2Validator._check_and_set_request_resource,
        "83be546872406c2c6f150743dd9412b7280bd5986efe138b314af409e58e1c36",
        "OperatorOAuth2Validator._save_bearer_token (oauth/validators.py) calls it on a replay "
        "in place of DOT's storage: does it still only check and set request.resource?",
    ),
    (
        dynamic_client_registration._build_application_kwargs,
        "97b3f3a2441a78a97ec393c0d34447b0a98996f7e81bf2b9f5c88ef60020dbc8",
        "register_client (oauth/registration.py) still gets (kwargs, error response) with the same "
        "Application fields and RFC 7591 errors.",
    ),
    (
        cimd._build_application_kwargs,
        "e42a0861db6fb81ad4593ae1c25705a540e0084b6f9643c7b81659b703ffa707",
        "ExplainingMetadataFetcher (oauth/cimd.py) still sees the CIMDError DOT raises after the "
        "fetch, and its table of DOT's messages still sorts each one.",
    ),
]


def source_digest(original: Callable[..., Any]) -> str:
    return hashlib.sha256(inspect.getsource(original).encode("utf-8")).hexdigest()


class DotPrivateUsesTests(SimpleTestCase):
    def test_each_private_dot_name_we_rely_on_is_the_source_our_code_was_checked_against(self) -> None:
        for original, digest, recheck in PINNED:
            name = f"{original.__module__}.{original.__qualname__}"
            with self.subTest(name):
                self.assertEqual(
                    source_digest(original),
                    digest,
                    f"django-oauth-toolkit changed {name}. Re-check: {recheck} "
                    "Then pin the new digest in tests/oauth/test_dot_private_uses.py.",
                )
