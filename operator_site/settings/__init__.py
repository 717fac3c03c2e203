"""Settings for Service Operator, read from the environment (12-factor), one module per concern.

The environment is read in this package and nowhere else, through the typed
readers of `env.py`, which name the variable at fault. Defaults make `make run`
work with no environment at all; docs/configuration.md lists every variable.
App code reads our own values through `operator_core.conf.operator_settings()`.
Each module declares its own values once and imports what it derives from.
"""

from operator_site.settings.core import *  # noqa: F403
from operator_site.settings.email import *  # noqa: F403
from operator_site.settings.keys import *  # noqa: F403
from operator_site.settings.logs import *  # noqa: F403
from operator_site.settings.oauth import *  # noqa: F403
from operator_site.settings.origin import *  # noqa: F403
from operator_site.settings.security import *  # noqa: F403
from operator_site.settings.service import *  # noqa: F403
from operator_site.settings.storage import *  # noqa: F403
