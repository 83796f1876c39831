"""Register, log in and out, the account page, and the admin's user management."""

from __future__ import annotations

from datetime import datetime, timedelta

from flask import Blueprint, abort, current_app, flash, g, redirect, render_template, request, session, url_for
from flask_login import current_user, login_required, login_user, logout_user
from sqlalchemy import select
from sqlalchemy.exc import OperationalError

from accounts import queries, services, two_factor
from accounts.forms import (
    ChangePasswordForm,
    EmptyForm,
    ForgotPasswordForm,
    LoginForm,
    PasskeyNameForm,
    RegistrationForm,
    RemoveTotpForm,
    ResetPasswordForm,
    UserEditForm,
    UserForm,
)
from accounts.models import User, UserRole
from accounts.rules import ENDED_BY_SECRETARIAT, SIGNED_OUT_ELSEWHERE, normalise_email
from core.auth import Role, login_manager, roles_required
from core.bare import is_bare, session_limit
from core.db import db, reads_first, utcnow, writes_on_get, writing
from core.limiter import hit_limit, rate_limited
from core.urls import external_url, path_for, safe_next
from evidence.audit_views import (
    pages_of,
    register_audit_actions,
    register_audit_link,
    register_audit_people,
    register_audit_sign_ins,
)
from operations import outbox
from operations.health_views import HEALTH_PATHS

bp = Blueprint("accounts", __name__)


@login_manager.user_loader
def _load_user(session_id: str):
    found = services.load_session_user(session_id, session.get("sid"))
    # The request check below reads why a session was refused, and the pages which row is this session.
    g.session_refused, g.user_session = found.refused, found.row if found.user is not None else None
    return found.user


def _min_length() -> int:
    return current_app.config["PASSWORD_MIN_LENGTH"]


@bp.before_app_request
def _enforce_session_timeouts():
    """Idle and absolute timeouts from the settings, checked on the server for every request."""
    # A bare route (core.bare) has no session: its user is not loaded (no query), nothing is written to its cookie.
    if request.endpoint == "static" or is_bare(request):
        return None
    now = utcnow()
    ref, noted = session.get("sid"), session.get("sid_noted_at")
    if ref and (noted is None or now - datetime.fromisoformat(noted) >= services.SEEN_GRANULARITY):
        _note_session_seen(ref, now)
    if not current_user.is_authenticated:
        refused = g.get("session_refused")
        if refused is None:
            return None
        # The session's row is ended (signed out from another device, by the secretariat, ...) or missing (a cookie
        # from before the sessions were listed): the browser is told why, and logs in again.
        session.clear()
        if request.path in HEALTH_PATHS:
            return None
        flash(refused, "info")
        return redirect(url_for("accounts.login", next=request.full_path if request.method == "GET" else None))
    started = session.get("login_at")
    seen = session.get("seen_at")
    idle = timedelta(minutes=current_app.config["SESSION_IDLE_MINUTES"])
    absolute = session_limit(current_app.config)
    expired = (started is None or now - datetime.fromisoformat(started) > absolute
               or (seen is not None and now - datetime.fromisoformat(seen) > idle))
    # Flask-Login's "strong" protection drops a session presented from another browser or address, but not a
    # permanent one (it only marks it not fresh), and every session here is permanent: the check is made here.
    moved = (login_manager.session_protection == "strong"
             and session.get("_id") != login_manager._session_identifier_generator())
    if expired or moved:
        logout_user()
        session.clear()
        if request.path in HEALTH_PATHS:  # a probe reads JSON: the check answers as to a caller logged out
            return None
        flash("Your session has ended; please log in again." if expired else
              "Your session was presented by another browser or from another address, so it has ended; please "
              "log in again.", "info")
        return redirect(url_for("accounts.login", next=request.full_path if request.method == "GET" else None))
    session["seen_at"] = now.isoformat()
    return _second_factor_gate()


def required_roles() -> frozenset[Role]:
    """The roles that must sign in with a second factor (TWO_FACTOR_REQUIRED_ROLES, checked by create_app)."""
    return two_factor.parse_required_roles(current_app.config["TWO_FACTOR_REQUIRED_ROLES"])


def _second_factor_gate():
    """A session that did not pass a second factor ("none", or one from before second factors existed) ends when
    the person's role now requires one, or when they have one; such a person signs in again, with it."""
    mark = session.get("second_factor")
    if mark not in (None, "none") or request.path in HEALTH_PATHS:
        return None
    user = current_user._get_current_object()
    if two_factor.is_required(user, required_roles()) or (mark is None and two_factor.has_second_factor(user)):
        logout_user()
        session.clear()
        flash("Sign in again: your account now signs in with a second factor (an authenticator app or a passkey).",
              "info")
        return redirect(url_for("accounts.login", next=request.full_path if request.method == "GET" else None))
    session["second_factor"] = "none"
    return None


def _note_session_seen(ref: str, now: datetime) -> None:
    """Write the session's last activity (at most once a minute, services.SEEN_GRANULARITY), in a short writing
    transaction of its own before the request reads anything. A database too busy to take it loses only that note."""
    db.session.commit()  # nothing is pending at the start of a request: this only ends a reading transaction
    try:
        with writing():
            services.note_session_seen(ref, now=now)
            db.session.commit()
    except OperationalError:
        db.session.rollback()
        return
    session["sid_noted_at"] = now.isoformat()


def _start_session(user: User, *, second_factor: str = "none") -> None:
    """Sign the user in. `second_factor`: how the sign-in was completed ("totp", "recovery", "passkey"), or
    "none" when it needed no second step."""
    # A new session on login: nothing from before the login (a fixed session id, a stale form) carries over.
    replaces = session.get("sid")
    session.clear()
    now = utcnow()
    db.session.commit()  # the caller committed its change; its reading transaction, if any, ends here
    with writing():
        ref = services.start_session(user, now=now, user_agent=request.user_agent.string,
                                     address=request.remote_addr or "", replaces=replaces)
        db.session.commit()
    login_user(user)
    session["sid"] = ref
    session["login_at"] = session["seen_at"] = session["sid_noted_at"] = now.isoformat()
    session["second_factor"] = second_factor
    # Permanent, so that the cookie carries an expiry: the session's limit (core.bare.SessionInterface), no more.
    session.permanent = True


@bp.route("/register", methods=["GET", "POST"])
@rate_limited("accounts.register", "REGISTER_RATE_LIMIT")
def register():
    if current_user.is_authenticated:
        return redirect(url_for("core.home"))
    form = RegistrationForm(min_password_length=_min_length())
    if form.validate_on_submit():
        now = utcnow()
        try:
            user, created = services.register_bidder(
                email=form.email.data, password=form.password.data, name=form.name.data,
                organisation=form.organisation.data, applicant_type=form.applicant_type.data,
                federation=form.federation.data, now=now, min_password_length=_min_length(),
                confirm_window=_confirm_window())
        except services.AccountError as exc:
            db.session.rollback()
            form[exc.field or "email"].errors.append(str(exc))
        else:
            _registration_mail(user, created, now)  # in the registration's transaction: it commits with it
            db.session.commit()
            # The same answer whether the address was free or taken: only its owner learns which, by email.
            flash(_registered_message(user.email), "info")
            return redirect(url_for("core.home"))
    return render_template("accounts/register.html", form=form), 200 if request.method == "GET" else 422


def _registered_message(email: str) -> str:
    """What the page says after a registration, true of a free and of a taken address alike. With mail off
    (MAIL_ENABLED unset) the message waits in the outbox: the page says so, and who can open the account meanwhile."""
    if current_app.config.get("MAIL_ENABLED"):
        return (f"Check your email: we sent a message to {email}. Follow the link in it to confirm the address and "
                "open your account.")
    return (f"Your registration is received. This site is not sending email at the moment: the message to {email} "
            "with the link that confirms the address will be sent when mail is available. Meanwhile the FIDE "
            "secretariat can confirm your account; you can log in once it is confirmed.")


def _confirm_window() -> timedelta:
    return timedelta(hours=current_app.config["CONFIRM_EMAIL_HOURS"])


def _registration_mail(user: User, created: bool, now) -> None:
    """The confirmation link to a new address, a note to the owner of a taken one, written into the outbox (the
    secretariat sees there whether it went out); the page does not differ between the two."""
    hours = current_app.config["CONFIRM_EMAIL_HOURS"]
    if created:
        link = external_url("accounts.confirm_email", token=services.confirmation_token(
            user, secret=current_app.config["SECRET_KEY"]))
        subject = "Confirm your address to open your Gambit account"
        body = (f"Hello {user.name},\n\nSomeone, we hope you, registered {user.organisation} to bid in Gambit with "
                f"this address. To confirm it and open the account, follow this link within {hours} hours:\n\n"
                f"{link}\n\nIf you did not register, ignore this message: no account opens without the link.\n")
    else:
        link = external_url("accounts.login")
        subject = "Someone tried to register with your address"
        body = (f"Hello {user.name},\n\nSomeone tried to register a new Gambit account with your address, which "
                f"already has one. Nothing was changed.\n\nIf it was you, log in with your account instead: {link}"
                f"\nIf you never confirmed it, the link in the first email works for {hours} hours after you "
                "registered; after that you may register again.\n\nIf it was not you, you need do nothing.\n")
    outbox.queue(user.email, subject, body, kind="account.confirm" if created else "account.taken", now=now,
                 about=outbox.About("user", user.id, user.email, path_for("accounts.edit_user", user_id=user.id)),
                 user_id=user.id)


@bp.route("/register/confirm/<token>")
@writes_on_get
def confirm_email(token: str):
    if current_user.is_authenticated:
        return redirect(url_for("core.home"))
    try:
        user = services.confirm_email(token, secret=current_app.config["SECRET_KEY"], max_age=_confirm_window(),
                                      now=utcnow())
    except services.AccountError as exc:
        db.session.rollback()
        return render_template("error.html", code=400, message=str(exc)), 400
    db.session.commit()
    _start_session(user)
    flash(f"Welcome, {user.name}. Your address is confirmed and your account for {user.organisation} is ready: you "
          "can now bid.", "success")
    return redirect(url_for("core.home"))


@bp.route("/login", methods=["GET", "POST"])
@rate_limited("accounts.login", "LOGIN_RATE_LIMIT")
@reads_first
def login():
    form = LoginForm()
    if form.validate_on_submit():
        # The password is verified in a reading transaction (no write lock on SQLite: argon2 takes ~0.5 s of CPU,
        # and every other writer would wait for it); only the login's record takes the lock, briefly.
        user, new_hash = services.authenticate(form.email.data, form.password.data)
        user_id = user.id if user is not None else None
        verified = user.password_hash if user is not None else None
        step = _second_step(user) if user is not None else None
        db.session.commit()  # ends the reading transaction: nothing was written
        if user_id is not None:
            with writing():
                user = db.session.get(User, user_id)
                # The account may have changed since the password was checked (new password, deactivated, gone).
                if user is None or not services.record_login(user, now=utcnow(), new_hash=new_hash,
                                                             verified_hash=verified, record=step is None):
                    user = None
                db.session.commit()
        if user is None:
            form.password.errors.append("That email and password do not match an active account.")
        elif step is not None:
            # The password is right; the session holds only who is half signed in, until the second step.
            start_pending(user, next_url=safe_next(request.args.get("next")))
            return redirect(url_for(step))
        else:
            _start_session(user)
            flash(f"Logged in as {user.email}.", "success")
            return redirect(safe_next(request.args.get("next")) or url_for("core.home"))
    status = 200 if request.method == "GET" else 422
    return render_template("accounts/login.html", form=form, required=required_roles(),
                           production=current_app.config.get("GAMBIT_ENV") == "production"), status


def _second_step(user: User) -> str | None:
    """The page of the second step this sign-in needs (the code, or the forced enrolment), or None."""
    if two_factor.has_second_factor(user):
        return "accounts.second_factor"
    if two_factor.is_required(user, required_roles()):
        return "accounts.second_factor_setup"
    return None


PENDING = "two_factor_pending"


def start_pending(user: User, *, next_url: str | None) -> None:
    """Half signed in: the password was right; the session names the person (and the nonce of their sessions, so
    a password changed meanwhile ends it) and when, and nothing else, until the second step."""
    session.clear()
    session[PENDING] = {"user": user.id, "nonce": user.session_nonce, "at": utcnow().isoformat(),
                        "next": next_url or ""}


def pending_user() -> User | None:
    """The person half signed in in this session, while TWO_FACTOR_PENDING_MINUTES last, else None."""
    data = session.get(PENDING)
    if not isinstance(data, dict):
        return None
    try:
        started = datetime.fromisoformat(data["at"])
        user = db.session.get(User, int(data["user"]))
    except (KeyError, TypeError, ValueError):
        session.pop(PENDING, None)
        return None
    window = timedelta(minutes=current_app.config["TWO_FACTOR_PENDING_MINUTES"])
    if (utcnow() - started > window or user is None or not user.active
            or not isinstance(data.get("nonce"), str) or data["nonce"] != user.session_nonce):
        session.pop(PENDING, None)
        return None
    return user


def finish_pending(user: User, *, factor: str) -> str:
    """Complete the sign-in after its second step (the caller has recorded it); returns where to go next."""
    next_url = (session.get(PENDING) or {}).get("next") or ""
    _start_session(user, second_factor=factor)
    return safe_next(next_url) or url_for("core.home")


def _reset_window() -> timedelta:
    return timedelta(hours=current_app.config["PASSWORD_RESET_HOURS"])


def _reset_sent_message(email: str) -> str:
    hours = current_app.config["PASSWORD_RESET_HOURS"]
    return (f"If {email} is the address of an active account, we have emailed it a link to set a new password. "
            f"The link works once, for {hours} hour{'' if hours == 1 else 's'}.")


@bp.route("/password/forgot", methods=["GET", "POST"])
@rate_limited("accounts.forgot_password", "PASSWORD_RESET_RATE_LIMIT")
def forgot_password():
    if current_user.is_authenticated:
        return redirect(url_for("accounts.account"))
    form = ForgotPasswordForm()
    if form.validate_on_submit():
        email = normalise_email(form.email.data)
        # Per address as well as per client: links sent to one mailbox from many clients stay few.
        if not hit_limit("password-reset-address", email, current_app.config["PASSWORD_RESET_ADDRESS_RATE_LIMIT"]):
            abort(429)
        now = utcnow()
        user = services.request_password_reset(email, now=now)
        if user is not None:
            _password_reset_mail(user, now)  # in the request's transaction: it commits with it
        db.session.commit()
        # The same answer whether or not the address has an account: only its owner learns which, by email.
        flash(_reset_sent_message(email), "info")
        return redirect(url_for("accounts.login"))
    return render_template("accounts/forgot_password.html", form=form,
                           hours=current_app.config["PASSWORD_RESET_HOURS"]), \
        200 if request.method == "GET" else 422


def _password_reset_mail(user: User, now) -> None:
    hours = current_app.config["PASSWORD_RESET_HOURS"]
    link = external_url("accounts.reset_password", token=services.password_reset_token(
        user, secret=current_app.config["SECRET_KEY"], now=now))
    body = (f"Hello {user.name},\n\nSomeone, we hope you, asked to set a new password for your Gambit account. To "
            f"choose one, follow this link within {hours} hour{'' if hours == 1 else 's'}; it works once:\n\n"
            f"{link}\n\nSetting the password logs the account out everywhere and revokes its API tokens.\n\n"
            "If you did not ask, ignore this message: your password stays as it is.\n")
    outbox.queue(user.email, "Set a new password for your Gambit account", body, kind="account.password_reset",
                 now=now, about=outbox.About("user", user.id, user.email,
                                             path_for("accounts.edit_user", user_id=user.id)),
                 user_id=user.id)


@bp.route("/password/reset/<token>", methods=["GET", "POST"])
@rate_limited("accounts.reset_password", "PASSWORD_RESET_RATE_LIMIT")
def reset_password(token: str):
    secret, window = current_app.config["SECRET_KEY"], _reset_window()
    try:
        account = services.user_for_reset_token(token, secret=secret, max_age=window, now=utcnow())
    except services.AccountError as exc:
        db.session.rollback()
        return render_template("accounts/reset_password.html", problem=str(exc), form=None, account=None), 400
    form = ResetPasswordForm(min_password_length=_min_length(), email=account.email)
    form.new_password.description = f"At least {_min_length()} characters, not a common password."
    if form.validate_on_submit():
        try:
            services.reset_password(token, new=form.new_password.data, secret=secret, max_age=window, now=utcnow(),
                                    min_password_length=_min_length())
        except services.AccountError as exc:
            db.session.rollback()
            if exc.field is None:
                return render_template("accounts/reset_password.html", problem=str(exc), form=None,
                                       account=None), 400
            form[exc.field].errors.append(str(exc))
        else:
            db.session.commit()
            # Whoever was signed in in this browser (this account, whose sessions have ended, or another) is not
            # any more: the new password is used to log in.
            logout_user()
            session.clear()
            flash("Your new password is set. Log in with it: every session of the account has ended and its API "
                  "tokens are revoked.", "success")
            return redirect(url_for("accounts.login"))
    status = 200 if request.method == "GET" else 422
    return render_template("accounts/reset_password.html", problem=None, form=form, account=account), status


@bp.route("/logout", methods=["POST"])
@login_required
def logout():
    revoked = services.log_out(current_user._get_current_object(), actor=current_user, now=utcnow())
    db.session.commit()
    logout_user()
    session.clear()
    flash("You are logged out." + (f" Your {revoked} API token(s) are revoked." if revoked else ""), "info")
    return redirect(url_for("core.home"))


def _password_form() -> ChangePasswordForm:
    return ChangePasswordForm(min_password_length=_min_length(), email=current_user.email)


def _live_sessions(user: User, now: datetime):
    return services.live_sessions(user, now=now, idle=timedelta(minutes=current_app.config["SESSION_IDLE_MINUTES"]),
                                  absolute=session_limit(current_app.config))


def _current_session_id() -> int | None:
    row = g.get("user_session")
    return row.id if row is not None else None


def _account_page(password_form=None, token=None, status=200, remove_totp_form=None, passkey_form=None):
    user = current_user._get_current_object()
    now = utcnow()
    return render_template("accounts/account.html", password_form=password_form or _password_form(),
                           token_form=EmptyForm(), token=token, tokens=services.tokens_of(user),
                           sessions=_live_sessions(user, now), current_session=_current_session_id(),
                           now=now,
                           remove_totp_form=remove_totp_form or RemoveTotpForm(),
                           passkey_form=passkey_form or PasskeyNameForm(),
                           has_totp=two_factor.has_totp(user), passkeys=two_factor.passkeys_of(user),
                           codes_left=two_factor.recovery_codes_left(user),
                           factor_required=two_factor.is_required(user, required_roles()),
                           factor_by_role=two_factor.required_by_role(user, required_roles())), status


@bp.route("/account", methods=["GET"])
@login_required
def account():
    return _account_page()


@bp.route("/account/password", methods=["POST"])
@rate_limited("accounts.change_password", "PASSWORD_CHANGE_RATE_LIMIT")
@login_required
def change_password():
    form = _password_form()
    if form.validate_on_submit():
        user = current_user._get_current_object()
        try:
            services.change_password(user, current=form.current_password.data, new=form.new_password.data,
                                     actor=user, now=utcnow(), min_password_length=_min_length())
        except services.AccountError as exc:
            form[exc.field].errors.append(str(exc))
        else:
            db.session.commit()
            # Every other session has ended; this one carries on under the new nonce.
            _start_session(user, second_factor=session.get("second_factor", "none"))
            flash("Your password is changed. Your other sessions have been logged out and your API tokens "
                  "revoked.", "success")
            return redirect(url_for("accounts.account"))
    return _account_page(password_form=form, status=422)


@bp.route("/account/token", methods=["POST"])
@rate_limited("accounts.new_token", "TOKEN_RATE_LIMIT")
@login_required
def new_token():
    if session.get("second_factor", "none") == "none" and two_factor.has_second_factor(current_user):
        # A token opens the API without a second step: it is made only in a session that passed one.
        flash("Sign out and in again with your second factor to make an API token: this session was opened "
              "without it.", "error")
        return redirect(url_for("accounts.account"))
    token = services.issue_api_token(current_user._get_current_object(), actor=current_user, now=utcnow())
    db.session.commit()
    return _account_page(token=token)


@bp.route("/account/tokens/<int:token_id>/revoke", methods=["POST"])
@login_required
def revoke_token(token_id: int):
    user = current_user._get_current_object()
    try:
        row = services.revoke_token(user, token_id, actor=user, now=utcnow())
    except services.AccountError as exc:
        db.session.rollback()
        flash(str(exc), "error")
    else:
        db.session.commit()
        flash(f"API token {row.id} is revoked: it no longer opens the API.", "success")
    return redirect(url_for("accounts.account"))


@bp.route("/account/sessions/<int:session_id>/end", methods=["POST"])
@login_required
def end_session(session_id: int):
    user = current_user._get_current_object()
    try:
        row = services.end_session(user, session_id, current=_current_session_id(), actor=user, now=utcnow())
    except services.NoSuchSession:
        db.session.rollback()
        abort(404)
    except services.AccountError as exc:
        db.session.rollback()
        flash(str(exc), "error")
    else:
        db.session.commit()
        flash(f"The session of {row.browser} from {row.address or 'an unknown address'} is signed out: its next "
              "request goes to the login page.", "success")
    return redirect(url_for("accounts.account", _anchor="sessions"))


@bp.route("/account/sessions/end-others", methods=["POST"])
@login_required
def end_other_sessions():
    user = current_user._get_current_object()
    current = _current_session_id()
    if current is None:  # let in, so its row was found; kept for mypy and a request racing its own logout
        abort(409)
    count = services.end_sessions(user, actor=user, now=utcnow(), reason=SIGNED_OUT_ELSEWHERE, keep=current)
    db.session.commit()
    flash(f"Signed out everywhere else: {count} other session{'' if count == 1 else 's'} ended; this one carries on."
          if count else "You were signed in nowhere else: no other session to end.", "success" if count else "info")
    return redirect(url_for("accounts.account", _anchor="sessions"))


# ------------------------------------------------------------------------------------------------ admin

SORTS = {"email": User.email, "name": User.name, "created": User.created_at, "organisation": User.organisation}


@bp.route("/admin/users")
@roles_required(Role.ADMIN)
def users():
    sort = request.args.get("sort", "email")
    column = SORTS.get(sort, User.email)
    order = column.desc() if request.args.get("dir") == "desc" else column.asc()
    query = select(User).order_by(order, User.id)
    role = request.args.get("role")
    if role in {r.value for r in Role}:
        query = query.where(User.roles.any(UserRole.role == role))
    rows = db.session.scalars(query).all()
    return render_template("accounts/users.html", users=rows, sort=sort, dir=request.args.get("dir", "asc"),
                           role=role, roles=list(Role), action_form=EmptyForm())


@bp.route("/admin/users/new", methods=["GET", "POST"])
@roles_required(Role.ADMIN)
def new_user():
    form = UserForm()
    if form.validate_on_submit():
        try:
            user = services.create_user(
                email=form.email.data, password=form.password.data, name=form.name.data,
                organisation=form.organisation.data or "", federation=form.federation.data or None,
                roles=form.roles.data, is_president=form.is_president.data, actor=current_user, now=utcnow(),
                min_password_length=_min_length())
        except services.AccountError as exc:
            form[exc.field or "email"].errors.append(str(exc))
        else:
            db.session.commit()
            flash(f"Account {user.email} created ({user.role_labels}).", "success")
            return redirect(url_for("accounts.users"))
    # The edited account is `account`: `user` is the logged-in user the header shows (core.templating).
    return render_template("accounts/user_form.html", form=form, account=None), 200 if request.method == "GET" else 422


@bp.route("/admin/users/<int:user_id>", methods=["GET", "POST"])
@roles_required(Role.ADMIN)
def edit_user(user_id: int):
    user = db.session.get(User, user_id) or abort(404)
    # No obj=user: WTForms would read user.roles (UserRole rows, matching no choice) over `data` and show every
    # role unticked, so saving after ticking one more box would drop the roles the account already had.
    form = UserEditForm(data=None if request.method == "POST" else {
                            "roles": [r.value for r in user.role_set], "federation": user.federation or "",
                            "is_president": user.is_president})
    if form.validate_on_submit():
        try:
            services.update_roles(user, roles=form.roles.data, is_president=form.is_president.data,
                                  federation=form.federation.data or None, actor=current_user, now=utcnow())
        except services.AccountError as exc:
            form[exc.field or "roles"].errors.append(str(exc))
        else:
            db.session.commit()
            flash(f"Roles of {user.email} saved: {user.role_labels}.", "success")
            return redirect(url_for("accounts.users"))
    status = 200 if request.method == "GET" else 422
    return render_template("accounts/user_form.html", form=form, account=user, action_form=EmptyForm(),
                           messages=outbox.counts(user_id=user.id), second_factor=_factor_summary(user),
                           live_sessions=len(_live_sessions(user, utcnow()))), status


@bp.route("/admin/users/<int:user_id>/sessions/end", methods=["POST"])
@roles_required(Role.ADMIN)
def end_user_sessions(user_id: int):
    user = db.session.get(User, user_id) or abort(404)
    count = len(_live_sessions(user, utcnow()))
    services.end_sessions(user, actor=current_user, now=utcnow(), reason=ENDED_BY_SECRETARIAT)
    db.session.commit()
    flash(f"Every session of {user.email} has ended ({count} signed in): {user.name} must log in again.", "success")
    return redirect(url_for("accounts.edit_user", user_id=user_id))


def _factor_summary(user: User) -> dict:
    """What the secretariat's page of a person says of their second factor."""
    row = two_factor.factor_row(user)
    roles = required_roles()
    return {"required": two_factor.is_required(user, roles), "by_role": two_factor.required_by_role(user, roles),
            "by_person": user.two_factor_required, "totp": two_factor.has_totp(user),
            "passkeys": len(two_factor.passkeys_of(user)), "codes": two_factor.recovery_codes_left(user),
            "locked_until": row.locked_until if row is not None and row.locked_until is not None
            and row.locked_until > utcnow() else None}


@bp.route("/admin/users/<int:user_id>/active", methods=["POST"])
@roles_required(Role.ADMIN)
def set_active(user_id: int):
    user = db.session.get(User, user_id) or abort(404)
    # Only an explicit answer changes the account: a missing or unknown value (a hand-made request, a form that
    # lost its field) deactivates no one.
    value = request.form.get("active")
    if value not in ("0", "1"):
        flash(f"Nothing changed for {user.email}: say whether the account is to be active (1) or deactivated (0); "
              f"the request said “{value}”." if value is not None else
              f"Nothing changed for {user.email}: the request did not say whether the account is to be active or "
              "deactivated.", "error")
        return redirect(url_for("accounts.users"))
    make_active = value == "1"
    try:
        services.set_active(user, make_active, actor=current_user, now=utcnow())
    except services.AccountError as exc:
        flash(str(exc), "error")
        return redirect(url_for("accounts.users"))
    db.session.commit()
    flash(f"{user.email} is now {'active' if make_active else 'deactivated; its sessions have ended'}.", "success")
    return redirect(url_for("accounts.users"))


@bp.route("/admin/users/<int:user_id>/confirm", methods=["POST"])
@roles_required(Role.ADMIN)
def confirm_user(user_id: int):
    user = db.session.get(User, user_id) or abort(404)
    try:
        services.confirm_by_secretariat(user, actor=current_user, now=utcnow())
    except services.AccountError as exc:
        db.session.rollback()
        flash(str(exc), "error")
    else:
        db.session.commit()
        flash(f"{user.email} is confirmed and the account of {user.organisation or user.name} is open: "
              f"{user.name} can log in.", "success")
    return redirect(url_for("accounts.edit_user", user_id=user_id))


# ------------------------------------------------------------------------------------- the audit log's words

register_audit_link("User", pages_of(User, "accounts.edit_user", "user_id"))
register_audit_people("User", queries.names_of)
# A sign-in is recorded as user.login, a sign-out as the sessions it ended with the reason "logout" (services.log_out);
# the same action with another reason (a password changed, an account deactivated) is no sign-out and stays shown.
register_audit_sign_ins([("user.login", None), ("user.sessions_ended", {"reason": "logout"})])
register_audit_actions({
    "user.create": "created the account of {object}",
    "user.register_again": "registered again as {object}, an account already confirmed",
    "user.register_taken": "refused a registration with {email}, the address of {object}",
    "user.email_confirmed": "confirmed {email} as the address of {object}", "user.login": "signed in",
    "user.confirmed_by_secretariat": "confirmed {email} as the address of {object} for its owner, without the "
                                     "emailed link, and opened the account",
    "user.sessions_ended": "ended the sessions of {object} ({reason})",
    "user.session_ended": "signed out a session of {object} ({browser})",
    "user.activate": "activated the account of {object}", "user.deactivate": "deactivated the account of {object}",
    "user.roles": "changed the roles of {object}", "user.api_token": "issued an API token to {object}",
    "user.api_token_revoke": "revoked an API token of {object}",
    "user.api_tokens_revoked": "revoked every API token of {object} ({reason})",
    "user.password_reset_requested": "emailed {object} a link to set a new password",
    "user.password_reset": "set a new password for {object} with an emailed link",
    "user.two_factor_totp_enrolled": "set up an authenticator app as the second factor of {object}",
    "user.two_factor_totp_removed": "removed the authenticator app of {object}",
    "user.recovery_codes": "made {count} new recovery codes for {object}",
    "user.recovery_code_used": "signed in to {object} with a recovery code ({left} left)",
    "user.two_factor_locked": "locked the second step of signing in to {object} for {minutes} minutes after "
                              "too many wrong codes",
    "user.passkey_added": "added the passkey “{name}” to {object}",
    "user.passkey_removed": "removed the passkey “{name}” from {object}",
    "user.two_factor_reset": "reset the second factor of {object}: the authenticator app, the passkeys and "
                             "the recovery codes are removed, the sessions ended",
    "user.two_factor_required": "required a second factor of {object} at every sign-in, whatever their role",
    "user.two_factor_requirement_lifted": "lifted the second factor required of {object} (a role that requires one "
                                          "still does)"})
