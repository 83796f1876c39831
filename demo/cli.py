"""`flask seed --demo`: the 2015 call, a practice call open for bids, and demo accounts. Idempotent."""

from __future__ import annotations

import click
from flask import Blueprint

from core.db import db, utcnow
from demo.seed import seed_demo, seed_events

cli = Blueprint("demo_cli", __name__, cli_group=None)


@cli.cli.command("seed")
@click.option("--demo", is_flag=True, help="Also create demo accounts and demo data (for local use only).")
def seed(demo):
    """Load the calls from seed_data/events (and, with --demo, the demo accounts and data)."""
    now = utcnow()
    for line in seed_events(now=now):
        click.echo(line)
    if demo:
        for line in seed_demo(now=now):
            click.echo(line)
    db.session.commit()
