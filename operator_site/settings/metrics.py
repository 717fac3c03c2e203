"""The metrics of docs/operations.md#metrics: the token of `GET /metrics` and where else metrics go.

`GET /metrics` exists only with a token. The `OTEL_*` variables are
OpenTelemetry's own: the SDK reads the endpoint, headers and interval itself;
here they only decide whether metrics go out over OTLP at all.
"""

from operator_site.settings import env

# The bearer secret a scraper presents: OPERATOR_METRICS_TOKEN, or a file named by OPERATOR_METRICS_TOKEN_FILE.
METRICS_TOKEN = env.env_optional_secret("OPERATOR_METRICS_TOKEN", path_name="OPERATOR_METRICS_TOKEN_FILE")
# Shorter tokens are refused in production (operator.E016): a scrape token is guessed offline by nobody,
# but online at the endpoint's refusal limit, so it needs the length of a generated secret.
METRICS_TOKEN_MIN_LENGTH = 32

_METRICS_EXPORTER = env.env_choice("OTEL_METRICS_EXPORTER", "", ("otlp", "none"))
_OTLP_ENDPOINT = (
    env.env_str("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    or env.env_str("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "").strip()
)
# Metrics go out over OTLP/HTTP when the exporter is named, or when an endpoint is given and it is not "none".
METRICS_OTLP = _METRICS_EXPORTER == "otlp" or (_METRICS_EXPORTER == "" and bool(_OTLP_ENDPOINT))
# prometheus_client's directory of per-process files (gunicorn.conf.py makes one): a scrape sums every worker.
METRICS_MULTIPROCESS_DIR = env.env_str("PROMETHEUS_MULTIPROC_DIR", "").strip()
