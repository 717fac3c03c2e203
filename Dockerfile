# syntax=docker/dockerfile:1
# Service Operator: gunicorn serving operator_site.wsgi (docs/deploy.md).
#
# BASE_IMAGE is any Debian-based image with python3 (3.11 or newer) and its venv
# module: the official python image by default, or a local Debian base built from
# Debian's own packages (docs/development/containers.md). Pin it to the image you
# tested by appending its digest (docs/deploy.md#what-runs). Build with:
#   docker build -t service-operator .
# No secret is baked in: every key and password comes from mounted files (or the
# environment) when the container runs. Nothing in the image is written at run
# time, so the container may run with a read-only root file system (compose.yaml).
ARG BASE_IMAGE=python:3.11-slim-bookworm

FROM ${BASE_IMAGE} AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
RUN python3 -m venv /opt/venv
# The runtime lock, hash-checked: a file whose hash is not in it is refused.
COPY requirements.txt /tmp/requirements.txt
# On networks that intercept TLS, pass the CA bundle pip must trust as the build
# secret "pip_ca" (--secret id=pip_ca,src=/etc/ssl/certs/ca-certificates.crt): a
# secret is mounted for this step only and is never stored in a layer.
RUN --mount=type=secret,id=pip_ca \
    if [ -s /run/secrets/pip_ca ]; then export PIP_CERT=/run/secrets/pip_ca; fi \
    && /opt/venv/bin/pip install --quiet --require-hashes -r /tmp/requirements.txt

FROM ${BASE_IMAGE}
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PORT=8000
RUN groupadd --gid 10001 app \
    && useradd --uid 10001 --gid app --home-dir /app --no-create-home --shell /usr/sbin/nologin app
COPY --from=builder /opt/venv /opt/venv
WORKDIR /app
COPY . .
# The static files (the pages' stylesheets, the admin's) are collected at build
# time. Importing the settings needs a secret key and keys, so this step alone
# gets throwaway ones in a temporary folder, deleted before the step ends: none
# is kept in the image.
RUN set -eu; \
    build=$(mktemp -d); \
    python3 -c 'import sys; from cryptography.hazmat.primitives import serialization as s; from cryptography.hazmat.primitives.asymmetric import rsa; [open(p, "wb").write(rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(s.Encoding.PEM, s.PrivateFormat.PKCS8, s.NoEncryption())) for p in sys.argv[1:]]' \
        "$build/signing.pem" "$build/lti.pem"; \
    env OPERATOR_ENV=development OPERATOR_VAR_DIR="$build" DJANGO_SECRET_KEY=build-only-not-a-secret \
        OPERATOR_SIGNING_KEY_PATH="$build/signing.pem" OPERATOR_LTI_KEY_PATH="$build/lti.pem" \
        python3 manage.py collectstatic --noinput --verbosity 0; \
    rm -rf "$build"; \
    python3 -m compileall -q /app; \
    install -d -o app -g app /app/var

# The image is for production: start-up refuses until the required settings are
# given (docs/deploy.md). Set OPERATOR_ENV=development to try it without them.
ENV OPERATOR_ENV=production
USER app
EXPOSE 8000
# Readiness: 200 once the process has reached the database, loaded its keys and
# seen no migration pending (docs/deploy.md#health-checks); a redirect is a failure.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python3", "-c", "import os, sys, urllib.parse as p, urllib.request as r; b = p.urlsplit(os.environ.get('OPERATOR_BASE_URL', 'http://127.0.0.1')); u = 'http://127.0.0.1:' + os.environ.get('PORT', '8000') + '/readyz'; a = r.urlopen(r.Request(u, headers={'Host': b.netloc, 'X-Forwarded-Proto': b.scheme}), timeout=4); sys.exit(0 if a.status == 200 and a.url == u else 1)"]
CMD ["gunicorn", "-c", "gunicorn.conf.py", "operator_site.wsgi"]
