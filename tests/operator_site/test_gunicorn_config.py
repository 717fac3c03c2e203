"""The worker class `gunicorn.conf.py` gives gunicorn, read the way gunicorn reads it.

Sync workers by default, also when the command line says `-k sync`; the
threaded worker only when `GUNICORN_THREADS` asks for more than one thread
(docs/deploy.md#gunicorn-settings).
"""

from __future__ import annotations

import os
from pathlib import Path
from unittest import mock

from django.test import SimpleTestCase
from gunicorn.app.wsgiapp import WSGIApplication

CONFIG = Path(__file__).resolve().parents[2] / "gunicorn.conf.py"


def worker_class_name(*arguments: str, environment: dict[str, str] | None = None) -> str:
    """The worker class gunicorn would run with our configuration file and `arguments`."""
    argv = ["gunicorn", "-c", str(CONFIG), *arguments, "operator_site.wsgi"]
    cleaned = {name: value for name, value in os.environ.items() if not name.startswith("GUNICORN_")}
    with mock.patch.dict(os.environ, {**cleaned, **(environment or {})}, clear=True), mock.patch("sys.argv", argv):
        application = WSGIApplication()
    return application.cfg.worker_class.__name__


class WorkerClassTests(SimpleTestCase):
    def test_sync_workers_by_default(self) -> None:
        self.assertEqual(worker_class_name(), "SyncWorker")

    def test_an_explicit_sync_worker_stays_sync(self) -> None:
        self.assertEqual(worker_class_name("-k", "sync"), "SyncWorker")

    def test_more_than_one_thread_runs_the_threaded_worker(self) -> None:
        self.assertEqual(worker_class_name(environment={"GUNICORN_THREADS": "4"}), "ThreadWorker")
