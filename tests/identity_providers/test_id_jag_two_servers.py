"""An ID-JAG is spent once across two app servers of one service.

docs/authentication.md#enterprise-managed-authorization. Real components end
to end, as tests/operator_site/test_two_servers.py builds them: two gunicorn
servers with the same secrets and one public origin, a database of their own
(PostgreSQL when the suite runs there) and Redis (REDIS_URL, or a private
`redis-server`; missing under CI is a failure), and the test provider in its
own process signing the ID-JAGs. The `jti` is recorded in Redis, so the
server that did not see an ID-JAG still refuses it.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from django.test import SimpleTestCase

from tests.identity_providers.support import LiveProvider
from tests.live_servers import start_two_servers
from tests.support import HTTP_CLIENT_LOGGERS, quiet_loggers

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
SEED = """
import django
django.setup()
from django.contrib.auth import get_user_model
from identity_providers.client_secrets import seal_client_secret
from identity_providers.models import IdentityLink, IdentityProvider
from organizations.models import Role
from organizations.services import add_membership, create_organization
organization = create_organization(slug="acme", name="Acme")
user = get_user_model().objects.create_user(username="bob@acme.test", email="bob@acme.test", password="x-unused-x")
add_membership(user=user, organization=organization, role=Role.MEMBER)
IdentityProvider.objects.create(
    organization=organization, issuer="{issuer}", client_id="service-operator",
    client_secret_sealed=seal_client_secret("unused"), enterprise_managed=True,
)
IdentityLink.objects.create(user=user, issuer="{issuer}", subject="bob-1")
"""


class IdJagAcrossTwoServersTests(SimpleTestCase):
    databases = {"default"}  # to create and drop the servers' own PostgreSQL database

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        quiet_loggers(cls.addClassCleanup, *HTTP_CLIENT_LOGGERS)
        workdir = Path(tempfile.mkdtemp(prefix="operator-id-jag-servers-"))
        cls.addClassCleanup(shutil.rmtree, workdir, ignore_errors=True)
        cls.provider = LiveProvider(cls)
        cls.urls, _ = start_two_servers(cls, workdir, seed=SEED.replace("{issuer}", cls.provider.issuer))
        cls.base_url = cls.urls["a"]  # the one public origin
        registered = httpx.post(
            f"{cls.base_url}/api/auth/oauth2/register",
            json={"client_name": "Enterprise Agent", "grant_types": [JWT_BEARER]},
            timeout=30,
        )
        registered.raise_for_status()
        cls.client_id, cls.client_secret = registered.json()["client_id"], registered.json()["client_secret"]

    def id_jag(self) -> str:
        now = int(time.time())
        claims = {
            "iss": self.provider.issuer,
            "sub": "bob-1",
            "aud": f"{self.base_url}/api/auth",
            "client_id": self.client_id,
            "resource": f"{self.base_url}/api/mcp/operator",
            "jti": uuid.uuid4().hex,
            "iat": now,
            "exp": now + 300,
        }
        response = httpx.post(f"{self.provider.issuer}/id-jag", json={"claims": claims}, timeout=30)
        response.raise_for_status()
        return str(response.json()["assertion"])

    def present(self, server: str, assertion: str) -> httpx.Response:
        form = {"grant_type": JWT_BEARER, "assertion": assertion}
        return httpx.post(
            f"{self.urls[server]}/api/auth/oauth2/token",
            data=form,
            auth=(self.client_id, self.client_secret),
            timeout=30,
        )

    def test_an_id_jag_spent_at_one_server_is_refused_at_the_other(self) -> None:
        assertion = self.id_jag()

        at_a = self.present("a", assertion)
        at_b = self.present("b", assertion)

        self.assertEqual(at_a.status_code, 200, at_a.text)
        self.assertEqual(at_b.status_code, 400, at_b.text)
        self.assertEqual(at_b.json()["error"], "invalid_grant")
        self.assertIn("was used already", at_b.json()["error_description"])

    def test_of_two_servers_given_one_id_jag_at_once_exactly_one_grants_it(self) -> None:
        assertion = self.id_jag()
        barrier = threading.Barrier(2)
        statuses: dict[str, Any] = {}

        def present_at(server: str) -> None:
            barrier.wait()
            statuses[server] = self.present(server, assertion).status_code

        threads = [threading.Thread(target=present_at, args=(server,)) for server in ("a", "b")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)

        self.assertEqual(sorted(statuses.values()), [200, 400])
