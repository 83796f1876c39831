"""`flask users create EMAIL --role wcoc [--role board] [--president] [--federation CHN]`; `flask users
two-factor-report` and `flask users two-factor-reset EMAIL`."""

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
@click.option("--missing", is_flag=True, help="Only the accounts whose role requires a second factor they lack.")
def two_factor_report(missing):
    """Who must sign in with a second factor, who has one, and who is missing one.

    Which roles require one is the setting TWO_FACTOR_REQUIRED_ROLES (comma-separated roles; unset: admin,board,wcoc
    in production, none elsewhere), read at start: change it in the environment and restart to require more."""
    required = _required()
    click.echo(f"roles that require a second factor: {', '.join(sorted(r.value for r in required)) or 'none'}")
    rows = two_factor.report(required)
    lacking = 0
    for user, needs, app_set, keyed in rows:
        has = [name for name, present in (("authenticator app", app_set), ("passkey", keyed)) if present]
        if needs and not has:
            lacking += 1
        elif missing:
            continue
        state = "required" if needs else "optional"
        click.echo(f"{user.email}\t{user.role_labels}\t{state}\t{', '.join(has) or 'none'}"
                   f"{chr(9) + 'MISSING' if needs and not has else ''}")
    click.echo(f"{lacking} account(s) lack a second factor their role requires; they set one up at their next "
               "sign-in.")


@cli.cli.command("two-factor-reset")
@click.argument("email")
def two_factor_reset(email):
    """Reset the second factor of a person who lost it (app, passkeys, recovery codes): their sessions end and they
    set up a new one at their next sign-in. Recorded in the audit log."""
    user = services.find_user_by_email(email)
    if user is None:
        raise click.ClickException(f"There is no account with the email {email}.")
    try:
        two_factor.reset(user, actor=None, now=utcnow())
    except services.AccountError as exc:
        db.session.rollback()
        raise click.ClickException(str(exc)) from None
    db.session.commit()
    click.echo(f"reset the second factor of {user.email}: they set up a new one at their next sign-in")
