"""Settings from the environment. The defaults need nothing installed: SQLite and uploads under instance/."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent
INSTANCE_DIR = Path(os.environ.get("GAMBIT_INSTANCE", BASE_DIR / "instance"))


def _bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return raw.strip().lower() in ("1", "true", "yes", "on")


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return int(raw) if raw not in (None, "") else default


def _instance_secret(env_name: str, filename: str) -> str:
    """A secret from the environment, else one generated once into instance/ (mode 0600) and kept there.

    Two workers starting together must not each keep a different key: the new key is written to a private
    file and linked into place, so only the first link wins and the other worker reads the winner's key.
    """
    if os.environ.get(env_name):
        return os.environ[env_name]
    path = INSTANCE_DIR / filename
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        INSTANCE_DIR.mkdir(parents=True, exist_ok=True)
        key = secrets.token_hex(32)
        tmp = INSTANCE_DIR / f".{filename}.{os.getpid()}.{secrets.token_hex(4)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(key)
        try:
            os.link(tmp, path)
        except FileExistsError:
            key = path.read_text().strip()
        finally:
            tmp.unlink()
        return key


def _secret_key() -> str:
    """SECRET_KEY from the environment, else one kept in instance/ so sessions survive a restart."""
    return _instance_secret("SECRET_KEY", "secret_key")


def _audit_key() -> str:
    """AUDIT_KEY from the environment, else one kept in instance/audit_key: the key of the audit log's MAC.

    It lives outside the database on purpose: whoever can write the database but not read this key cannot
    rewrite the audit chain without `flask audit verify` noticing.
    """
    return _instance_secret("AUDIT_KEY", "audit_key")


def _two_factor_key() -> str:
    """TWO_FACTOR_KEY from the environment, else one kept in instance/two_factor_key: the key that seals each
    person's TOTP secret in the database (Fernet), so a copy of the database alone cannot mint their codes."""
    return _instance_secret("TWO_FACTOR_KEY", "two_factor_key")


def two_factor_roles_default(gambit_env: str | None) -> str:
    """The roles that must sign in with a second factor when TWO_FACTOR_REQUIRED_ROLES is unset: those who decide
    money (the secretariat, the Board and the President, the WCOC) in production, none elsewhere, so that a visitor
    of `make run` can try every demo account in one step."""
    return "admin,board,wcoc" if gambit_env == "production" else ""


def _database_url() -> str:
    url = os.environ.get("DATABASE_URL") or f"sqlite:///{INSTANCE_DIR / 'gambit.sqlite3'}"
    # Heroku-style URLs name the old driver; psycopg 3 is the one installed.
    if url.startswith("postgres://"):
        url = "postgresql+psycopg://" + url[len("postgres://"):]
    elif url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://"):]
    return url


def log_format(setting: str | None, gambit_env: str | None) -> str:
    """The LOG_FORMAT setting, else "json" in production (GAMBIT_ENV=production) and "text" elsewhere. create_app
    decides with it, and so does gunicorn.conf.py, so that gunicorn's own messages come out like the app's."""
    default = "json" if gambit_env == "production" else "text"
    return (setting or default).strip().lower()


class Config:
    """Read once at start-up; `create_app(config={...})` overrides any key (tests do)."""

    def __init__(self) -> None:
        self.SECRET_KEY = _secret_key()
        self.AUDIT_KEY = _audit_key()
        self.SQLALCHEMY_DATABASE_URI = _database_url()
        self.SQLALCHEMY_ENGINE_OPTIONS = {"pool_pre_ping": True}
        self.UPLOAD_DIR = os.environ.get("UPLOAD_DIR", str(INSTANCE_DIR / "uploads"))
        self.REDIS_URL = os.environ.get("REDIS_URL", "")
        # Put before the name of every RQ queue (operations.jobs.QUEUES), so that two installations sharing one Redis do
        # not take each other's jobs.
        self.RQ_QUEUE_PREFIX = os.environ.get("RQ_QUEUE_PREFIX", "")
        # Without Redis, a dossier or pack needing more than this many PDFs made renders in a background thread of
        # the web process (the page shows the progress), so that no request runs into the server's timeout.
        self.PDF_INLINE_LIMIT = _int("PDF_INLINE_LIMIT", 4)
        # Uploads: the largest accepted document, in megabytes (a larger one gets a clear message).
        self.MAX_UPLOAD_MB = _int("MAX_UPLOAD_MB", 10)
        # The readiness check (/readyz) fails when the upload folder has less free space than this, in megabytes.
        self.READY_MIN_FREE_MB = _int("READY_MIN_FREE_MB", 100)
        # Rows on one page of a list that can grow (bids, ranking, contracts, payments, outbox): core.paging.
        self.PAGE_SIZE = _int("PAGE_SIZE", 25)
        # Versioned pages (operations.page_cache): the ranking, a bid's page, the bid list and the Board's page of a
        # call are kept per process under the audit chain's head and answered 304 to a browser that holds the same
        # version. PAGE_CACHE_ENTRIES: how many pages a process keeps (least recently used dropped first).
        self.PAGE_CACHE = _bool("PAGE_CACHE", True)
        self.PAGE_CACHE_ENTRIES = _int("PAGE_CACHE_ENTRIES", 512)
        # The request limit sits a little above the document limit so Gambit, not the server, says what is wrong.
        self.MAX_CONTENT_LENGTH = (self.MAX_UPLOAD_MB + 2) * 1024 * 1024
        self.MAIL_SERVER = os.environ.get("MAIL_SERVER", "localhost")
        self.MAIL_PORT = _int("MAIL_PORT", 25)
        self.MAIL_USERNAME = os.environ.get("MAIL_USERNAME", "")
        self.MAIL_PASSWORD = os.environ.get("MAIL_PASSWORD", "")
        self.MAIL_USE_TLS = _bool("MAIL_USE_TLS", False)
        # With MAIL_USE_TLS the server's certificate must name MAIL_SERVER and chain to a trusted authority: the
        # system's, or the ones in this PEM file (a mail server with a certificate of the organisation's own).
        self.MAIL_TLS_CA_FILE = os.environ.get("MAIL_TLS_CA_FILE", "")
        self.MAIL_SENDER = os.environ.get("MAIL_SENDER", "Gambit <gambit@fide.local>")
        # Each SMTP operation's limit (connect, each command, the answer to the message), in seconds.
        self.MAIL_TIMEOUT = _int("MAIL_TIMEOUT", 10)
        # The outbox (operations.outbox): the waits between a message's attempts, in minutes; after the last, it is
        # "failed" and waits for the secretariat. "auto" hands each message to the RQ worker (REDIS_URL) or to a
        # thread of the process; "manual": only `flask mail send` and the scheduler deliver.
        self.MAIL_RETRY_MINUTES = os.environ.get("MAIL_RETRY_MINUTES", "1,5,15,60,240")
        self.OUTBOX_DISPATCH = os.environ.get("OUTBOX_DISPATCH", "auto")
        # A message claimed this long ago and still "sending" was left by a deliverer that stopped.
        self.OUTBOX_STALE_SECONDS = _int("OUTBOX_STALE_SECONDS", 600)
        # The readiness check fails when a message has waited longer than this.
        self.OUTBOX_READY_MINUTES = _int("OUTBOX_READY_MINUTES", 60)
        # Mail is off until MAIL_ENABLED is set, so `make run` on a laptop does not try to send.
        self.MAIL_ENABLED = _bool("MAIL_ENABLED", False)
        self.PASSWORD_MIN_LENGTH = _int("PASSWORD_MIN_LENGTH", 12)
        # How long the link that confirms a registration's address stays valid.
        self.CONFIRM_EMAIL_HOURS = _int("CONFIRM_EMAIL_HOURS", 48)
        self.LOGIN_RATE_LIMIT = os.environ.get("LOGIN_RATE_LIMIT", "10 per minute;50 per hour")
        # Forgotten passwords: how long the emailed link works (it works once), and how often a link may be asked
        # for, per client address and per email address (so one mailbox is not flooded from many clients).
        self.PASSWORD_RESET_HOURS = _int("PASSWORD_RESET_HOURS", 1)
        self.PASSWORD_RESET_RATE_LIMIT = os.environ.get("PASSWORD_RESET_RATE_LIMIT", "5 per minute;20 per hour")
        self.PASSWORD_RESET_ADDRESS_RATE_LIMIT = os.environ.get("PASSWORD_RESET_ADDRESS_RATE_LIMIT",
                                                                "3 per hour;10 per day")
        self.REGISTER_RATE_LIMIT = os.environ.get("REGISTER_RATE_LIMIT", "5 per minute;30 per hour")
        # A stolen session must not be able to guess the current password, nor mint tokens without end.
        self.PASSWORD_CHANGE_RATE_LIMIT = os.environ.get("PASSWORD_CHANGE_RATE_LIMIT", "5 per minute;20 per hour")
        # The public verify page checks signatures for anyone: bounded, as it costs the server some work.
        self.VERIFY_RATE_LIMIT = os.environ.get("VERIFY_RATE_LIMIT", "20 per minute;200 per hour")
        self.TOKEN_RATE_LIMIT = os.environ.get("TOKEN_RATE_LIMIT", "5 per minute;20 per hour")
        self.RATELIMIT_ENABLED = _bool("RATELIMIT_ENABLED", True)
        # A second factor (TOTP, recovery codes, passkeys): the roles that must use one, comma-separated (unset:
        # "admin,board,wcoc" in production, none elsewhere: config.two_factor_roles_default). Production refuses to
        # start with no role required unless TWO_FACTOR_OPTIONAL_ACKNOWLEDGED says the operator means it.
        self.TWO_FACTOR_REQUIRED_ROLES = os.environ.get("TWO_FACTOR_REQUIRED_ROLES")
        self.TWO_FACTOR_OPTIONAL_ACKNOWLEDGED = _bool("TWO_FACTOR_OPTIONAL_ACKNOWLEDGED", False)
        # Wrong codes in a row before the second step of signing in is locked, and for how long.
        self.TWO_FACTOR_MAX_FAILURES = _int("TWO_FACTOR_MAX_FAILURES", 5)
        self.TWO_FACTOR_LOCK_MINUTES = _int("TWO_FACTOR_LOCK_MINUTES", 15)
        self.TWO_FACTOR_RATE_LIMIT = os.environ.get("TWO_FACTOR_RATE_LIMIT", "10 per minute;50 per hour")
        # How long a password checked waits for its second factor before the sign-in starts again.
        self.TWO_FACTOR_PENDING_MINUTES = _int("TWO_FACTOR_PENDING_MINUTES", 10)
        self.TWO_FACTOR_KEY = _two_factor_key()
        # Whom a person who lost every factor is told to ask (shown on the sign-in pages).
        self.SECRETARIAT_CONTACT = os.environ.get("SECRETARIAT_CONTACT", "the FIDE secretariat")
        # SQLite: paths whose GET requests may write (the API records each token's last use), so their
        # transactions take the write lock at the start like any POST (core.db._reads_only).
        self.SQLITE_WRITING_PATH_PREFIXES = ("/api/",)
        self.SESSION_IDLE_MINUTES = _int("SESSION_IDLE_MINUTES", 60)
        self.SESSION_ABSOLUTE_HOURS = _int("SESSION_ABSOLUTE_HOURS", 12)
        self.PAYMENT_DUE_SOON_DAYS = _int("PAYMENT_DUE_SOON_DAYS", 14)
        # The hour (UTC, 0-23) at which `flask scheduler` sends the day's payment reminders; a scheduler started
        # later in the day sends them at start if no process has yet.
        self.REMINDER_HOUR_UTC = _int("REMINDER_HOUR_UTC", 7)
        # Gambit's sanity check of the days entered for a payment, a deduction or a signature: no more than this
        # many days after today (nor before the call existed). Not a regulation: a typing slip caught.
        self.SANE_DATE_DAYS_AHEAD = _int("SANE_DATE_DAYS_AHEAD", 366)
        # A bank guarantee lapsing within this many days, with money still owed, is warned about.
        self.GUARANTEE_WARNING_DAYS = _int("GUARANTEE_WARNING_DAYS", 30)
        # Gambit's signing identity (PKCS#12 and its passphrase); unset: a development identity generated into
        # instance/ on first use, labelled as such wherever a signature is shown. A time-stamping authority's URL
        # adds a trusted timestamp to every signature when set.
        self.SIGNING_PKCS12 = os.environ.get("SIGNING_PKCS12", "")
        self.SIGNING_PASSPHRASE = os.environ.get("SIGNING_PASSPHRASE", "")
        self.SIGNING_TSA_URL = os.environ.get("SIGNING_TSA_URL", "")
        # The site's public address (https://gambit.example.org): every link in a message, a PDF, the calendar feed
        # and the API is built on it, in a request, a worker or the command line alike (core.urls.external_url).
        # Production (GAMBIT_ENV=production) refuses to start without it.
        self.BASE_URL = os.environ.get("BASE_URL", "")
        self.GAMBIT_ENV = os.environ.get("GAMBIT_ENV", "development")
        # Logs: one JSON object per line ("json") or a readable line ("text"), each with its request's id
        # (operations.logs); the level applies to the root logger.
        # Unset: decided by GAMBIT_ENV once create_app has applied its overrides (log_format above).
        self.LOG_FORMAT = os.environ.get("LOG_FORMAT", "")
        self.LOG_LEVEL = os.environ.get("LOG_LEVEL", "INFO").strip().upper()
        # How many reverse proxies stand in front of Gambit and set X-Forwarded-For/-Proto/-Host/-Prefix: exactly
        # that many are believed (werkzeug's ProxyFix). 0, the default, believes none: a client could otherwise
        # claim https or another address just by sending the header.
        self.PROXY_FIX_HOPS = _int("PROXY_FIX_HOPS", 0)
        self.PREFERRED_URL_SCHEME = os.environ.get("PREFERRED_URL_SCHEME", "http")
        self.SESSION_COOKIE_HTTPONLY = True
        self.SESSION_COOKIE_SAMESITE = "Lax"
        self.SESSION_COOKIE_SECURE = self.PREFERRED_URL_SCHEME == "https"
        self.REMEMBER_COOKIE_HTTPONLY = True
        self.WTF_CSRF_TIME_LIMIT = None  # a bid is filled in over hours; the token lives as long as the session

    def as_dict(self) -> dict:
        return {k: v for k, v in vars(self).items() if k.isupper()}
