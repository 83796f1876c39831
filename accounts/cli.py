"""`flask users create EMAIL --role wcoc [--role board] [--president] [--federation CHN]`."""

from __future__ import annotations

import secrets

import click
from flask import Blueprint, current_app

from accounts import services
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
