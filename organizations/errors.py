"""Why a person may not connect to an organization, as raised by `require_eligible_organization`.

Each is a `Forbidden`, so a caller that needs no distinction lets them through
as they are; the headless path turns the two choice errors into its own codes
(docs/headless.md). `eligible` is an attribute, not error data: it holds model
rows, which no renderer could serialize.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from operator_core.errors import Forbidden

if TYPE_CHECKING:
    from organizations.models import Organization


class NoEligibleOrganization(Forbidden):
    """The person is admin or member of no organization."""


class OrganizationChoiceError(Forbidden):
    """A choice among the person's eligible organizations is missing or wrong; `eligible` lists them."""

    def __init__(self, message: str, *, eligible: list[Organization]) -> None:
        super().__init__(message)
        self.eligible = eligible


class OrganizationChoiceRequired(OrganizationChoiceError):
    """Several eligible organizations and none chosen."""


class IneligibleOrganization(OrganizationChoiceError):
    """The chosen organization is not one of the person's eligible ones (a forged or stale id)."""
