"""/healthz answers with no I/O; /readyz names what is down and recovers when it is back."""

from django.db import connection
from django.test import TransactionTestCase, override_settings

from operator_site import health

UNREACHABLE_REDIS = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:1/0"}
}


class HealthTests(TransactionTestCase):
    def setUp(self) -> None:
        health._settled.update(migrations=False, keys=False)

    def test_liveness_makes_no_query(self) -> None:
        with self.assertNumQueries(0):
            response = self.client.get("/healthz")
        self.assertEqual(response.status_code, 200)
        self.assertEqual(response.json(), {"status": "alive"})

    def test_probes_pass_the_host_check(self) -> None:
        response = self.client.get("/healthz", HTTP_HOST="10.0.0.7:8000")
        self.assertEqual(response.status_code, 200)

    def test_ready_when_database_keys_and_migrations_are(self) -> None:
        response = self.client.get("/readyz")
        self.assertEqual(response.status_code, 200, response.content)
        self.assertEqual(response.json(), {"status": "ready"})

    def test_second_readiness_probe_costs_one_query(self) -> None:
        self.client.get("/readyz")
        with self.assertNumQueries(1):
            self.client.get("/readyz")

    def test_database_down_is_503_naming_it_and_back_is_200(self) -> None:
        saved = dict(connection.settings_dict)
        connection.close()
        if connection.vendor == "sqlite":
            connection.settings_dict["NAME"] = "/nonexistent-directory/operator.sqlite3"
        else:
            connection.settings_dict["PORT"] = "1"
        try:
            down = self.client.get("/readyz")
        finally:
            connection.close()
            connection.settings_dict.clear()
            connection.settings_dict.update(saved)
        self.assertEqual(down.status_code, 503)
        self.assertEqual(down.json(), {"status": "unavailable", "failed": ["database"]})
        self.assertEqual(self.client.get("/readyz").status_code, 200)

    def test_redis_down_is_503_naming_it(self) -> None:
        with override_settings(CACHES=UNREACHABLE_REDIS):
            response = self.client.get("/readyz")
        self.assertEqual(response.status_code, 503)
        self.assertEqual(response.json()["failed"], ["redis"])

    def test_unloadable_signing_key_is_503_naming_keys(self) -> None:
        with override_settings(OPERATOR_SIGNING_KEY="not a key"):
            response = self.client.get("/readyz")
        self.assertEqual(response.json()["failed"], ["keys"])

    def test_readiness_is_never_rate_limited_nor_cached(self) -> None:
        responses = [self.client.get("/readyz") for _ in range(50)]
        self.assertEqual({response.status_code for response in responses}, {200})
        self.assertEqual(responses[-1]["Cache-Control"], "no-store")
