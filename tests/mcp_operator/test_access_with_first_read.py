"""The person's access, read with a tool call's first read: every answer it decides stays as it was.

The authenticator no longer reads the person: a tool call sends that query as
a CTE of its first read on PostgreSQL, after the call was counted and took its
slot (mcp_operator/admission.py). These pin that nothing a reader of
docs/tools.md#order-of-checks can see changed: a person gone is still refused
401 before any other answer and leaves no record; a role gone is still
`forbidden` before the limits and counts nothing.
"""

from django.conf import settings
from django.test import override_settings

from audit.models import AuditAction, AuditEvent
from mcp_operator.limits import concurrency_slot
from operator_core.errors import ErrorCode
from organizations.models import Role
from organizations.services import record_role_change
from tests.audit.support import only_event
from tests.factories import make_membership, make_user, token_for
from tests.mcp_operator.base import OperatorEndpointTestCase
from tests.mcp_requests import envelope, post_mcp
from tests.support import pinned_clock


def with_limits(*, per_minute: int = 120, at_once: int = 4) -> override_settings:
    return override_settings(
        OPERATOR={**settings.OPERATOR, "tool_calls_per_minute": per_minute, "tool_concurrency": at_once}
    )


class PersonGoneTests(OperatorEndpointTestCase):
    def setUp(self) -> None:
        self.member = make_membership(role=Role.MEMBER)
        self.token = token_for(self.member)
        self.enterContext(pinned_clock())  # every call of a test in one window

    def deactivate(self) -> None:
        type(self.member.user).objects.filter(pk=self.member.user_id).update(is_active=False)

    def post(self, name: str, arguments: object, *, request_id: object = 1):
        message = envelope("tools/call", {"name": name, "arguments": arguments}, request_id=request_id)
        return post_mcp(self.client, message, token=self.token)

    def assert_refused_401(self, response) -> None:
        self.assertEqual(response.status_code, 401, response.content)
        self.assertIn('error="invalid_token"', response["WWW-Authenticate"])
        self.assertEqual(response.json()["error"], "invalid_token")

    @with_limits(per_minute=1)
    def test_a_tool_call_by_a_person_made_inactive_is_refused_401_recorded_nowhere_and_not_counted(self) -> None:
        self.deactivate()

        response = self.post("list_modules", {})
        type(self.member.user).objects.filter(pk=self.member.user_id).update(is_active=True)
        after = self.call_tool(self.member, "list_modules")

        self.assert_refused_401(response)
        self.assertIsNone(after.error_code)  # the refused call took none of the one call a minute
        self.assertEqual(AuditEvent.objects.filter(action=AuditAction.TOOL_CALL).count(), 1)

    def test_a_search_by_a_person_who_no_longer_exists_is_refused_401(self) -> None:
        type(self.member.user).objects.filter(pk=self.member.user_id).delete()

        self.assert_refused_401(self.post("search_knowledge", {"query": "helmets"}))

    def test_401_still_beats_invalid_arguments(self) -> None:
        self.deactivate()

        self.assert_refused_401(self.post("list_modules", {"limit": "many"}))

    def test_401_still_beats_an_unknown_tool(self) -> None:
        self.deactivate()

        self.assert_refused_401(self.post("no_such_tool", {}))

    def test_401_still_beats_arguments_that_are_not_an_object(self) -> None:
        self.deactivate()

        self.assert_refused_401(self.post("list_modules", ["a"]))

    def test_a_tool_call_notification_by_an_inactive_person_is_refused_401(self) -> None:
        self.deactivate()

        self.assert_refused_401(self.post("list_modules", {}, request_id=None))


class RoleGoneTests(OperatorEndpointTestCase):
    def setUp(self) -> None:
        self.member = make_membership(role=Role.MEMBER)
        self.enterContext(pinned_clock())

    def demote(self) -> None:
        record_role_change(membership=self.member, role=Role.LEARNER, changed_by=make_user())

    @with_limits(per_minute=1)
    def test_forbidden_beats_rate_limited_and_is_recorded_as_forbidden(self) -> None:
        self.call_tool(self.member, "list_sources")
        self.demote()

        result = self.call_tool(self.member, "list_sources")

        self.assertEqual(result.error_code, ErrorCode.FORBIDDEN)
        event = only_event(self, action=AuditAction.TOOL_CALL, outcome=ErrorCode.FORBIDDEN)
        self.assertEqual((event.tool, event.person_id), ("list_sources", self.member.user_id))

    @with_limits(at_once=1)
    def test_forbidden_beats_concurrency_limited(self) -> None:
        self.demote()
        slot = {"user_id": self.member.user_id, "organization_id": self.member.organization_id}

        with concurrency_slot(**slot, tool_name="search_knowledge"):
            result = self.call_tool(self.member, "search_knowledge", query="helmets")

        self.assertEqual(result.error_code, ErrorCode.FORBIDDEN)

    @with_limits(per_minute=2)
    def test_a_call_forbidden_by_its_read_gives_its_count_back(self) -> None:
        self.call_tool(self.member, "get_module", moduleId="00000000-0000-0000-0000-000000000000")
        self.demote()
        forbidden = self.call_tool(self.member, "get_module", moduleId="00000000-0000-0000-0000-000000000000")
        record_role_change(membership=self.member, role=Role.MEMBER, changed_by=make_user())

        allowed = self.call_tool(self.member, "get_module", moduleId="00000000-0000-0000-0000-000000000000")

        self.assertEqual(forbidden.error_code, ErrorCode.FORBIDDEN)
        self.assertEqual(allowed.error_code, ErrorCode.NOT_FOUND)  # the second of two a minute, not the third
