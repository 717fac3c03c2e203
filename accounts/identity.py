"""Every save of an account keeps its email normal and its username equal to it.

Connected to the user model's `pre_save` and `post_save` in `AccountsConfig.ready`,
so the admin's forms, `createsuperuser`, `create_user`, the demo seed and the
tests' factories all store the same thing: the normalised email, and the
username in step with it. An account with no email keeps its username (an old
superuser's; docs/development/decisions.md#one-identity-the-email).
"""

from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import User

from accounts.emails import normalized_email


def keep_username_in_step(sender: type[User], instance: User, **_: Any) -> None:
    """Normalise the email of the account being saved, and make it the username."""
    instance.email = normalized_email(instance.email or "")
    if instance.email:
        instance.username = instance.email


def save_the_username_too(
    sender: type[User], instance: User, update_fields: Iterable[str] | None = None, **_: Any
) -> None:
    """After `save(update_fields=["email"])`, write the username that `keep_username_in_step` changed."""
    if update_fields is not None and "email" in update_fields and "username" not in update_fields:
        sender._default_manager.filter(pk=instance.pk).update(username=instance.username)
