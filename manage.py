#!/usr/bin/env python
"""Django's command-line utility for Service Operator."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "operator_site.settings")
    if sys.argv[1:2] == ["test"]:
        # Before the settings read the environment: the suite sees the documented defaults.
        from tests.environment import neutralise_environment

        neutralise_environment(os.environ)
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    from operator_core.telemetry.tracing import configure_for_command

    # The serving process of runserver and db_worker trace when OTEL_* asks (docs/operations.md#traces).
    configure_for_command(sys.argv, os.environ)

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as error:
        # A configuration mistake is the operator's to fix: its lines, not a traceback.
        sys.exit(f"Service Operator cannot start: {error}")


if __name__ == "__main__":
    main()
