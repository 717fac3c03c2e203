"""Two live origins share one database; neither redeems a code or refresh token the other issued.

Real components end to end: two gunicorn servers of the real WSGI application,
each with its own `OPERATOR_BASE_URL`, on one SQLite database migrated and
seeded by subprocesses, and the same keys (the hardest case: only the bound
resource tells their credentials apart). A client registers and is authorized
at origin B, over HTTP, as a browser would; origin A's token endpoint then
refuses B's code and B's refresh token with `invalid_grant`, while B still
accepts both (RFC 8707; docs/authentication.md). The servers use a SQLite
file of their own whatever database the test run uses: the test process needs
no rows, it only speaks HTTP. tests/oauth/test_origins.py checks the same rules
in one process, on the run's database.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import requests
from django.test import SimpleTestCase

from tests.flows.support import parse_form
from tests.live_servers import free_port, start_gunicorn

BASE_DIR = Path(__file__).resolve().parents[2]
REDIRECT_URI = "http://127.0.0.1:8765/callback"
EMAIL = "dana@origins.test"
PASSWORD = "two-origins-password"

SEED = f"""
import django
django.setup()
from django.contrib.auth import get_user_model
from organizations.models import Role
from organizations.services import add_membership, create_organization
organization = create_organization(slug="acme", name="Acme")
user = get_user_model().objects.create_user(username="{EMAIL}", email="{EMAIL}", password="{PASSWORD}")
add_membership(user=user, organization=organization, role=Role.MEMBER)
"""


class TwoOriginsTests(SimpleTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.workdir = Path(tempfile.mkdtemp(prefix="operator-origins-"))
        cls.addClassCleanup(shutil.rmtree, cls.workdir, ignore_errors=True)
        ports = {"a": free_port(), "b": free_port()}
        cls.origins = {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}
        shared = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "operator_site.settings",
            "DATABASE_URL": f"sqlite:///{cls.workdir / 'operator.sqlite3'}",
            "OPERATOR_VAR_DIR": str(cls.workdir),
            "OPERATOR_SIGNING_KEY_PATH": str(cls.workdir / "oauth-signing-key.pem"),
            "OPERATOR_LTI_KEY_PATH": str(cls.workdir / "lti-signing-key.pem"),
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        }
        cls.env = {name: {**shared, "OPERATOR_BASE_URL": origin} for name, origin in cls.origins.items()}
        python = sys.executable
        for command in ([python, "manage.py", "migrate", "--noinput"], [python, "-c", SEED]):
            subprocess.run(command, cwd=BASE_DIR, env=cls.env["b"], check=True, capture_output=True)
        for name, port in ports.items():
            cls._serve(name, port)

    @classmethod
    def _serve(cls, name: str, port: int) -> None:
        start_gunicorn(cls, environment=cls.env[name], port=port, log=cls.workdir / f"gunicorn-{name}.log", workers=1)

    def token_endpoint(self, origin: str) -> str:
        return f"{self.origins[origin]}/api/auth/oauth2/token"

    def authorize_at_b(self) -> tuple[str, str, str]:
        """Register a public client at B and play the browser there: (client_id, code, verifier)."""
        registered = requests.post(
            f"{self.origins['b']}/api/auth/oauth2/register",
            json={"client_name": "Agent", "redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "none"},
            timeout=10,
        )
        self.assertEqual(registered.status_code, 201, registered.text)
        client_id = registered.json()["client_id"]
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        query = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": REDIRECT_URI,
            "scope": "mcp:operator.read",
            "state": "s",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
        browser = requests.Session()
        self.addCleanup(browser.close)
        sign_in = browser.get(f"{self.origins['b']}/api/auth/oauth2/authorize?{urlencode(query)}", timeout=10)
        fields = parse_form(sign_in.text).fields
        consent = browser.post(
            sign_in.url,
            data={**fields, "email": EMAIL, "password": PASSWORD},
            headers={"Referer": sign_in.url},
            timeout=10,
        )
        self.assertEqual(consent.status_code, 200, consent.text[:500])
        form = parse_form(consent.text)
        answer = browser.post(
            urljoin(consent.url, form.action or ""),
            data={**form.fields, "allow": "true"},
            headers={"Referer": consent.url},
            allow_redirects=False,
            timeout=10,
        )
        self.assertEqual(answer.status_code, 302, answer.text[:500])
        code = parse_qs(urlsplit(answer.headers["Location"]).query)["code"][0]
        return client_id, code, verifier

    def post_token(self, origin: str, **fields: str) -> requests.Response:
        return requests.post(self.token_endpoint(origin), data=fields, timeout=10)

    def assert_invalid_grant(self, response: requests.Response) -> None:
        self.assertEqual(response.status_code, 400, response.text)
        self.assertEqual(response.json()["error"], "invalid_grant")

    def test_a_code_and_a_refresh_token_of_origin_b_are_refused_at_origin_a(self) -> None:
        client_id, code, verifier = self.authorize_at_b()
        exchange = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT_URI,
            "client_id": client_id,
            "code_verifier": verifier,
        }

        code_at_a = self.post_token("a", **exchange)
        code_at_b = self.post_token("b", **exchange)
        refresh = {"grant_type": "refresh_token", "refresh_token": code_at_b.json()["refresh_token"]}
        refresh_at_a = self.post_token("a", client_id=client_id, **refresh)
        refresh_at_b = self.post_token("b", client_id=client_id, **refresh)

        self.assert_invalid_grant(code_at_a)
        self.assertEqual(code_at_b.status_code, 200, code_at_b.text)
        self.assert_invalid_grant(refresh_at_a)
        self.assertEqual(refresh_at_b.status_code, 200, refresh_at_b.text)
        claims = json.loads(base64.urlsafe_b64decode(refresh_at_b.json()["access_token"].split(".")[1] + "=="))
        self.assertEqual(claims["aud"], f"{self.origins['b']}/api/mcp/operator")
