"""Typed readers of environment variables, used by the settings package only.

Each raises ImproperlyConfigured naming the variable when its value is malformed.
"""

import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), got {raw!r}")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None


def env_int_between(name: str, default: int, *, minimum: int, maximum: int) -> int:
    value = env_int(name, default)
    if not minimum <= value <= maximum:
        raise ImproperlyConfigured(f"{name} must be between {minimum} and {maximum}, got {value}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_networks(name: str, default: list[str]) -> list[str]:
    """A comma-separated list of IP addresses or networks (CIDR), each checked and written out in full."""
    networks = []
    for item in env_list(name, default):
        try:
            networks.append(str(ipaddress.ip_network(item)))
        except ValueError:
            raise ImproperlyConfigured(f"{name} must list IP addresses or networks, got {item!r}") from None
    return networks


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    raw = os.environ.get(name, "").strip()
    value = next((choice for choice in choices if choice.lower() == raw.lower()), None) if raw else default
    if value is None:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}, got {raw!r}")
    return value


@dataclass(frozen=True)
class Secret:
    """One secret and where it came from.

    `origin` is "environment" (the value itself in `name`), "file" (a file named
    by `path_name`), "development" (the development file under var/ that
    `manage.py create_local_secrets` writes), "missing file" (`path_name` names
    no file) or "missing". `path` is where the secret lives or would be
    created; None when it was given inline.
    """

    name: str
    path_name: str
    value: str = field(repr=False)
    origin: str
    path: Path | None

    @property
    def is_explicit(self) -> bool:
        return self.origin in ("environment", "file")


def env_secret(name: str, *, path_name: str, development_path: Path) -> Secret:
    """Read a secret given as its value in `name` or as a file path in `path_name`; never write one.

    Without either, the development file is read if it exists.
    """
    inline = os.environ.get(name, "").strip()
    if inline:
        return Secret(name, path_name, inline, "environment", None)
    explicit_path = os.environ.get(path_name, "").strip()
    path = Path(explicit_path) if explicit_path else development_path
    if path.is_file():
        return Secret(name, path_name, path.read_text().strip(), "file" if explicit_path else "development", path)
    return Secret(name, path_name, "", "missing file" if explicit_path else "missing", path)


def env_optional_secret(name: str, *, path_name: str) -> Secret:
    """A secret that may be absent (a password): its value in `name`, or the file `path_name` names, or empty.

    A file keeps its text but for the line break at its end; a named file that is missing is refused.
    """
    inline = os.environ.get(name, "")
    if inline:
        return Secret(name, path_name, inline, "environment", None)
    explicit_path = os.environ.get(path_name, "").strip()
    if not explicit_path:
        return Secret(name, path_name, "", "missing", None)
    path = Path(explicit_path)
    if not path.is_file():
        raise ImproperlyConfigured(f"{path_name} names a missing file: {path}")
    return Secret(name, path_name, path.read_text().rstrip("\r\n"), "file", path)
