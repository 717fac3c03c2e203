"""Every tool call on the operator endpoint leaves exactly one audit record (docs/operations.md#audit-trail)."""

from audit.models import OUTCOME_OK, AuditAction, AuditEvent
from operator_core.errors import ErrorCode
from organizations.models import Role
from organizations.services import remove_membership
from tests.audit.support import assert_holds_no_secret, only_event
from tests.factories import TEST_CLIENT_ID, make_membership, make_module, make_source, token_for
from tests.mcp_operator.base import OperatorEndpointTestCase
from tests.mcp_operator.round_trips import statements
from tests.mcp_requests import envelope, post_mcp


class ToolCallRecordTests(OperatorEndpointTestCase):
    def setUp(self) -> None:
        self.member = make_membership(role=Role.MEMBER)
        self.module = make_module(organization=self.member.organization)
        self.token = token_for(self.member)

    def test_a_tool_call_writes_one_record_of_who_called_what_through_which_client(self) -> None:
        response = self.post("get_module", moduleId=str(self.module.id))

        event = only_event(self, action=AuditAction.TOOL_CALL)
        self.assertEqual(event.outcome, OUTCOME_OK)
        self.assertEqual(event.person_id, self.member.user_id)
        self.assertEqual(event.organization_id, self.member.organization_id)
        self.assertEqual(event.client_id, TEST_CLIENT_ID)
        self.assertEqual(event.tool, "get_module")
        self.assertGreater(event.duration_ms, 0)
        self.assertEqual(event.request_id, response["X-Request-Id"])
        self.assertIsNone(event.actor_id)
        self.assertEqual(event.detail, {})
        assert_holds_no_secret(self, self.token)

    def test_a_failing_call_records_its_tool_error_code(self) -> None:
        self.call_tool_with_token(self.token, "get_module", moduleId="00000000-0000-0000-0000-000000000000")

        self.assertEqual(only_event(self, action=AuditAction.TOOL_CALL).outcome, ErrorCode.NOT_FOUND)

    def test_a_module_of_another_organization_is_recorded_not_found_and_never_ok(self) -> None:
        # On PostgreSQL the record rides the call's one read, written only when it found the module.
        foreign = make_module()

        result = self.call_tool_with_token(self.token, "get_module", moduleId=str(foreign.id))

        self.assertEqual(result.error_code, ErrorCode.NOT_FOUND)
        self.assertEqual(only_event(self, action=AuditAction.TOOL_CALL).outcome, ErrorCode.NOT_FOUND)

    def test_a_fetch_past_the_last_chunk_is_recorded_invalid_arguments_and_never_ok(self) -> None:
        source = make_source(organization=self.member.organization, text="One short paragraph.")
        chunks = source.chunks.count()

        result = self.call_tool_with_token(self.token, "fetch_knowledge", sourceId=str(source.id), startChunk=chunks)

        self.assertEqual(result.error_code, ErrorCode.INVALID_ARGUMENTS)
        self.assertEqual(only_event(self, action=AuditAction.TOOL_CALL).outcome, ErrorCode.INVALID_ARGUMENTS)

    def test_a_fetch_from_the_last_chunk_or_of_a_source_without_chunks_is_recorded_ok_once(self) -> None:
        source = make_source(organization=self.member.organization, text="One short paragraph.")
        empty = make_source(organization=self.member.organization, text="Nothing to cut.")
        empty.chunks.all().delete()

        for fetched, start in ((source, source.chunks.count() - 1), (empty, 0)):
            with self.subTest(chunks=fetched.chunks.count()):
                AuditEvent.objects.all().delete()

                # on PostgreSQL the record rides the read: one statement
                with self.assertNumQueries(statements(reads=1)):
                    result = self.call_tool_with_token(
                        self.token, "fetch_knowledge", sourceId=str(fetched.id), startChunk=start
                    )

                self.assertIsNone(result.error_code)
                self.assertEqual(only_event(self, action=AuditAction.TOOL_CALL).outcome, OUTCOME_OK)

    def test_a_refused_call_records_forbidden_in_the_tokens_organization(self) -> None:
        remove_membership(membership=self.member)

        self.call_tool_with_token(self.token, "list_modules")

        event = only_event(self, action=AuditAction.TOOL_CALL)
        self.assertEqual(event.outcome, ErrorCode.FORBIDDEN)
        self.assertEqual(event.organization_id, self.member.organization_id)

    def test_an_unknown_tool_is_no_tool_call_and_leaves_no_record(self) -> None:
        response = self.post("no_such_tool")

        self.assertIn("error", response.json())

        self.assertFalse(AuditEvent.objects.filter(action=AuditAction.TOOL_CALL).exists())

    def post(self, name: str, **arguments: object):
        return post_mcp(self.client, envelope("tools/call", {"name": name, "arguments": arguments}), token=self.token)
