"""/healthz answers with no I/O; /readyz says whether this process can serve; /healthz/dependencies names what is down.

A shared dependency's outage keeps /readyz at 200 once the process is ready: the
load balancer must not take every server out at once (docs/deploy.md#health-checks).
"""

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection
from django.test import TransactionTestCase, override_settings

from operator_site import health

UNREACHABLE_REDIS = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:1/0"}
}


@contextmanager
def database_unreachable() -> Iterator[None]:
    saved = dict(connection.settings_dict)
    connection.close()
    if connection.vendor == "sqlite":
        connection.settings_dict["NAME"] = "/nonexistent-directory/operator.sqlite3"
    else:
        connection.settings_dict["PORT"] = "1"
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(saved)


class HealthTests(TransactionTestCase):
    def setUp(self) -> None:
        health._settled.update(database=False, migrations=False, keys=False)

    def test_liveness_makes_no_query(self) -> None:
        with self.assertNumQueries(0):
            response = self.client.get("/healthz")
        self.assertEqual(response.status_code, 200)
        self.assertEqual(response.json(), {"status": "alive"})

    def test_probes_pass_the_host_check(self) -> None:
        for path in ("/healthz", "/readyz", "/healthz/dependencies"):
            with self.subTest(path=path):
                response = self.client.get(path, HTTP_HOST="10.0.0.7:8000")
                self.assertEqual(response.status_code, 200, response.content)

    def test_ready_when_database_keys_and_migrations_are(self) -> None:
        response = self.client.get("/readyz")
        self.assertEqual(response.status_code, 200, response.content)
        self.assertEqual(response.json(), {"status": "ready"})

    def test_readiness_probe_of_a_ready_process_makes_no_query(self) -> None:
        self.client.get("/readyz")
        with self.assertNumQueries(0):
            self.client.get("/readyz")

    def test_a_process_that_never_reached_its_database_is_not_ready_until_it_does(self) -> None:
        with database_unreachable():
            down = self.client.get("/readyz")
        self.assertEqual(down.status_code, 503)
        self.assertEqual(down.json(), {"status": "unavailable", "failed": ["database"]})
        self.assertEqual(self.client.get("/readyz").status_code, 200)

    def test_a_database_outage_keeps_a_ready_process_ready_and_is_reported_as_a_dependency(self) -> None:
        self.assertEqual(self.client.get("/readyz").status_code, 200)
        with database_unreachable():
            ready = self.client.get("/readyz")
            dependencies = self.client.get("/healthz/dependencies")
        self.assertEqual(ready.status_code, 200)
        self.assertEqual(dependencies.status_code, 503)
        self.assertEqual(dependencies.json()["dependencies"]["database"], "down")
        self.assertEqual(self.client.get("/healthz/dependencies").json()["dependencies"]["database"], "up")

    def test_redis_down_keeps_readiness_and_is_reported_as_a_dependency(self) -> None:
        with override_settings(CACHES=UNREACHABLE_REDIS):
            ready = self.client.get("/readyz")
            dependencies = self.client.get("/healthz/dependencies")
        self.assertEqual(ready.status_code, 200, ready.content)
        self.assertEqual(dependencies.status_code, 503)
        self.assertEqual(
            dependencies.json(),
            {"status": "degraded", "dependencies": {"database": "up", "redis": "down"}},
        )

    def test_dependencies_on_the_embedded_default_are_healthy_without_redis(self) -> None:
        with override_settings(CACHES={"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}):
            response = self.client.get("/healthz/dependencies")
        self.assertEqual(response.status_code, 200)
        self.assertEqual(
            response.json(), {"status": "healthy", "dependencies": {"database": "up", "redis": "not configured"}}
        )

    def test_unloadable_signing_key_is_503_naming_keys(self) -> None:
        with override_settings(OPERATOR_SIGNING_KEY="not a key"):
            response = self.client.get("/readyz")
        self.assertEqual(response.json()["failed"], ["keys"])

    def test_probes_are_never_rate_limited_nor_cached(self) -> None:
        for path in ("/readyz", "/healthz/dependencies"):
            with self.subTest(path=path):
                responses = [self.client.get(path) for _ in range(50)]
                self.assertEqual({response.status_code for response in responses}, {200})
                self.assertEqual(responses[-1]["Cache-Control"], "no-store")
