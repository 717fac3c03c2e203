"""WSGI entry point: `gunicorn operator_site.wsgi`."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "operator_site.settings")

application = get_wsgi_application()

# Parsing the RSA keys takes 0.1 s and more; each worker does it as it starts, before the first request.
from oauth.tokens import load_signing_keys  # noqa: E402 - needs the settings that the line above loads

load_signing_keys()
