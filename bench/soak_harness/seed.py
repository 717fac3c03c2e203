"""The soak's data, written through the services into the run's own database before any server starts."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model

from bench.soak_harness.clients import Person
from knowledge.models import SourceKind
from knowledge.services import create_module, create_source
from oauth.tokens import issue_access_token
from operator_core.scopes import SCOPE_OPERATOR_READ
from organizations.models import Role
from organizations.services import add_membership, create_organization

PASSWORD = "soak-password"
TEXT = "\n\n".join(
    " ".join(f"{word} inspection rule {p}-{w}." for w, word in enumerate(["forklift", "helmet", "ladder"] * 20))
    for p in range(6)
)


@dataclass
class Seeded:
    organization_id: str
    module_id: str
    tool_people: list[tuple[int, str]]  # (user id, access token)
    probe_token: str
    signing_in: list[Person]
    refreshing: list[Person]
    headless: list[str]


def seed(*, tool_people: int, signing_in: int, refreshing: int, headless: int, token_seconds: int) -> Seeded:
    organization = create_organization(slug="soak", name="Soak")
    source = create_source(organization=organization, title="Handbook", kind=SourceKind.FILE, origin="h.md", text=TEXT)
    module = create_module(
        organization=organization,
        title="Forklift safety",
        status="published",
        sections=[("Intro", "Welcome.")],
        sources=[source],
    )
    users = get_user_model().objects

    def member(email: str, password: str | None = None) -> int:
        user = users.create_user(username=email, email=email, password=password)
        add_membership(user=user, organization=organization, role=Role.MEMBER)
        return user.pk

    def token(user_id: int) -> str:
        return issue_access_token(
            user_id=user_id,
            organization_id=str(organization.pk),
            client_id="soak",
            scopes=[SCOPE_OPERATOR_READ],
            expires_in=token_seconds,
        )

    tools = [member(f"tools-{n}@soak.test") for n in range(tool_people)]
    people = [
        Person(f"{group}-{n}@soak.test", PASSWORD, str(organization.pk))
        for group, count in (("sign-in", signing_in), ("refresh", refreshing))
        for n in range(count)
    ]
    for person in people:
        member(person.email, PASSWORD)
    emails = [f"headless-{n}@soak.test" for n in range(headless)]
    for email in emails:
        member(email)
    return Seeded(
        organization_id=str(organization.pk),
        module_id=str(module.id),
        tool_people=[(user_id, token(user_id)) for user_id in tools],
        probe_token=token(member("probe@soak.test")),
        signing_in=people[:signing_in],
        refreshing=people[signing_in:],
        headless=emails,
    )
