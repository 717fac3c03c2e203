from datetime import UTC, datetime

from knowledge.models import ModuleStatus
from mcp_operator.tools.payloads import timestamp
from operator_core.errors import ErrorCode
from organizations.models import Role
from tests.factories import make_membership, make_module, make_organization, make_source
from tests.mcp_operator.base import OperatorEndpointTestCase, set_module_updated_at
from tests.mcp_operator.round_trips import statements

NOON = datetime(2026, 7, 28, 12, 0, tzinfo=UTC)


class ListModulesToolTests(OperatorEndpointTestCase):
    def setUp(self) -> None:
        self.member = make_membership(role=Role.MEMBER)
        self.organization = self.member.organization

    def _module(self, *, minutes: int, **fields: object):
        module = make_module(organization=self.organization, **fields)
        return set_module_updated_at(module, NOON.replace(minute=minutes))

    def test_lists_the_organizations_modules_newest_update_first(self) -> None:
        older = self._module(minutes=1, title="Older")
        newer = self._module(minutes=2, title="Newer", sections=[("One", "a"), ("Two", "b")])

        result = self.call_tool(self.member, "list_modules")

        self.assertIsNone(result.error_code)
        self.assertEqual(
            result.structured["organization"],
            {"id": str(self.organization.id), "slug": self.organization.slug, "name": self.organization.name},
        )
        self.assertEqual([m["id"] for m in result.structured["modules"]], [str(newer.id), str(older.id)])
        self.assertEqual(
            result.structured["modules"][0],
            {
                "id": str(newer.id),
                "title": "Newer",
                "summary": newer.summary,
                "status": "published",
                "sectionCount": 2,
                "sourceIds": [],
                "updatedAt": "2026-07-28T12:02:00.000Z",
            },
        )
        self.assertIsNone(result.structured["nextCursor"])

    def test_equal_update_times_are_ordered_by_id_descending(self) -> None:
        modules = [self._module(minutes=5) for _ in range(3)]

        result = self.call_tool(self.member, "list_modules")

        expected = sorted((str(m.id) for m in modules), key=lambda value: value.replace("-", ""), reverse=True)
        self.assertEqual([m["id"] for m in result.structured["modules"]], expected)

    def test_lists_the_ids_of_the_sources_a_module_was_built_from(self) -> None:
        source = make_source(organization=self.organization)
        module = self._module(minutes=1)
        module.sources.add(source)

        result = self.call_tool(self.member, "list_modules")

        self.assertEqual(result.structured["modules"][0]["sourceIds"], [str(source.id)])

    def test_query_matches_the_title_or_the_summary(self) -> None:
        by_title = self._module(minutes=1, title="Forklift safety")
        by_summary = self._module(minutes=2, title="Warehouse", summary="Covers FORKLIFT checks.")
        self._module(minutes=3, title="Payroll")

        result = self.call_tool(self.member, "list_modules", query="forklift")

        self.assertEqual([m["id"] for m in result.structured["modules"]], [str(by_summary.id), str(by_title.id)])

    def test_status_keeps_only_modules_in_that_status(self) -> None:
        draft = self._module(minutes=1, status=ModuleStatus.DRAFT)
        self._module(minutes=2, status=ModuleStatus.PUBLISHED)

        result = self.call_tool(self.member, "list_modules", status="draft")

        self.assertEqual([m["id"] for m in result.structured["modules"]], [str(draft.id)])

    def test_modules_of_another_organization_are_never_listed(self) -> None:
        make_module(organization=make_organization())

        result = self.call_tool(self.member, "list_modules")

        self.assertEqual(result.structured["modules"], [])

    def test_pages_follow_each_other_through_the_cursor(self) -> None:
        modules = [self._module(minutes=minute) for minute in range(5)]

        first = self.call_tool(self.member, "list_modules", limit=2)
        second = self.call_tool(self.member, "list_modules", limit=2, cursor=first.structured["nextCursor"])
        third = self.call_tool(self.member, "list_modules", limit=2, cursor=second.structured["nextCursor"])

        seen = [m["id"] for page in (first, second, third) for m in page.structured["modules"]]
        self.assertEqual(seen, [str(m.id) for m in reversed(modules)])
        self.assertIsNone(third.structured["nextCursor"])

    def test_a_page_ending_exactly_at_the_last_module_has_no_cursor(self) -> None:
        for minute in range(2):
            self._module(minutes=minute)

        result = self.call_tool(self.member, "list_modules", limit=2)

        self.assertIsNone(result.structured["nextCursor"])

    def test_a_tampered_cursor_is_invalid_arguments(self) -> None:
        for minute in range(3):
            self._module(minutes=minute)
        cursor = self.call_tool(self.member, "list_modules", limit=1).structured["nextCursor"]
        tampered = cursor[:-1] + ("A" if cursor[-1] != "A" else "B")

        result = self.call_tool(self.member, "list_modules", limit=1, cursor=tampered)

        self.assertEqual(result.error_code, ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(result.error["field"], "cursor")

    def test_a_cursor_reused_with_other_filters_is_invalid_arguments(self) -> None:
        for minute in range(3):
            self._module(minutes=minute)
        cursor = self.call_tool(self.member, "list_modules", limit=1).structured["nextCursor"]

        result = self.call_tool(self.member, "list_modules", limit=1, status="draft", cursor=cursor)

        self.assertEqual(result.error_code, ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(result.error["field"], "cursor")

    def test_a_cursor_of_another_organization_is_invalid_arguments(self) -> None:
        for minute in range(3):
            self._module(minutes=minute)
        cursor = self.call_tool(self.member, "list_modules", limit=1).structured["nextCursor"]
        elsewhere = make_membership(role=Role.ADMIN, user=self.member.user)

        result = self.call_tool(elsewhere, "list_modules", limit=1, cursor=cursor)

        self.assertEqual(result.error_code, ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(result.error["field"], "cursor")

    def test_a_cursor_may_change_the_page_size(self) -> None:
        modules = [self._module(minutes=minute) for minute in range(4)]
        cursor = self.call_tool(self.member, "list_modules", limit=1).structured["nextCursor"]

        result = self.call_tool(self.member, "list_modules", limit=10, cursor=cursor)

        self.assertEqual([m["id"] for m in result.structured["modules"]], [str(m.id) for m in modules[2::-1]])

    def test_limit_written_as_a_float_is_an_integer(self) -> None:
        for number in range(3):
            make_module(organization=self.organization, title=f"Module {number}")

        result = self.call_tool(self.member, "list_modules", limit=2.0)

        self.assertIsNone(result.error)
        self.assertEqual(len(result.structured["modules"]), 2)

    def test_nul_in_the_query_is_invalid_arguments(self) -> None:
        result = self.call_tool(self.member, "list_modules", query="safety\x00")

        self.assertEqual(result.error_code, ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(result.error["field"], "query")

    def test_limit_above_100_is_invalid_arguments(self) -> None:
        result = self.call_tool(self.member, "list_modules", limit=101)

        self.assertEqual(result.error_code, ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(result.error["field"], "limit")
        self.assertTrue(result.result["isError"])

    def test_limit_below_1_is_invalid_arguments(self) -> None:
        result = self.call_tool(self.member, "list_modules", limit=0)

        self.assertEqual(result.error["field"], "limit")

    def test_query_longer_than_200_characters_is_invalid_arguments(self) -> None:
        result = self.call_tool(self.member, "list_modules", query="x" * 201)

        self.assertEqual(result.error_code, ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(result.error["field"], "query")

    def test_query_of_200_characters_is_accepted(self) -> None:
        result = self.call_tool(self.member, "list_modules", query="x" * 200)

        self.assertIsNone(result.error_code)

    def test_unknown_status_is_invalid_arguments(self) -> None:
        result = self.call_tool(self.member, "list_modules", status="deleted")

        self.assertEqual(result.error["field"], "status")

    def test_an_argument_the_tool_does_not_have_is_invalid_arguments(self) -> None:
        result = self.call_tool(self.member, "list_modules", page=2)

        self.assertEqual(result.error_code, ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(result.error["field"], "page")

    def test_a_page_of_modules_costs_two_queries_and_the_audit_insert(self) -> None:
        for minute in range(5):
            self._module(minutes=minute).sources.add(make_source(organization=self.organization))

        # the person with their membership, the page of modules with section counts and sources,
        # the audit record (on PostgreSQL a CTE of the last read)
        with self.assertNumQueries(statements(reads=1)):
            result = self.call_tool(self.member, "list_modules", limit=3)

        self.assertEqual(len(result.structured["modules"]), 3)


class TimestampTests(OperatorEndpointTestCase):
    def test_timestamps_are_utc_with_a_z(self) -> None:
        self.assertEqual(timestamp(NOON), "2026-07-28T12:00:00.000Z")
