import uuid

from operator_core.errors import ErrorCode
from organizations.models import Role
from tests.factories import make_membership, make_module, make_source
from tests.mcp_operator.base import OperatorEndpointTestCase
from tests.mcp_operator.round_trips import statements


class GetModuleToolTests(OperatorEndpointTestCase):
    def setUp(self) -> None:
        self.member = make_membership(role=Role.MEMBER)
        self.organization = self.member.organization

    def test_returns_the_module_with_its_sections_in_order_and_its_sources(self) -> None:
        module = make_module(organization=self.organization, sections=[("First", "# One"), ("Second", "Two")])
        source = make_source(organization=self.organization, title="Handbook")
        module.sources.add(source)

        result = self.call_tool(self.member, "get_module", moduleId=str(module.id))

        self.assertIsNone(result.error_code)
        detail = result.structured["module"]
        self.assertEqual(detail["id"], str(module.id))
        self.assertEqual(detail["title"], module.title)
        self.assertEqual(
            detail["sections"],
            [{"position": 0, "title": "First", "body": "# One"}, {"position": 1, "title": "Second", "body": "Two"}],
        )
        self.assertEqual(detail["sources"], [{"id": str(source.id), "title": "Handbook"}])
        self.assertTrue(detail["createdAt"].endswith("Z"))
        self.assertEqual(result.structured["organization"]["slug"], self.organization.slug)

    def test_accepts_an_id_in_upper_case(self) -> None:
        module = make_module(organization=self.organization)

        result = self.call_tool(self.member, "get_module", moduleId=str(module.id).upper())

        self.assertEqual(result.structured["module"]["id"], str(module.id))

    def test_module_of_another_organization_answers_not_found(self) -> None:
        foreign_module = make_module()  # in a fresh organization

        result = self.call_tool(self.member, "get_module", moduleId=str(foreign_module.id))

        self.assertEqual(result.error_code, ErrorCode.NOT_FOUND)
        self.assertTrue(result.result["isError"])

    def test_unknown_module_answers_the_same_not_found(self) -> None:
        foreign = self.call_tool(self.member, "get_module", moduleId=str(make_module().id))

        unknown = self.call_tool(self.member, "get_module", moduleId=str(uuid.uuid4()))

        self.assertEqual(unknown.structured, foreign.structured)

    def test_malformed_module_id_is_invalid_arguments(self) -> None:
        result = self.call_tool(self.member, "get_module", moduleId="42")

        self.assertEqual(result.error_code, ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(result.error["field"], "moduleId")

    def test_missing_module_id_is_invalid_arguments(self) -> None:
        result = self.call_tool(self.member, "get_module")

        self.assertEqual(result.error_code, ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(result.error["field"], "moduleId")

    def test_a_module_costs_one_read_with_the_access_and_the_audit_insert(self) -> None:
        module = make_module(organization=self.organization, sections=[("a", "a"), ("b", "b"), ("c", "c")])
        for _ in range(3):
            module.sources.add(make_source(organization=self.organization))

        # the module with its sections and its sources; the person's access and the audit
        # record (on PostgreSQL CTEs of that read, the record written as the module was found)
        with self.assertNumQueries(statements(reads=1)):
            result = self.call_tool(self.member, "get_module", moduleId=str(module.id))

        self.assertEqual(len(result.structured["module"]["sources"]), 3)
