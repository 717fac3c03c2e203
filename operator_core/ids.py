"""Reading an id a client sent: a UUID, or None for anything that is not one."""

import uuid


def uuid_or_none(value: object) -> uuid.UUID | None:
    """`value` as a UUID; None when it is not one (malformed, empty, of another type)."""
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except (TypeError, ValueError, AttributeError):
        return None
