"""`flask events load FILE`: validate a regulation file strictly and store it on its call."""

from __future__ import annotations

import click
from flask import Blueprint

from core.db import db, utcnow
from events.regulation import RegulationError, load_regulation_file
from events.services import load_event

cli = Blueprint("events_cli", __name__, cli_group="events")


@cli.cli.command("load")
@click.argument("path", type=click.Path(dir_okay=False))
def load(path):
    """Load or update a call from its TOML file; a changed file makes a new regulation version."""
    try:
        reg = load_regulation_file(path)
    except RegulationError as exc:
        raise click.ClickException(f"{path}: {exc}") from None
    event, changed = load_event(reg, actor=None, now=utcnow(), source=str(path))
    db.session.commit()
    version = event.regulation_version
    if changed:
        click.echo(f"loaded {event.slug}: regulation {version.label}")
    else:
        click.echo(f"{event.slug} unchanged: regulation {version.label} already in force")
