"""Typed factories for tests: keyword-only overrides, deterministic unique values.

Each factory builds what it needs (a membership builds its own user and
organization) and goes through a service wherever one keeps an invariant.
"""

import functools
import itertools
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from agent_auth.models import Claim, IdempotencyRecord, IdempotencyState
from knowledge.models import Module, ModuleSection, ModuleStatus, Source, SourceKind
from oauth.tokens import issue_access_token
from operator_core.scopes import SCOPE_OPERATOR_READ
from organizations.models import Membership, Organization, Role

_counter = itertools.count(1)
PASSWORD = "correct-horse-battery-staple"
TEST_CLIENT_ID = "test-client"


def _next() -> int:
    return next(_counter)


@functools.cache
def _password_hash(password: str, hashers: tuple[str, ...]) -> str:
    # PBKDF2 is deliberately slow; hashing each distinct password once keeps the
    # suite fast while sign-in still checks a real hash. Keyed by the configured
    # hashers: a hash made under a test's override is not valid outside it.
    return make_password(password)


def make_user(*, email: str | None = None, password: str = PASSWORD, **fields: object) -> AbstractBaseUser:
    number = _next()
    email = email or f"person{number}@example.test"
    user_model = get_user_model()
    user = user_model(username=email, email=user_model.objects.normalize_email(email), **fields)
    user.password = _password_hash(password, tuple(settings.PASSWORD_HASHERS))
    user.save()
    return user


def make_organization(*, slug: str | None = None, name: str | None = None) -> Organization:
    number = _next()
    slug = slug or f"org-{number}"
    return Organization.objects.create(slug=slug, name=name or f"Organization {number}")


def make_membership(
    *,
    role: Role = Role.MEMBER,
    user: AbstractBaseUser | None = None,
    organization: Organization | None = None,
) -> Membership:
    return Membership.objects.create(
        user=user or make_user(),
        organization=organization or make_organization(),
        role=role,
    )


def token_for(
    membership: Membership,
    *,
    scopes: tuple[str, ...] = (SCOPE_OPERATOR_READ,),
    expires_in: int = 3600,
    client_id: str = TEST_CLIENT_ID,
) -> str:
    """An access token bound to the membership's person and organization, as the token endpoint mints it."""
    return issue_access_token(
        user_id=membership.user.pk,
        organization_id=str(membership.organization_id),
        client_id=client_id,
        scopes=scopes,
        expires_in=expires_in,
    )


def make_module(
    *,
    organization: Organization | None = None,
    title: str | None = None,
    summary: str = "A module used in tests.",
    status: ModuleStatus = ModuleStatus.PUBLISHED,
    sections: list[tuple[str, str]] | None = None,
) -> Module:
    number = _next()
    module = Module.objects.create(
        organization=organization or make_organization(),
        title=title or f"Module {number}",
        summary=summary,
        status=status,
    )
    for position, (section_title, body) in enumerate(sections or [("Introduction", "Welcome.")]):
        ModuleSection.objects.create(module=module, position=position, title=section_title, body=body)
    return module


def make_source(
    *,
    organization: Organization | None = None,
    title: str | None = None,
    text: str | None = None,
    kind: SourceKind = SourceKind.TEXT,
    origin: str | None = None,
) -> Source:
    """A processed source (through the create_source service, so its chunks and index exist).

    Each default text is different, and a file has an origin of its own unless one is given.
    """
    from knowledge.services import create_source

    number = _next()
    if origin is None:
        origin = f"source-{number}.txt" if kind == SourceKind.FILE else ""
    return create_source(
        organization=organization or make_organization(),
        title=title or f"Source {number}",
        kind=kind,
        origin=origin,
        text=text if text is not None else f"Paragraph {number} about onboarding checklists and safety training.",
    )


def make_idempotency_record(
    *,
    endpoint: str = "start",
    key: str | None = None,
    fingerprint: str = "f" * 64,
    state: IdempotencyState = IdempotencyState.IN_FLIGHT,
    response_status: int | None = None,
    claim: Claim | None = None,
    created_at: datetime | None = None,
    expires_at: datetime | None = None,
) -> IdempotencyRecord:
    """An Idempotency-Key record, kept 24 hours from `created_at` (now) unless `expires_at` says otherwise."""
    number = _next()
    created_at = created_at or timezone.now()
    return IdempotencyRecord.objects.create(
        endpoint=endpoint,
        key=key or f"key-{number}",
        fingerprint=fingerprint,
        state=state,
        response_status=response_status,
        claim=claim,
        created_at=created_at,
        expires_at=expires_at or created_at + timedelta(hours=24),
    )
