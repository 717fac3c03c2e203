"""The operator endpoint's record of every tool call (docs/operations.md#audit-trail).

`record_operator_call` is the `on_call` observer of the endpoint's
`ToolRegistry`: after each call (answered, refused or failed) it appends one
event with the person, the token's organization and client, the tool, the
outcome and the duration. It costs one INSERT and no read: everything it needs
is on the principal the authenticator built for this request.
"""

from __future__ import annotations

from audit.services import record_tool_call
from mcp_operator.auth import OperatorPrincipal
from operator_core.mcp.tools import ToolCallReport


def record_operator_call(report: ToolCallReport) -> None:
    principal = report.principal
    if not isinstance(principal, OperatorPrincipal):
        raise TypeError("the operator endpoint's calls are made by an OperatorPrincipal")
    record_tool_call(
        person_id=principal.user_id,
        # the token's organization, also when the call was refused because the role is gone
        organization_id=principal.organization_id,
        client_id=principal.client_id,
        tool=report.tool,
        outcome=report.outcome,
        duration_ms=report.duration_ms,
    )
