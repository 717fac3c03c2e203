"""Organizations, people's memberships and roles (docs/development/decisions.md#domain-model).

Fields, constraints and indexes only: reads live in selectors.py, writes in
services.py. The knowledge base of an organization is the knowledge app's.
"""

import uuid
import zoneinfo

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models


class Role(models.TextChoices):
    ADMIN = "admin", "Admin"
    MEMBER = "member", "Member"
    LEARNER = "learner", "Learner"
    REQUESTER = "requester", "Requester (request to join pending)"


# Roles that may connect an MCP client (docs/data-model.md#people-and-roles).
OPERATOR_ROLES = (Role.ADMIN, Role.MEMBER)


def validate_time_zone(name: str) -> None:
    """Refuse a name that is not an IANA time zone this machine knows."""
    if name not in zoneinfo.available_timezones():
        raise ValidationError(f"{name!r} is not an IANA time zone name, such as Europe/Paris.")


class Organization(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    # The days and times of the organization's pages (docs/managing-connections.md#usage-of-an-organization).
    time_zone = models.CharField(max_length=64, default="UTC", db_default="UTC", validators=[validate_time_zone])

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "organization"], name="one_membership_per_user_and_organization"),
            models.CheckConstraint(condition=models.Q(role__in=Role.values), name="membership_role_is_known"),
        ]
        indexes = [models.Index(fields=["organization", "role"], name="membership_org_role_idx")]

    def __str__(self) -> str:
        return f"{self.user} — {self.role} of {self.organization}"
