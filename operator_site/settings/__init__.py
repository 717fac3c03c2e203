"""Settings for Service Operator, read from the environment (12-factor), one module per concern.

The environment is read in this package and nowhere else, through the typed
readers of `env.py`, which name the variable at fault. Defaults make `make run`
work with no environment at all; docs/configuration.md lists every variable.
App code reads our own values through `operator_core.conf.operator_settings()`.
Each module declares its own values once and imports what it derives from.
With `OPERATOR_ENV=production`, importing settings refuses every rule of
`production.py` that is broken, one line each.
"""

from operator_site.settings.core import *  # noqa: F403
from operator_site.settings.email import *  # noqa: F403
from operator_site.settings.keys import *  # noqa: F403
from operator_site.settings.logs import *  # noqa: F403
from operator_site.settings.metrics import METRICS_TOKEN
from operator_site.settings.oauth import *  # noqa: F403
from operator_site.settings.origin import *  # noqa: F403
from operator_site.settings.production import ProductionRefused, production_problems
from operator_site.settings.security import *  # noqa: F403
from operator_site.settings.service import *  # noqa: F403
from operator_site.settings.storage import *  # noqa: F403

# Every file a secret was read from, with the variable that named it.
_PASSWORDS = (EMAIL_PASSWORD, DATABASE_PASSWORD, REDIS_PASSWORD, METRICS_TOKEN)  # noqa: F405
OPERATOR_SECRET_FILES = [
    *OPERATOR_KEY_FILES,  # noqa: F405
    *((secret.path_name, secret.path) for secret in _PASSWORDS if secret.path),
]

if PRODUCTION:  # noqa: F405
    _problems = production_problems(
        secrets=OPERATOR_SECRETS,  # noqa: F405
        secret_files=OPERATOR_SECRET_FILES,
        base_url=BASE_URL,  # noqa: F405
        database_engine=DATABASES["default"]["ENGINE"],  # noqa: F405
        redis_url=REDIS_URL,  # noqa: F405
        debug=DEBUG,  # noqa: F405
        email_host=EMAIL_HOST,  # noqa: F405
        metrics_token=METRICS_TOKEN.value,
    )
    if _problems:
        raise ProductionRefused(_problems)
