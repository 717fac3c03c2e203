import uuid

from knowledge.models import SourceKind
from knowledge.services import register_source
from operator_core.errors import ErrorCode
from organizations.models import Role
from tests.factories import make_membership, make_organization, make_source
from tests.mcp_operator.base import OperatorEndpointTestCase
from tests.mcp_operator.round_trips import statements


def long_text(paragraphs: int) -> str:
    """Paragraphs of about 700 characters: each becomes one chunk of its own."""
    return "\n\n".join(
        f"Part {number}. " + "Helmets are required on site at all times. " * 16 for number in range(paragraphs)
    )


class FetchKnowledgeToolTests(OperatorEndpointTestCase):
    def setUp(self) -> None:
        self.member = make_membership(role=Role.MEMBER)
        self.organization = self.member.organization
        self.source = make_source(organization=self.organization, title="Rules", text=long_text(5))

    def test_returns_the_first_chunks_and_where_to_continue(self) -> None:
        result = self.call_tool(self.member, "fetch_knowledge", sourceId=str(self.source.id), maxChunks=2)

        self.assertIs(result.structured["success"], True)
        self.assertEqual(result.structured["source"]["id"], str(self.source.id))
        self.assertEqual(result.structured["source"]["title"], "Rules")
        self.assertEqual(result.structured["source"]["chunkCount"], 5)
        self.assertEqual([chunk["index"] for chunk in result.structured["chunks"]], [0, 1])
        self.assertTrue(result.structured["chunks"][1]["text"].startswith("Part 1."))
        self.assertEqual(result.structured["nextChunk"], 2)

    def test_defaults_to_ten_chunks_from_the_start(self) -> None:
        result = self.call_tool(self.member, "fetch_knowledge", sourceId=str(self.source.id))

        self.assertEqual([chunk["index"] for chunk in result.structured["chunks"]], [0, 1, 2, 3, 4])
        self.assertIsNone(result.structured["nextChunk"])

    def test_start_chunk_continues_until_next_chunk_is_null(self) -> None:
        result = self.call_tool(self.member, "fetch_knowledge", sourceId=str(self.source.id), startChunk=3, maxChunks=2)

        self.assertEqual([chunk["index"] for chunk in result.structured["chunks"]], [3, 4])
        self.assertIsNone(result.structured["nextChunk"])

    def test_start_chunk_written_as_a_float_gives_an_integer_next_chunk(self) -> None:
        result = self.call_tool(
            self.member, "fetch_knowledge", sourceId=str(self.source.id), startChunk=1.0, maxChunks=2.0
        )

        self.assertEqual([chunk["index"] for chunk in result.structured["chunks"]], [1, 2])
        self.assertIsInstance(result.structured["nextChunk"], int)
        self.assertIn('"nextChunk":3}', result.text)

    def test_start_chunk_past_the_last_chunk_is_invalid_arguments(self) -> None:
        result = self.call_tool(self.member, "fetch_knowledge", sourceId=str(self.source.id), startChunk=5)

        self.assertIs(result.structured["success"], False)
        self.assertEqual(result.error_code, ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(result.error["field"], "startChunk")

    def test_source_of_another_organization_answers_not_found(self) -> None:
        foreign = make_source(organization=make_organization())

        result = self.call_tool(self.member, "fetch_knowledge", sourceId=str(foreign.id))

        self.assertIs(result.structured["success"], False)
        self.assertEqual(result.error_code, ErrorCode.NOT_FOUND)
        self.assertNotIn("isError", result.result)

    def test_unknown_source_answers_the_same_not_found(self) -> None:
        foreign = self.call_tool(
            self.member, "fetch_knowledge", sourceId=str(make_source(organization=make_organization()).id)
        )

        unknown = self.call_tool(self.member, "fetch_knowledge", sourceId=str(uuid.uuid4()))

        self.assertEqual(unknown.structured, foreign.structured)

    def test_source_not_yet_processed_answers_not_found(self) -> None:
        pending = register_source(organization=self.organization, title="Later", kind=SourceKind.TEXT, text="Soon.")

        result = self.call_tool(self.member, "fetch_knowledge", sourceId=str(pending.id))

        self.assertEqual(result.error_code, ErrorCode.NOT_FOUND)

    def test_max_chunks_above_50_is_invalid_arguments(self) -> None:
        result = self.call_tool(self.member, "fetch_knowledge", sourceId=str(self.source.id), maxChunks=51)

        self.assertEqual(result.error_code, ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(result.error["field"], "maxChunks")

    def test_negative_start_chunk_is_invalid_arguments(self) -> None:
        result = self.call_tool(self.member, "fetch_knowledge", sourceId=str(self.source.id), startChunk=-1)

        self.assertEqual(result.error["field"], "startChunk")

    def test_missing_source_id_is_invalid_arguments(self) -> None:
        result = self.call_tool(self.member, "fetch_knowledge")

        self.assertEqual(result.error["field"], "sourceId")

    def test_fetching_chunks_costs_one_read_with_the_access_and_the_audit_insert(self) -> None:
        # the source with its chunk count and chunks; the person's access and the audit record
        # (on PostgreSQL CTEs of that read, the record written as its rows make the call succeed)
        with self.assertNumQueries(statements(reads=1)):
            result = self.call_tool(self.member, "fetch_knowledge", sourceId=str(self.source.id), maxChunks=50)

        self.assertEqual(len(result.structured["chunks"]), 5)
