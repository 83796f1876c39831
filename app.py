"""create_app(config=None): the one place the app is assembled (extensions, blueprints, CLI)."""

from __future__ import annotations

import os
from pathlib import Path

import click
from flask import Flask, abort, g, jsonify, render_template, request
from flask_login import AnonymousUserMixin
from flask_migrate import Migrate
from flask_wtf.csrf import CSRFError, CSRFProtect
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.routing import IntegerConverter

# Every model, so SQLAlchemy's metadata (and Alembic) see the whole schema.
import accounts.models  # noqa: F401
import accounts.two_factor_views  # noqa: F401  (its routes join the accounts blueprint)
import bids.models  # noqa: F401
import board.models  # noqa: F401
import contracts.models  # noqa: F401
import events.models  # noqa: F401
import evidence.audit  # noqa: F401
import operations.outbox  # noqa: F401
import scoring.models  # noqa: F401
from accounts.cli import cli as users_cli
from accounts.services import configure_hasher
from accounts.two_factor import parse_required_roles
from accounts.views import bp as accounts_bp
from api.blueprint import bp as api_bp
from bids import services as bids_services
from bids import views as bids_views
from bids.cli import cli as bids_cli
from bids.queries import call_bid_counts
from board import services as board_services
from board.jobs import cli as board_cli
from board.queries import current_decision
from board.views import bp as board_bp
from config import Config, log_format, two_factor_roles_default
from contracts import services as contracts_services
from contracts.cli import cli as payments_cli
from contracts.reminders import scheduled_reminders
from contracts.views import bp as contracts_bp
from core.auth import login_manager
from core.bare import SessionInterface as BareSessionInterface
from core.bare import session_limit
from core.db import db, unavailable_message, utcnow
from core.federations import federation_name
from core.limiter import init_limiter
from core.security import init_security
from core.templating import init_templating
from core.urls import BaseUrlError, parse_base_url
from core.validators import country_name
from core.views import bp as core_bp
from demo.cli import cli as demo_cli
from events import services as events_services
from events import views as events_views
from events.cli import cli as events_cli
from events.upgrade import bring_forward_calls
from evidence import trust
from evidence.audit import cli as audit_cli
from evidence.audit_views import bp as audit_bp
from evidence.signature_views import bp as signatures_bp
from evidence.signature_views import cli as pdf_cli
from evidence.storage import StorageError
from operations.backup import cli as backup_cli
from operations.delivery import cli as mail_cli
from operations.delivery import scheduled_delivery
from operations.health_views import HEALTH_PATHS, health_answer_after_failure
from operations.jobs import cli as jobs_cli
from operations.logs import FORMATS, init_logging
from operations.outbox_views import bp as outbox_bp
from operations.page_cache import init_page_cache
from operations.page_cache import instants as page_instants
from operations.scheduler import Daily, Every, registry
from operations.scheduler import cli as scheduler_cli
from scoring.queries import declaration_required, load_scoring
from scoring.services import weights_in_force
from scoring.views import bp as scoring_bp

csrf = CSRFProtect()
migrate = Migrate()


class IdConverter(IntegerConverter):
    """<int:...> in URLs: ids only up to the database's integer range, so /bids/99999999999999999999 is a 404,
    not an overflow inside the database driver."""

    def __init__(self, map, *args, **kwargs):
        kwargs.setdefault("max", 2**31 - 1)
        super().__init__(map, *args, **kwargs)


def _provide_hooks() -> None:
    """Every hook (core.hooks), here and nowhere else: the later steps' parts of earlier steps' pages (scoring's
    weights and progress on the call's page, scoring's declaration gate before every bid page) and of earlier
    steps' changes (an amendment of the call judges every submitted bid again; a correction of the decision that
    selects another bid closes the old winner's contract; a change to the trust list judges every stored signature
    again)."""
    events_views.criteria_in_force.provide(weights_in_force)
    events_views.scoring_progress.provide(_scoring_progress)
    events_views.bid_counts.provide(call_bid_counts)
    bids_views.declaration_required.provide(declaration_required)
    events_services.judge_again.provide(bids_services.judge_again)
    board_services.after_correction.provide(contracts_services.close_for_correction)
    page_instants.provide(events_services.bid_deadlines)
    events_views.call_outcome.provide(_call_outcome)
    trust.recheck_signatures.provide(_recheck_signatures)


def _recheck_signatures(*, actor, now, upload_dir: str) -> int:
    """Every stored signature judged again after the trust list changed: the bids' signed letters and guarantees,
    then the contracts' countersigned copies; how many documents were checked. Raises what they raise."""
    return (bids_services.recheck_document_signatures(actor=actor, now=now, upload_dir=upload_dir)
            + contracts_services.recheck_contract_signatures(actor=actor, now=now, upload_dir=upload_dir))


def _call_outcome(event) -> events_views.CallOutcome | None:
    """The decision in force on `event`, in the words of the call's public page (names, not codes); None before
    the decision. Raises nothing."""
    decision = current_decision(event)
    if decision is None:
        return None
    bid = decision.selected_bid
    return events_views.CallOutcome(
        decided_on=decision.decided_on, applicant=bid.applicant_name or bid.owner.organisation or bid.owner.name,
        federation=federation_name(bid.host_federation) if bid.host_federation else "", city=bid.venue_city or "",
        country=country_name(bid.venue_country) if bid.venue_country else "")


def _periodic_jobs(app: Flask) -> None:
    """Every job `flask scheduler` runs, in one place: a name (with the period, the key that makes each run happen
    once), a schedule in UTC, and the function (it takes the instant it starts). Names stay stable: the
    scheduled_run table keys each period by them."""
    hour = app.config["REMINDER_HOUR_UTC"]
    if not isinstance(hour, int) or not 0 <= hour <= 23:
        raise ConfigurationError(f"REMINDER_HOUR_UTC is the hour of the day (UTC) at which the payment reminders are "
                                 f"sent, 0 to 23; {hour!r} is not one.")
    jobs = registry(app)
    jobs.add("payments.remind", Daily(hour=hour), scheduled_reminders)
    # The outbox's retries, and whatever a process that stopped left unsent (operations.outbox).
    jobs.add("mail.deliver", Every(seconds=60), scheduled_delivery)


def _bring_calls_forward() -> None:
    """The end of every `flask db upgrade` (migrations/env.py): the stored calls given this release's call files
    (events.upgrade), committed, one line each for the operator. Raises events.upgrade.UpgradeError (nothing is
    written) when an amendment no longer applies."""
    try:
        done = bring_forward_calls(now=utcnow())
    except Exception:
        db.session.rollback()
        raise
    db.session.commit()
    for result in done:
        click.echo(result.line())


def _scoring_progress(event) -> str:
    return load_scoring(event).progress()


def create_app(config: dict | None = None) -> Flask:
    app = Flask(__name__, instance_path=str(Path(os.environ.get("GAMBIT_INSTANCE",
                                                                 Path(__file__).parent / "instance"))))
    app.url_map.converters["int"] = IdConverter
    app.config.from_mapping(Config().as_dict())
    if config:
        app.config.from_mapping(config)
    # Flask's default keeps a permanent session's cookie 31 days; no cookie outlives the server's session. Gambit
    # never sets Flask-Login's "remember me" cookie (login_user without remember=True), and bounds it all the same.
    app.config["PERMANENT_SESSION_LIFETIME"] = app.config["REMEMBER_COOKIE_DURATION"] = session_limit(app.config)
    _check_base_url(app)
    _check_logging(app)
    _check_two_factor(app)
    # First, so that every record of a request, even one the later hooks refuse, carries the request's id.
    init_logging(app)
    _proxy_fix(app)
    Path(app.instance_path).mkdir(parents=True, exist_ok=True)
    Path(app.config["UPLOAD_DIR"]).mkdir(parents=True, exist_ok=True)

    db.init_app(app)
    migrate.init_app(app, db, directory=str(Path(__file__).parent / "migrations"), render_as_batch=True)
    app.extensions["gambit.after_upgrade"] = _bring_calls_forward
    csrf.init_app(app)

    app.session_interface = BareSessionInterface()  # no session on a bare route (/livez)
    login_manager.init_app(app)
    init_security(app)
    init_templating(app)
    init_page_cache(app)
    if app.config.get("ARGON2_TIME_COST"):
        configure_hasher(app.config["ARGON2_TIME_COST"], app.config.get("ARGON2_MEMORY_COST"))

    for bp in (core_bp, accounts_bp, events_views.bp, bids_views.bp, scoring_bp, board_bp, api_bp,
               audit_cli, backup_cli, users_cli, events_cli, bids_cli, board_cli, demo_cli, signatures_bp,
               pdf_cli, jobs_cli, scheduler_cli, outbox_bp, mail_cli, audit_bp):
        app.register_blueprint(bp)
    app.register_blueprint(contracts_bp)
    app.register_blueprint(payments_cli)
    _provide_hooks()
    _periodic_jobs(app)
    init_limiter(app)
    _errors(app)

    @app.before_request
    def _refuse_nul():
        # A NUL in a URL can match no row and PostgreSQL cannot even compare it: answer 404 before any query.
        if "\x00" in request.path or any("\x00" in v for v in request.args.values()):
            abort(404)

    return app


class ConfigurationError(RuntimeError):
    """A setting the app cannot run without is missing or wrong; the message says which and why."""


def _check_base_url(app: Flask) -> None:
    """BASE_URL, when set, must be an absolute http(s) address; in production it must be set, since a reminder
    sent by the scheduler or a notice sent by the worker has no request to take the site's address from."""
    base = app.config.get("BASE_URL") or ""
    if base:
        try:
            scheme, _netloc, _prefix = parse_base_url(base)
        except BaseUrlError as exc:
            raise ConfigurationError(str(exc)) from None
        if scheme == "https":
            app.config["PREFERRED_URL_SCHEME"] = "https"
            app.config["SESSION_COOKIE_SECURE"] = True
    elif app.config.get("GAMBIT_ENV") == "production":
        raise ConfigurationError(
            "BASE_URL is not set: in production (GAMBIT_ENV=production) Gambit needs the site's public address, "
            "such as BASE_URL=https://gambit.fide.com, to put absolute links in the messages, PDFs and calendar "
            "feeds it makes outside a request (reminders from the scheduler, notices from the worker).")


def _check_two_factor(app: Flask) -> None:
    """TWO_FACTOR_REQUIRED_ROLES (decided by GAMBIT_ENV when unset) must name roles; production refuses to start
    with no role required unless the operator says so with TWO_FACTOR_OPTIONAL_ACKNOWLEDGED."""
    setting = app.config.get("TWO_FACTOR_REQUIRED_ROLES")
    if setting is None:
        setting = two_factor_roles_default(app.config.get("GAMBIT_ENV"))
    try:
        roles = parse_required_roles(setting)
    except ValueError as exc:
        raise ConfigurationError(str(exc)) from None
    app.config["TWO_FACTOR_REQUIRED_ROLES"] = ",".join(sorted(r.value for r in roles))
    if (app.config.get("GAMBIT_ENV") == "production" and not roles
            and not app.config.get("TWO_FACTOR_OPTIONAL_ACKNOWLEDGED")):
        raise ConfigurationError(
            "TWO_FACTOR_REQUIRED_ROLES is empty: in production (GAMBIT_ENV=production) the secretariat, the Board "
            "and the WCOC sign in with a second factor (leave it unset for admin,board,wcoc). To run without "
            "requiring one, say so explicitly with TWO_FACTOR_OPTIONAL_ACKNOWLEDGED=1.")
    for key in ("TWO_FACTOR_MAX_FAILURES", "TWO_FACTOR_LOCK_MINUTES", "TWO_FACTOR_PENDING_MINUTES"):
        value = app.config.get(key)
        if not isinstance(value, int) or value < 1:
            raise ConfigurationError(f"{key} is {value!r}: it must be a whole number, 1 or more.")


def _check_logging(app: Flask) -> None:
    """LOG_FORMAT (decided by GAMBIT_ENV when unset) and LOG_LEVEL must be values the logs can use."""
    app.config["LOG_FORMAT"] = log_format(app.config.get("LOG_FORMAT"), app.config.get("GAMBIT_ENV"))
    if app.config["LOG_FORMAT"] not in FORMATS:
        raise ConfigurationError(f"LOG_FORMAT is {app.config['LOG_FORMAT']!r}: it must be one of "
                                 f"{', '.join(FORMATS)} (unset: json in production, text elsewhere).")
    levels = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
    if app.config.get("LOG_LEVEL") not in levels:
        raise ConfigurationError(f"LOG_LEVEL is {app.config.get('LOG_LEVEL')!r}: it must be one of "
                                 f"{', '.join(levels)}.")


def _proxy_fix(app: Flask) -> None:
    """Behind PROXY_FIX_HOPS reverse proxies, believe exactly that many X-Forwarded-For/-Proto/-Host/-Prefix
    values: the client's address (rate limits), https (HSTS, Secure cookies, https links), the public host and
    prefix. With 0 the headers are ignored, since any client could send them."""
    hops = app.config.get("PROXY_FIX_HOPS") or 0
    if not isinstance(hops, int) or hops < 0:
        raise ConfigurationError(f"PROXY_FIX_HOPS is {hops!r}: it must be the number of reverse proxies in front "
                                 "of Gambit (0 when there is none).")
    if hops:
        # mypy: Flask declares wsgi_app as a method; replacing it with middleware is Flask's documented way.
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops,  # type: ignore[method-assign]
                                x_prefix=hops)


def _error_message(app: Flask, exc, code: int, messages: dict[int, str]) -> str:
    """The sentence the error page (or the API's JSON) shows for an HTTP error with this code."""
    if isinstance(exc, CSRFError):
        return "The form expired or did not come from this site. Go back, reload the page and try again."
    if code == 413:
        return (f"The upload is larger than the limit of {app.config['MAX_UPLOAD_MB']} MB. "
                "Go back and choose a smaller file.")
    if code in (400, 403, 404) and getattr(exc, "description", None) and \
            exc.description != type(exc).description:
        return exc.description  # a view said why (abort(403, description=...))
    return messages.get(code, "Error")


def _errors(app: Flask) -> None:
    messages = {
        400: "The request could not be understood.",
        403: "You do not have access to this page.",
        404: "There is no such page, or it is not yours to see.",
        405: "That action is not available here.",
        413: "The upload is too large.",
        422: "The request could not be processed.",
        429: "Too many attempts. Please wait a minute and try again.",
        500: "Something went wrong on our side. Nothing you entered was saved half-way; please try again.",
    }

    def handler(exc):
        code = getattr(exc, "code", 500) or 500
        message = _error_message(app, exc, code, messages)
        if code == 500:
            db.session.rollback()
            health = health_answer_after_failure()
            if health is not None:  # a hook before the health check broke: the check still answers, in JSON
                return health
        # RFC 9110: a 405 names the methods the resource has.
        headers = {"Allow": ", ".join(sorted(exc.valid_methods))} if code == 405 and getattr(
            exc, "valid_methods", None) else {}
        if request.path.startswith("/api/") or request.path in HEALTH_PATHS:
            return jsonify({"error": message, "status": code}), code, headers
        return render_template("error.html", code=code, message=message), code, headers

    for code in messages:
        app.register_error_handler(code, handler)

    def unavailable(exc):
        """The database refused, cut or is locked past its timeout, or the upload folder refused a file: a 503
        saying nothing was saved (the transaction is rolled back, and with it any file it stored; SQLAlchemy has
        invalidated a cut connection, so the pool hands out a new one next time). Another database error is a
        bug: re-raised, it becomes the 500 page."""
        message = str(exc) if isinstance(exc, StorageError) else unavailable_message(exc)
        if message is None:
            raise exc
        try:
            db.session.rollback()
        except SQLAlchemyError:
            db.session.remove()
        app.logger.warning("503 on %s %s: %s", request.method, request.path, exc.__class__.__name__,
                           exc_info=not isinstance(exc, StorageError))
        # The health checks answer JSON, theirs, also when loading the caller's user failed before them: a probe
        # or a monitor reads their body, and /readyz still says which other parts are ready.
        health = health_answer_after_failure()
        if health is not None:
            return health
        if request.path.startswith("/api/"):
            return jsonify({"error": message, "status": 503}), 503
        # Shown as to someone logged out: loading the logged-in user (or reading the row the rollback expired)
        # would need the database that just failed. Flask-Login keeps the request's user in g._login_user.
        g._login_user = AnonymousUserMixin()
        return render_template("error.html", code=503, message=message), 503

    for exc_class in (DBAPIError, StorageError):
        app.register_error_handler(exc_class, unavailable)
