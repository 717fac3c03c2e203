from datetime import UTC, datetime

from knowledge.models import SourceKind
from knowledge.services import register_source
from operator_core.errors import ErrorCode
from organizations.models import Role
from tests.factories import make_membership, make_module, make_organization, make_source
from tests.mcp_operator.base import OperatorEndpointTestCase, set_source_processed_at
from tests.mcp_operator.round_trips import statements

NOON = datetime(2026, 7, 28, 12, 0, tzinfo=UTC)


class ListSourcesToolTests(OperatorEndpointTestCase):
    def setUp(self) -> None:
        self.member = make_membership(role=Role.MEMBER)
        self.organization = self.member.organization

    def _source(self, *, minutes: int, **fields: object):
        source = make_source(organization=self.organization, **fields)
        return set_source_processed_at(source, NOON.replace(minute=minutes))

    def test_lists_processed_sources_newest_first_with_their_sizes(self) -> None:
        older = self._source(minutes=1)
        newer = self._source(minutes=2, title="Guide", kind=SourceKind.FILE, text="Short text.")

        result = self.call_tool(self.member, "list_sources")

        self.assertIsNone(result.error_code)
        self.assertEqual([s["id"] for s in result.structured["sources"]], [str(newer.id), str(older.id)])
        self.assertEqual(
            result.structured["sources"][0],
            {
                "id": str(newer.id),
                "title": "Guide",
                "kind": "file",
                "origin": newer.origin,
                "processedAt": "2026-07-28T12:02:00.000Z",
                "chunkCount": 1,
                "characters": len("Short text."),
            },
        )
        self.assertIsNone(result.structured["nextCursor"])

    def test_sources_not_yet_processed_are_not_listed(self) -> None:
        register_source(organization=self.organization, title="Pending", kind=SourceKind.TEXT, text="Later.")

        result = self.call_tool(self.member, "list_sources")

        self.assertEqual(result.structured["sources"], [])

    def test_sources_of_another_organization_are_never_listed(self) -> None:
        make_source(organization=make_organization())

        result = self.call_tool(self.member, "list_sources")

        self.assertEqual(result.structured["sources"], [])

    def test_kind_keeps_only_sources_of_that_kind(self) -> None:
        file_source = self._source(minutes=1, kind=SourceKind.FILE)
        self._source(minutes=2, kind=SourceKind.TEXT)

        result = self.call_tool(self.member, "list_sources", kind="file")

        self.assertEqual([s["id"] for s in result.structured["sources"]], [str(file_source.id)])

    def test_query_matches_the_title(self) -> None:
        match = self._source(minutes=1, title="Fire drill procedure")
        self._source(minutes=2, title="Payroll")

        result = self.call_tool(self.member, "list_sources", query="DRILL")

        self.assertEqual([s["id"] for s in result.structured["sources"]], [str(match.id)])

    def test_pages_follow_each_other_through_the_cursor(self) -> None:
        sources = [self._source(minutes=minute) for minute in range(5)]

        first = self.call_tool(self.member, "list_sources", limit=3)
        second = self.call_tool(self.member, "list_sources", limit=3, cursor=first.structured["nextCursor"])

        seen = [s["id"] for page in (first, second) for s in page.structured["sources"]]
        self.assertEqual(seen, [str(s.id) for s in reversed(sources)])
        self.assertIsNone(second.structured["nextCursor"])

    def test_a_tampered_cursor_is_invalid_arguments(self) -> None:
        for minute in range(3):
            self._source(minutes=minute)
        cursor = self.call_tool(self.member, "list_sources", limit=1).structured["nextCursor"]

        result = self.call_tool(self.member, "list_sources", limit=1, cursor="x" + cursor)

        self.assertEqual(result.error_code, ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(result.error["field"], "cursor")

    def test_a_cursor_reused_with_other_filters_is_invalid_arguments(self) -> None:
        for minute in range(3):
            self._source(minutes=minute)
        cursor = self.call_tool(self.member, "list_sources", limit=1).structured["nextCursor"]

        result = self.call_tool(self.member, "list_sources", limit=1, query="Source", cursor=cursor)

        self.assertEqual(result.error_code, ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(result.error["field"], "cursor")

    def test_a_cursor_of_list_modules_is_invalid_arguments(self) -> None:
        for _ in range(2):
            make_module(organization=self.organization)
        cursor = self.call_tool(self.member, "list_modules", limit=1).structured["nextCursor"]

        result = self.call_tool(self.member, "list_sources", limit=1, cursor=cursor)

        self.assertEqual(result.error["field"], "cursor")

    def test_unknown_kind_is_invalid_arguments(self) -> None:
        result = self.call_tool(self.member, "list_sources", kind="video")

        self.assertEqual(result.error_code, ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(result.error["field"], "kind")

    def test_limit_written_as_a_float_is_an_integer(self) -> None:
        for minutes in range(3):
            self._source(minutes=minutes)

        result = self.call_tool(self.member, "list_sources", limit=2.0)

        self.assertIsNone(result.error)
        self.assertEqual(len(result.structured["sources"]), 2)

    def test_nul_in_the_query_is_invalid_arguments(self) -> None:
        result = self.call_tool(self.member, "list_sources", query="\x00")

        self.assertEqual(result.error_code, ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(result.error["field"], "query")

    def test_limit_of_a_string_is_invalid_arguments(self) -> None:
        result = self.call_tool(self.member, "list_sources", limit="10")

        self.assertEqual(result.error["field"], "limit")

    def test_a_page_of_sources_costs_two_queries_and_the_audit_insert(self) -> None:
        for minute in range(5):
            self._source(minutes=minute)

        # the person with their membership, sources with chunk counts and lengths,
        # the audit record (on PostgreSQL a CTE of the last read)
        with self.assertNumQueries(statements(reads=1)):
            result = self.call_tool(self.member, "list_sources", limit=4)

        self.assertEqual(len(result.structured["sources"]), 4)
