"""The second step of signing in, enrolment (forced for the roles that require it, chosen for the others), the
account's authenticator app, recovery codes and passkeys, and the secretariat's reset."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from flask import abort, current_app, flash, jsonify, redirect, render_template, request, session, url_for
from flask_login import current_user, login_required
from sqlalchemy import select
from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url, parse_authentication_credential_json
from webauthn.helpers.exceptions import InvalidAuthenticationResponse, InvalidJSONStructure, InvalidRegistrationResponse
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from accounts import services, two_factor
from accounts.forms import PasskeyNameForm, RemoveTotpForm, SecondFactorForm, TotpSetupForm
from accounts.models import Passkey, User
from accounts.views import _account_page, bp, finish_pending, pending_user, required_roles
from core.auth import Role, roles_required
from core.db import db, utcnow
from core.limiter import rate_limited

SETUP_SECRET = "totp_setup"
REGISTER_CHALLENGE = "webauthn_register"
LOGIN_CHALLENGE = "webauthn_login"


def _policy() -> two_factor.Policy:
    return two_factor.policy_from(current_app.config)


def _expired():
    flash("Your sign-in waited too long for its second step, or the account changed meanwhile: enter your password "
          "again.", "info")
    return redirect(url_for("accounts.login"))


def _contact() -> str:
    return current_app.config["SECRETARIAT_CONTACT"]


# ------------------------------------------------------------------------------------------------ the second step


@bp.route("/login/second-factor", methods=["GET", "POST"])
@rate_limited("accounts.second_factor", "TWO_FACTOR_RATE_LIMIT")
def second_factor():
    user = pending_user()
    if user is None:
        return _expired()
    if not two_factor.has_second_factor(user):
        return redirect(url_for("accounts.second_factor_setup"))
    form = SecondFactorForm()
    if form.validate_on_submit():
        now = utcnow()
        try:
            kind = two_factor.verify_code(user, form.code.data, policy=_policy(), now=now)
        except two_factor.TwoFactorError as exc:
            db.session.commit()  # the wrong code counts, and the lock it may have led to holds
            form.code.errors.append(str(exc))
        else:
            services.record_login(user, now=now, second_factor=kind)
            db.session.commit()
            target = finish_pending(user, factor=kind)
            if kind == "recovery":
                left = two_factor.recovery_codes_left(user)
                flash(f"You signed in with a recovery code; it cannot be used again. {left} recovery code"
                      f"{'' if left == 1 else 's'} left: make new ones on your account page if you are running "
                      "out.", "info")
            flash(f"Logged in as {user.email}.", "success")
            return redirect(target)
    return render_template("accounts/second_factor.html", form=form, account=user, contact=_contact(),
                           has_totp=two_factor.has_totp(user),
                           has_passkeys=bool(two_factor.passkeys_of(user))), \
        200 if request.method == "GET" else 422


def _setup_secret() -> str:
    """The secret of the authenticator app being set up, kept sealed in the session until a code proves it."""
    key = current_app.config["TWO_FACTOR_KEY"]
    sealed = session.get(SETUP_SECRET)
    if isinstance(sealed, str):
        try:
            return two_factor.unseal(sealed, key)
        except two_factor.TwoFactorError:
            pass
    secret = two_factor.new_totp_secret()
    session[SETUP_SECRET] = two_factor.seal(secret, key)
    return secret


def _setup_page(user: User, form, *, forced: bool, status: int):
    secret = _setup_secret()
    uri = two_factor.provisioning_uri(secret, user.email)
    return render_template("accounts/totp_setup.html", form=form, account=user, forced=forced, secret=secret,
                           by_role=two_factor.required_by_role(user, required_roles()),
                           qr=two_factor.qr_svg(uri), passkey_form=PasskeyNameForm(), contact=_contact()), status


@bp.route("/login/second-factor/setup", methods=["GET", "POST"])
@rate_limited("accounts.second_factor_setup", "TWO_FACTOR_RATE_LIMIT")
def second_factor_setup():
    """The first sign-in of a role that requires a second factor: enrol one before anything else."""
    user = pending_user()
    if user is None:
        return _expired()
    if two_factor.has_second_factor(user):
        return redirect(url_for("accounts.second_factor"))
    form = TotpSetupForm()
    if form.validate_on_submit():
        now = utcnow()
        try:
            codes = two_factor.enrol_totp(user, secret=_setup_secret(), code=form.code.data, policy=_policy(),
                                          actor=user, now=now)
        except services.AccountError as exc:
            db.session.rollback()
            form.code.errors.append(str(exc))
        else:
            services.record_login(user, now=now, second_factor="totp")
            db.session.commit()
            target = finish_pending(user, factor="totp")
            return render_template("accounts/recovery_codes.html", codes=codes, next_url=target)
    return _setup_page(user, form, forced=True, status=200 if request.method == "GET" else 422)


# ------------------------------------------------------------------------------------------------ the account


@bp.route("/account/two-factor", methods=["GET", "POST"])
@login_required
def enrol_totp():
    user = current_user._get_current_object()
    if two_factor.has_totp(user):
        flash("Your authenticator app is set up already; remove it first to set up another.", "info")
        return redirect(url_for("accounts.account"))
    form = TotpSetupForm()
    if form.validate_on_submit():
        try:
            codes = two_factor.enrol_totp(user, secret=_setup_secret(), code=form.code.data, policy=_policy(),
                                          actor=user, now=utcnow())
        except services.AccountError as exc:
            db.session.rollback()
            form.code.errors.append(str(exc))
        else:
            db.session.commit()
            session.pop(SETUP_SECRET, None)
            session["second_factor"] = "totp"
            return render_template("accounts/recovery_codes.html", codes=codes, next_url=url_for("accounts.account"))
    return _setup_page(user, form, forced=False, status=200 if request.method == "GET" else 422)


@bp.route("/account/two-factor/remove", methods=["POST"])
@rate_limited("accounts.remove_totp", "PASSWORD_CHANGE_RATE_LIMIT")
@login_required
def remove_totp():
    user = current_user._get_current_object()
    form = RemoveTotpForm()
    if form.validate_on_submit():
        try:
            two_factor.remove_totp(user, password=form.password.data, required=required_roles(), actor=user,
                                   now=utcnow())
        except services.AccountError as exc:
            db.session.rollback()
            form.password.errors.append(str(exc))
        else:
            db.session.commit()
            flash("The authenticator app is removed from your account.", "success")
            return redirect(url_for("accounts.account"))
    return _account_page(remove_totp_form=form, status=422)


@bp.route("/account/recovery-codes", methods=["POST"])
@login_required
def new_recovery_codes():
    user = current_user._get_current_object()
    if not two_factor.has_second_factor(user):
        flash("Set up an authenticator app or a passkey first: recovery codes stand in for a second factor.", "error")
        return redirect(url_for("accounts.account"))
    codes = two_factor.new_recovery_codes(user, actor=user, now=utcnow())
    db.session.commit()
    return render_template("accounts/recovery_codes.html", codes=codes, next_url=url_for("accounts.account"))


@bp.route("/account/passkeys/<int:passkey_id>/remove", methods=["POST"])
@login_required
def remove_passkey(passkey_id: int):
    user = current_user._get_current_object()
    try:
        row = two_factor.remove_passkey(user, passkey_id, required=required_roles(), actor=user, now=utcnow())
    except services.AccountError as exc:
        db.session.rollback()
        flash(str(exc), "error")
    else:
        db.session.commit()
        flash(f"The passkey “{row.name}” is removed: it no longer signs in to your account.", "success")
    return redirect(url_for("accounts.account"))


# ------------------------------------------------------------------------------------------------ the secretariat


@bp.route("/admin/users/<int:user_id>/two-factor/reset", methods=["POST"])
@roles_required(Role.ADMIN)
def reset_two_factor(user_id: int):
    user = db.session.get(User, user_id) or abort(404)
    if request.form.get("confirm") != "reset":
        flash(f"Nothing changed for {user.email}: confirm the reset of the second factor with its button.", "error")
        return redirect(url_for("accounts.edit_user", user_id=user_id))
    try:
        two_factor.reset(user, actor=current_user, now=utcnow())
    except services.AccountError as exc:
        db.session.rollback()
        flash(str(exc), "error")
    else:
        db.session.commit()
        flash(f"The second factor of {user.email} is reset and their sessions have ended: they set up a new one "
              "when they next sign in.", "success")
    return redirect(url_for("accounts.edit_user", user_id=user_id))


@bp.route("/admin/users/<int:user_id>/two-factor/require", methods=["POST"])
@roles_required(Role.ADMIN)
def require_two_factor(user_id: int):
    """Require a second factor of this person, or (required=off) lift it: two_factor.set_required, as the CLI."""
    user = db.session.get(User, user_id) or abort(404)
    choice = request.form.get("required")
    if choice not in ("on", "off"):
        flash(f"Nothing changed for {user.email}: use the button “Require a second factor for this person” or “No "
              "longer require it”.", "error")
        return redirect(url_for("accounts.edit_user", user_id=user_id))
    try:
        done = two_factor.set_required(user, choice == "on", required=required_roles(), actor=current_user,
                                       now=utcnow())
    except services.AccountError as exc:
        db.session.rollback()
        flash(str(exc), "error")
    else:
        db.session.commit()
        flash(done, "success")
    return redirect(url_for("accounts.edit_user", user_id=user_id))


# ------------------------------------------------------------------------------------------------ passkeys (WebAuthn)


def _relying_party() -> tuple[str, str]:
    """(RP id, origin): BASE_URL's host and origin when set, else the request's."""
    base = current_app.config.get("BASE_URL") or request.host_url
    parts = urlsplit(base)
    return parts.hostname or "", f"{parts.scheme}://{parts.netloc}"


def _json_error(message: str, status: int = 422):
    return jsonify({"error": message}), status


def _credential_payload() -> dict:
    data = request.get_json(silent=True)
    return data if isinstance(data, dict) else {}


def _enrolling_user() -> tuple[User | None, bool]:
    """The signed-in user, or the person half signed in whose role requires a factor they have not enrolled."""
    if current_user.is_authenticated:
        return current_user._get_current_object(), False
    user = pending_user()
    if user is not None and not two_factor.has_second_factor(user):
        return user, True
    return None, False


@bp.route("/passkeys/register/options", methods=["POST"])
@rate_limited("accounts.passkey_register_options", "TWO_FACTOR_RATE_LIMIT")
def passkey_register_options():
    user, _pending = _enrolling_user()
    if user is None:
        return _json_error("Sign in first, then add a passkey.", 401)
    rp_id, _origin = _relying_party()
    options = generate_registration_options(
        rp_id=rp_id, rp_name="Gambit", user_name=user.email, user_id=str(user.id).encode(),
        user_display_name=user.name,
        exclude_credentials=[PublicKeyCredentialDescriptor(id=base64url_to_bytes(p.credential_id))
                             for p in two_factor.passkeys_of(user)],
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.DISCOURAGED,
            user_verification=UserVerificationRequirement.PREFERRED))
    session[REGISTER_CHALLENGE] = bytes_to_base64url(options.challenge)
    return current_app.response_class(options_to_json(options), mimetype="application/json")


@bp.route("/passkeys/register", methods=["POST"])
@rate_limited("accounts.passkey_register", "TWO_FACTOR_RATE_LIMIT")
def passkey_register():
    user, pending = _enrolling_user()
    if user is None:
        return _json_error("Sign in first, then add a passkey.", 401)
    challenge = session.pop(REGISTER_CHALLENGE, None)
    payload = _credential_payload()
    if not isinstance(challenge, str):
        return _json_error("Start again: the browser's answer came without a request for it from this page.")
    rp_id, origin = _relying_party()
    try:
        verified = verify_registration_response(credential=json.dumps(payload.get("credential")),
                                                expected_challenge=base64url_to_bytes(challenge),
                                                expected_rp_id=rp_id, expected_origin=origin)
    except (InvalidRegistrationResponse, InvalidJSONStructure, ValueError, TypeError, KeyError) as exc:
        return _json_error(f"The passkey could not be registered: {exc}")
    now = utcnow()
    raw_name = payload.get("name")
    name = raw_name if isinstance(raw_name, str) else ""
    try:
        two_factor.add_passkey(user, name=name, credential_id=bytes_to_base64url(verified.credential_id),
                               public_key=bytes_to_base64url(verified.credential_public_key),
                               sign_count=verified.sign_count, actor=user, now=now)
    except services.AccountError as exc:
        db.session.rollback()
        return _json_error(str(exc))
    if pending:
        services.record_login(user, now=now, second_factor="passkey")
        db.session.commit()
        target = finish_pending(user, factor="passkey")
        flash("Your passkey is registered and you are signed in. Make recovery codes on your account page, in case "
              "you lose the key.", "success")
        return jsonify({"redirect": target})
    db.session.commit()
    if session.get("second_factor", "none") == "none":
        session["second_factor"] = "passkey"
    flash(f"The passkey “{' '.join(name.split())}” is registered: it signs in to your account.", "success")
    return jsonify({"redirect": url_for("accounts.account")})


@bp.route("/login/passkey/options", methods=["POST"])
@rate_limited("accounts.passkey_login_options", "TWO_FACTOR_RATE_LIMIT")
def passkey_login_options():
    user = pending_user()
    if user is None:
        return _json_error("Enter your password again: this sign-in has expired.", 401)
    keys = two_factor.passkeys_of(user)
    if not keys:
        return _json_error("This account has no passkey: enter a code instead.")
    rp_id, _origin = _relying_party()
    options = generate_authentication_options(
        rp_id=rp_id, allow_credentials=[PublicKeyCredentialDescriptor(id=base64url_to_bytes(p.credential_id))
                                        for p in keys],
        user_verification=UserVerificationRequirement.PREFERRED)
    session[LOGIN_CHALLENGE] = bytes_to_base64url(options.challenge)
    return current_app.response_class(options_to_json(options), mimetype="application/json")


@bp.route("/login/passkey", methods=["POST"])
@rate_limited("accounts.passkey_login", "TWO_FACTOR_RATE_LIMIT")
def passkey_login():
    user = pending_user()
    if user is None:
        return _json_error("Enter your password again: this sign-in has expired.", 401)
    now, policy = utcnow(), _policy()
    try:
        two_factor.check_not_locked(user, policy=policy, now=now)
    except two_factor.TwoFactorError as exc:
        return _json_error(str(exc), 429)
    challenge = session.pop(LOGIN_CHALLENGE, None)
    if not isinstance(challenge, str):
        return _json_error("Start again: the browser's answer came without a request for it from this page.")
    payload = _credential_payload()
    rp_id, origin = _relying_party()
    try:
        credential = parse_authentication_credential_json(json.dumps(payload.get("credential")))
        row = db.session.scalars(select(Passkey).where(
            Passkey.credential_id == bytes_to_base64url(credential.raw_id), Passkey.user_id == user.id)).first()
        if row is None:
            raise InvalidAuthenticationResponse("this key is not one of the account's passkeys")
        verified = verify_authentication_response(credential=credential, expected_challenge=base64url_to_bytes(
            challenge), expected_rp_id=rp_id, expected_origin=origin,
            credential_public_key=base64url_to_bytes(row.public_key), credential_current_sign_count=row.sign_count)
    except (InvalidAuthenticationResponse, InvalidJSONStructure, ValueError, TypeError, KeyError) as exc:
        error = two_factor.record_failure(user, None, f"The passkey did not sign in ({exc}).", policy=policy,
                                          now=now)
        db.session.commit()
        return _json_error(str(error))
    two_factor.passkey_used(row, sign_count=verified.new_sign_count, now=now)
    services.record_login(user, now=now, second_factor="passkey")
    db.session.commit()
    target = finish_pending(user, factor="passkey")
    flash(f"Logged in as {user.email}.", "success")
    return jsonify({"redirect": target})
