"""A tool call's network round trips on PostgreSQL + Redis, pinned per tool (docs/development/performance.md).

Before the answer: the Redis command that counts the call and takes its lease,
then the SQL statements: on PostgreSQL the tool's first read carries the
person's access and, when it settles the call, the audit record, as CTEs
(one statement for every tool: the record is written only if the call succeeds);
SQLite sends both apart. After the answer:
giving the lease back. A change that adds a trip fails here.
"""

import uuid

from django.test import override_settings

from organizations.models import Role
from tests.factories import make_membership, make_module, make_source
from tests.mcp_operator.base import OperatorEndpointTestCase
from tests.mcp_operator.round_trips import counted_round_trips, statements
from tests.support import require_redis_url


class ToolCallRoundTripTests(OperatorEndpointTestCase):
    def setUp(self) -> None:
        redis_url = require_redis_url()
        redis_cache = {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": redis_url}
        self.enterContext(override_settings(CACHES={"default": {**redis_cache, "KEY_PREFIX": uuid.uuid4().hex}}))
        self.member = make_membership(role=Role.MEMBER)
        organization = self.member.organization
        self.source = make_source(organization=organization, text="Helmets are required on site.")
        self.module = make_module(organization=organization, sections=[("a", "a"), ("b", "b")])
        self.module.sources.add(self.source)

    def assert_round_trips(
        self, tool: str, *, sql: int, redis_before: list[str], after: list[str], **arguments: object
    ) -> None:
        self.call_tool(self.member, tool, **arguments)  # loads the scripts into this Redis, prepares nothing twice
        with counted_round_trips() as trips:
            result = self.call_tool(self.member, tool, **arguments)

        self.assertIsNone(result.error_code)
        self.assertEqual(trips.sql_before_answer, sql, trips.before_answer)
        self.assertEqual(trips.redis_before_answer, redis_before, trips.before_answer)
        self.assertEqual(trips.after_answer, after)

    def test_list_modules(self) -> None:
        self.assert_round_trips("list_modules", sql=statements(reads=1), redis_before=["EVALSHA"], after=["redis ZREM"])

    def test_list_sources(self) -> None:
        self.assert_round_trips("list_sources", sql=statements(reads=1), redis_before=["EVALSHA"], after=["redis ZREM"])

    def test_get_module(self) -> None:
        self.assert_round_trips(
            "get_module",
            sql=statements(reads=1),
            redis_before=["EVALSHA"],
            after=["redis ZREM"],
            moduleId=str(self.module.id),
        )

    def test_fetch_knowledge(self) -> None:
        self.assert_round_trips(
            "fetch_knowledge",
            sql=statements(reads=1),
            redis_before=["EVALSHA"],
            after=["redis ZREM"],
            sourceId=str(self.source.id),
        )

    def test_search_knowledge(self) -> None:
        self.assert_round_trips(
            "search_knowledge", sql=statements(reads=1), redis_before=["EVALSHA"], after=["redis ZREM"], query="helmets"
        )
