"""`flask users create EMAIL --role wcoc [--role board] [--president] [--federation CHN]`; `flask users
two-factor-report`, `flask users two-factor-require EMAIL [--off]` and `flask users two-factor-reset EMAIL`."""

from __future__ import annotations

import secrets

import click
from flask import Blueprint, current_app

from accounts import services, two_factor
from core.auth import Role
from core.db import db, utcnow

cli = Blueprint("users_cli", __name__, cli_group="users")


@cli.cli.command("create")
@click.argument("email")
@click.option("--role", "roles", multiple=True, required=True, type=click.Choice([r.value for r in Role]),
              help="A role; repeat for several.")
@click.option("--president", is_flag=True, help="The FIDE President (needs --role board).")
@click.option("--federation", default=None, help="FIDE federation code, e.g. CHN.")
@click.option("--name", default=None, help="Display name (default: the part of the email before @).")
@click.option("--organisation", default="", help="Organisation.")
@click.option("--password", default=None, help="Password; by default one is generated and printed once.")
def create(email, roles, president, federation, name, organisation, password):
    """Create an account with the given roles."""
    generated = password is None
    if generated:
        password = secrets.token_urlsafe(15)
    try:
        user = services.create_user(email=email, password=password, name=name or email.split("@")[0],
                                    organisation=organisation, federation=federation, roles=list(roles),
                                    is_president=president, actor=None, now=utcnow(),
                                    min_password_length=current_app.config["PASSWORD_MIN_LENGTH"])
    except services.AccountError as exc:
        db.session.rollback()
        raise click.ClickException(str(exc)) from None
    db.session.commit()
    click.echo(f"created {user.email} ({user.role_labels})")
    if generated:
        click.echo(f"password (shown once): {password}")


def _required():
    return two_factor.parse_required_roles(current_app.config["TWO_FACTOR_REQUIRED_ROLES"])


@cli.cli.command("two-factor-report")
@click.option("--missing", is_flag=True, help="Only the accounts of whom a second factor is required and who lack one.")
def two_factor_report(missing):
    """Who must sign in with a second factor and why, who has one, and who is missing one.

    A second factor is required by role or of one person. Which roles require one is the setting
    TWO_FACTOR_REQUIRED_ROLES (comma-separated roles; unset: admin,board,wcoc in production, none elsewhere), read at
    start: change it in the environment and restart to require more. `flask users two-factor-require EMAIL` requires
    one of a person whatever their role. The third column says "required (role)", "required (set for them)", both,
    or "optional"."""
    required = _required()
    click.echo(f"roles that require a second factor: {', '.join(sorted(r.value for r in required)) or 'none'}")
    rows = two_factor.report(required)
    lacking = 0
    for user, why, app_set, keyed in rows:
        has = [name for name, present in (("authenticator app", app_set), ("passkey", keyed)) if present]
        if why and not has:
            lacking += 1
        elif missing:
            continue
        state = f"required ({why})" if why else "optional"
        click.echo(f"{user.email}\t{user.role_labels}\t{state}\t{', '.join(has) or 'none'}"
                   f"{chr(9) + 'MISSING' if why and not has else ''}")
    click.echo(f"{lacking} account(s) lack a second factor required of them; they set one up at their next sign-in.")


def _user_named(email: str):
    user = services.find_user_by_email(email)
    if user is None:
        raise click.ClickException(f"There is no account with the email “{email}”.")
    return user


@cli.cli.command("two-factor-require")
@click.argument("email")
@click.option("--off", is_flag=True, help="Lift the requirement set for this person (never their role's).")
def two_factor_require(email, off):
    """Require a second factor of one person, whatever their roles: a session they opened without one ends at its
    next request, they set one up at their next sign-in and cannot remove their last one. --off lifts it; a role
    that requires one (TWO_FACTOR_REQUIRED_ROLES) still does. Recorded in the audit log."""
    user = _user_named(email)
    try:
        done = two_factor.set_required(user, not off, required=_required(), actor=None, now=utcnow())
    except services.AccountError as exc:
        db.session.rollback()
        raise click.ClickException(str(exc)) from None
    db.session.commit()
    click.echo(done)


@cli.cli.command("two-factor-reset")
@click.argument("email")
def two_factor_reset(email):
    """Reset the second factor of a person who lost it (app, passkeys, recovery codes): their sessions end and they
    set up a new one at their next sign-in. Recorded in the audit log."""
    user = _user_named(email)
    try:
        two_factor.reset(user, actor=None, now=utcnow())
    except services.AccountError as exc:
        db.session.rollback()
        raise click.ClickException(str(exc)) from None
    db.session.commit()
    click.echo(f"reset the second factor of {user.email}: they set up a new one at their next sign-in")
