"""Secrets: Django's secret key and the RSA keys that sign access tokens and the LTI key set."""

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from operator_core.signing_keys import load_or_create_private_key
from operator_site.settings import env
from operator_site.settings.core import DEBUG
from operator_site.settings.origin import VAR_DIR

SECRET_KEY = env.env_str("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG and env.env_bool("OPERATOR_REQUIRE_SECRET_KEY", False):
        raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set")
    # Development and tests only: production sets DJANGO_SECRET_KEY (docs/configuration.md).
    SECRET_KEY = "insecure-development-key-set-DJANGO_SECRET_KEY-in-production"

OPERATOR_SIGNING_KEY_PATH = Path(env.env_str("OPERATOR_SIGNING_KEY_PATH", str(VAR_DIR / "oauth-signing-key.pem")))
OPERATOR_LTI_KEY_PATH = Path(env.env_str("OPERATOR_LTI_KEY_PATH", str(VAR_DIR / "lti-signing-key.pem")))
OPERATOR_SIGNING_KEY = load_or_create_private_key(OPERATOR_SIGNING_KEY_PATH)
OPERATOR_INACTIVE_SIGNING_KEYS = []
for _retired_path in env.env_list("OPERATOR_INACTIVE_SIGNING_KEY_PATHS", []):
    # A retired key must exist: generating one would verify nothing and hide a typo.
    if not Path(_retired_path).is_file():
        raise ImproperlyConfigured(f"OPERATOR_INACTIVE_SIGNING_KEY_PATHS names a missing file: {_retired_path}")
    OPERATOR_INACTIVE_SIGNING_KEYS.append(Path(_retired_path).read_text())
