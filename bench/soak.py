"""Soak test: two app servers behind HAProxy, under load, through faults and a rolling upgrade.

    .venv/bin/python bench/soak.py [--duration 600] [--upgrade-from REV] [--keep]

Starts PostgreSQL 15, Redis, an SMTP sink, two gunicorn app servers, the email
worker and HAProxy from deploy/haproxy.cfg, all on loopback in a temporary
folder; drives tool calls, refreshes, sign-ins, headless registrations and docs
calls through the proxy while PostgreSQL restarts, Redis stops, a server is
killed and the servers are rolled to a previous release and back; prints one
report and exits 0 only when every invariant held (bench/README.md).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.soak_harness.run import main

if __name__ == "__main__":
    sys.exit(main())
