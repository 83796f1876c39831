# Gambit's container image: gunicorn serving the app on port 8000, as a user without privileges. The same image runs
# the worker (`flask worker`), the scheduler (`flask scheduler`) and one-off commands (`flask db upgrade`,
# `flask backup create`); compose.yaml starts them all. Build: docker build -t gambit .

# ---- build: the locked Python packages, every one checked against its hash, into a virtualenv
FROM python:3.11-slim-bookworm AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1
COPY requirements.lock /tmp/requirements.lock
RUN python -m venv /opt/venv \
 && /opt/venv/bin/pip install --no-cache-dir --require-hashes -r /tmp/requirements.lock

# ---- runtime: WeasyPrint's system libraries and fonts, the virtualenv, the code
FROM python:3.11-slim-bookworm

# What WeasyPrint needs at run time (the Makefile's APT_PACKAGES, less what only the tests use): Pango, its
# FreeType backend, HarfBuzz's subsetter (fonts embedded in the PDFs) and the DejaVu fonts the PDFs are set in.
# Not pinned to exact versions on purpose: Debian drops a superseded version from its mirrors when a security
# update lands, so a pin would break the next build; the release (bookworm) fixes what the versions can be.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fonts-dejavu-core fonts-dejavu-extra \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 gambit \
 && useradd --system --uid 10001 --gid gambit --home-dir /var/lib/gambit --shell /usr/sbin/nologin gambit \
 && mkdir -p /var/lib/gambit/instance /var/lib/gambit/uploads \
 && chown -R gambit:gambit /var/lib/gambit

COPY --from=build /opt/venv /opt/venv

# The code belongs to root and is only read: the app's user writes nowhere but /var/lib/gambit (and /tmp).
WORKDIR /app
COPY . /app
# Compiled once here: the app's user cannot write __pycache__ into /app, and each process would compile again.
RUN python -m compileall -q /app

# The instance folder and the uploads are where compose.yaml mounts its named volumes; the app's user owns both
# folders, and a new named volume takes that ownership from the image. Production by default: the app refuses to start without
# BASE_URL, and logs are JSON lines.
ENV PATH="/opt/venv/bin:$PATH" \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    FLASK_APP=app \
    GAMBIT_ENV=production \
    GAMBIT_INSTANCE=/var/lib/gambit/instance \
    UPLOAD_DIR=/var/lib/gambit/uploads \
    HOME=/var/lib/gambit

# Numeric, so that a host or an orchestrator checking "not root" (runAsNonRoot) can tell without the image's passwd.
USER 10001:10001
EXPOSE 8000

# Liveness (/healthz: the process answers and reaches its database), with Python: the slim image has no curl.
# compose.yaml turns it off for the worker and the scheduler, which serve no HTTP.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status != 200)"]

# gunicorn.conf.py: the app built once in the master, access log left to the app's own request lines, gunicorn's
# messages in the app's log format. Workers: WEB_CONCURRENCY (gunicorn's own variable; default 1).
CMD ["gunicorn", "--config", "gunicorn.conf.py", "--bind", "0.0.0.0:8000", "app:create_app()"]
