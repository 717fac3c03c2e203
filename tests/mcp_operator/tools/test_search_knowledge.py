import uuid

from operator_core.errors import ErrorCode
from organizations.models import Role
from tests.factories import make_membership, make_organization, make_source
from tests.mcp_operator.base import OperatorEndpointTestCase
from tests.mcp_operator.round_trips import statements


class SearchKnowledgeToolTests(OperatorEndpointTestCase):
    def setUp(self) -> None:
        self.member = make_membership(role=Role.MEMBER)
        self.organization = self.member.organization

    def test_finds_the_chunks_that_contain_the_words(self) -> None:
        source = make_source(organization=self.organization, title="Safety", text="Forklift operators wear helmets.")
        make_source(organization=self.organization, text="Payroll runs on Fridays.")

        result = self.call_tool(self.member, "search_knowledge", query="forklift helmets")

        self.assertIsNone(result.error_code)
        self.assertIs(result.structured["success"], True)
        self.assertNotIn("isError", result.result)
        self.assertEqual(result.structured["query"], "forklift helmets")
        self.assertEqual(result.structured["organization"]["id"], str(self.organization.id))
        (hit,) = result.structured["results"]
        self.assertEqual((hit["sourceId"], hit["sourceTitle"], hit["chunkIndex"]), (str(source.id), "Safety", 0))
        self.assertIn("Forklift", hit["snippet"])
        self.assertIsInstance(hit["score"], float)

    def test_the_same_query_returns_the_same_list(self) -> None:
        for _ in range(4):
            make_source(organization=self.organization, text="Helmets are required on site.")

        first = self.call_tool(self.member, "search_knowledge", query="helmets")
        second = self.call_tool(self.member, "search_knowledge", query="helmets")

        self.assertEqual(first.structured["results"], second.structured["results"])
        self.assertEqual(len(first.structured["results"]), 4)

    def test_source_ids_narrow_the_search(self) -> None:
        wanted = make_source(organization=self.organization, text="Helmets on site.")
        make_source(organization=self.organization, text="Helmets in the office.")

        result = self.call_tool(self.member, "search_knowledge", query="helmets", sourceIds=[str(wanted.id)])

        self.assertEqual([hit["sourceId"] for hit in result.structured["results"]], [str(wanted.id)])

    def test_source_ids_of_another_organization_match_nothing(self) -> None:
        foreign = make_source(organization=make_organization(), text="Helmets everywhere.")

        result = self.call_tool(self.member, "search_knowledge", query="helmets", sourceIds=[str(foreign.id)])

        self.assertIs(result.structured["success"], True)
        self.assertEqual(result.structured["results"], [])

    def test_chunks_of_another_organization_are_never_found(self) -> None:
        make_source(organization=make_organization(), text="Helmets everywhere.")

        result = self.call_tool(self.member, "search_knowledge", query="helmets")

        self.assertEqual(result.structured["results"], [])

    def test_limit_caps_the_results(self) -> None:
        for _ in range(3):
            make_source(organization=self.organization, text="Helmets are required.")

        result = self.call_tool(self.member, "search_knowledge", query="helmets", limit=2)

        self.assertEqual(len(result.structured["results"]), 2)

    def test_empty_query_fails_with_success_false(self) -> None:
        result = self.call_tool(self.member, "search_knowledge", query="")

        self.assertIs(result.structured["success"], False)
        self.assertEqual(result.error_code, ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(result.error["field"], "query")
        self.assertNotIn("isError", result.result)

    def test_blank_query_is_invalid_arguments(self) -> None:
        result = self.call_tool(self.member, "search_knowledge", query="   ")

        self.assertEqual(result.error_code, ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(result.error["field"], "query")

    def test_nul_in_the_query_is_invalid_arguments(self) -> None:
        make_source(organization=self.organization, text="Helmets on site.")

        result = self.call_tool(self.member, "search_knowledge", query="helmets\x00")

        self.assertIs(result.structured["success"], False)
        self.assertEqual(result.error_code, ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(result.error["field"], "query")

    def test_missing_query_is_invalid_arguments(self) -> None:
        result = self.call_tool(self.member, "search_knowledge")

        self.assertEqual(result.error["field"], "query")

    def test_query_longer_than_500_characters_is_invalid_arguments(self) -> None:
        result = self.call_tool(self.member, "search_knowledge", query="a" * 501)

        self.assertEqual(result.error_code, ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(result.error["field"], "query")

    def test_query_of_500_characters_is_accepted(self) -> None:
        result = self.call_tool(self.member, "search_knowledge", query="helmet " * 71 + "abc")

        self.assertIs(result.structured["success"], True)

    def test_more_than_50_source_ids_is_invalid_arguments(self) -> None:
        source_ids = [str(uuid.uuid4()) for _ in range(51)]

        result = self.call_tool(self.member, "search_knowledge", query="helmets", sourceIds=source_ids)

        self.assertEqual(result.error_code, ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(result.error["field"], "sourceIds")

    def test_a_source_id_that_is_not_a_uuid_is_invalid_arguments(self) -> None:
        result = self.call_tool(self.member, "search_knowledge", query="helmets", sourceIds=["handbook"])

        self.assertEqual(result.error["field"], "sourceIds")

    def test_limit_above_50_is_invalid_arguments(self) -> None:
        result = self.call_tool(self.member, "search_knowledge", query="helmets", limit=51)

        self.assertEqual(result.error["field"], "limit")

    def test_a_search_costs_two_queries_and_the_audit_insert(self) -> None:
        for _ in range(5):
            make_source(organization=self.organization, text="Helmets are required on site.")

        # the person with their membership, one search,
        # the audit record (on PostgreSQL a CTE of the last read)
        with self.assertNumQueries(statements(reads=1)):
            result = self.call_tool(self.member, "search_knowledge", query="helmets", limit=10)

        self.assertEqual(len(result.structured["results"]), 5)
