"""Typed factories for tests: keyword-only overrides, deterministic unique values.

Each factory builds what it needs (a membership builds its own user and
organization) and goes through a service wherever one keeps an invariant.
"""

import functools
import itertools

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import AbstractBaseUser

from organizations.models import Membership, Module, ModuleSection, ModuleStatus, Organization, Role, Source

_counter = itertools.count(1)
PASSWORD = "correct-horse-battery-staple"


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
    text: str = "A processed source used in tests.",
    kind: str = "text",
    origin: str = "",
) -> Source:
    """A processed source (through the create_source service, so its chunks and index exist)."""
    from organizations.services import create_source

    number = _next()
    return create_source(
        organization=organization or make_organization(),
        title=title or f"Source {number}",
        kind=kind,
        origin=origin,
        text=text,
    )
