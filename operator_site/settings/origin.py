"""Where the service lives: its public origin, the URLs derived from it, and its folders.

Every other settings module derives from these values; none of them re-reads
these variables (docs/configuration.md).
"""

from pathlib import Path
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

from operator_site.settings import env

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(env.env_str("OPERATOR_VAR_DIR", str(BASE_DIR / "var")))
DOCS_DIR = BASE_DIR / "docs"

# The canonical public address of the service; never derived from the Host header.
BASE_URL = env.env_str("OPERATOR_BASE_URL", "http://127.0.0.1:8000").rstrip("/")
_base = urlsplit(BASE_URL)
if _base.scheme not in ("http", "https") or not _base.netloc or _base.path:
    raise ImproperlyConfigured("OPERATOR_BASE_URL must be an origin such as https://operator.example")
BASE_URL_HOSTNAME = _base.hostname or "127.0.0.1"
BASE_URL_IS_HTTPS = _base.scheme == "https"
ISSUER = f"{BASE_URL}/api/auth"
OPERATOR_ENDPOINT_URL = f"{BASE_URL}/api/mcp/operator"
