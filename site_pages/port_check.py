"""Whether `make run` can listen where it is told to, asked before it prints or loads anything.

A second `make run` on a busy port used to migrate, seed and print the whole
start-up banner, then end on runserver's one-line "port in use". The check
binds the address as runserver will (SO_REUSEADDR, so a port left in TIME_WAIT
by a stopped server counts as free) and lets it go at once.
"""

import socket

# How far past a busy port to look for a free one to suggest.
SUGGESTION_RANGE = 20


def port_is_free(host: str, port: int) -> bool:
    """True when a server could listen on `host`:`port` now (an IPv6 literal may come in brackets)."""
    address = host.strip("[]")
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((address, port))
        except OSError:
            return False
    return True


def free_port_after(host: str, port: int) -> int | None:
    """The first free port after `port` on `host`, within SUGGESTION_RANGE; None when all are taken."""
    return next(
        (candidate for candidate in range(port + 1, port + 1 + SUGGESTION_RANGE) if port_is_free(host, candidate)),
        None,
    )


def busy_port_message(host: str, port: int) -> str:
    """One line for a busy port: what is wrong and the `make run` that would start elsewhere."""
    suggestion = free_port_after(host, port)
    other = f"PORT={suggestion}" if suggestion is not None else "PORT=<another port>"
    return (
        f"Port {port} on {host} is already in use (is another `make run` serving?). "
        f"Stop it, or start on another port: make run {other}"
    )
