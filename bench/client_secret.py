"""CPU a wrong client secret costs the server, before (DOT's PBKDF2 hash) and after (the keyed digest).

Creates two confidential clients in a throw-away test database, one whose
secret is stored as DOT stored it (a PBKDF2 password hash) and one stored as
now (`oauth/client_secrets.py`), then sends `POST /api/auth/oauth2/revoke` with
HTTP Basic and a wrong secret through Django's WSGI handler, N times each.
Prints the process CPU time per request (the whole request), then per check of
the secret alone (`oauth.services.verify_client_secret`).

    OPERATOR_BASE_URL=http://testserver .venv/bin/python bench/client_secret.py [--calls 20]
"""

from __future__ import annotations

import argparse
import base64
import io
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "operator_site.settings")

import django

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth.hashers import make_password  # noqa: E402
from django.core.handlers.wsgi import WSGIHandler  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import override_settings, setup_test_environment  # noqa: E402

from oauth.models import Application  # noqa: E402
from oauth.services import verify_client_secret  # noqa: E402

SECRET = "right-secret-" + "r" * 50
BODY = b"token=anything&token_type_hint=access_token"


def confidential_client(client_id: str, stored_secret: str) -> Application:
    return Application.objects.create(
        client_id=client_id,
        name=client_id,
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="https://client.example/callback",
        client_secret=stored_secret,
    )


def revoke_with_wrong_secret(handler: WSGIHandler, client_id: str) -> str:
    credentials = base64.b64encode(f"{client_id}:wrong-secret".encode()).decode()
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/api/auth/oauth2/revoke",
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "HTTP_HOST": "testserver",
        "REMOTE_ADDR": "127.0.0.1",
        "CONTENT_TYPE": "application/x-www-form-urlencoded",
        "CONTENT_LENGTH": str(len(BODY)),
        "HTTP_AUTHORIZATION": f"Basic {credentials}",
        "wsgi.input": io.BytesIO(BODY),
        "wsgi.url_scheme": "http",
    }
    status: list[str] = []
    b"".join(handler(environ, lambda code, headers: status.append(code)))
    return status[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20)
    options = parser.parse_args()

    setup_test_environment()
    database = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        clients = {
            "pbkdf2 (before)": confidential_client("legacy-client", make_password(SECRET, hasher="pbkdf2_sha256")),
            "hmac-sha256 (now)": confidential_client("digest-client", SECRET),
        }
        for application in clients.values():
            application.refresh_from_db()
        handler = WSGIHandler()
        unlimited = {**settings.OPERATOR, "oauth_revocations_per_minute": 10**9}
        print(f"{'stored as':<20}{'calls':>7}{'CPU ms/request':>16}{'status':>8}")
        with override_settings(OPERATOR=unlimited):
            for label, application in clients.items():
                status = revoke_with_wrong_secret(handler, application.client_id)
                started = time.process_time()
                for _ in range(options.calls):
                    status = revoke_with_wrong_secret(handler, application.client_id)
                cpu_ms = (time.process_time() - started) / options.calls * 1000
                print(f"{label:<20}{options.calls:>7}{cpu_ms:>16.2f}{status.split()[0]:>8}")
        print(f"\n{'stored as':<20}{'checks':>7}{'CPU us/check':>16}")
        for label, application in clients.items():
            checks = options.calls if application.client_secret.startswith("pbkdf2") else options.calls * 1000
            started = time.process_time()
            for _ in range(checks):
                verify_client_secret(presented="wrong-secret", stored=application.client_secret)
            cpu_us = (time.process_time() - started) / checks * 1e6
            print(f"{label:<20}{checks:>7}{cpu_us:>16.1f}")
    finally:
        connection.creation.destroy_test_db(database, verbosity=0)


if __name__ == "__main__":
    main()
