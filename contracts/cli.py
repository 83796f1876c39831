"""`flask payments remind [--as-of DATE]`: remind organizers of payments falling due or overdue, now. `flask scheduler`
runs the same work once a day (contracts.reminders); the command is for an operator who wants it at once, or for
another day."""

from __future__ import annotations

from datetime import date

import click
from flask import Blueprint

from contracts.reminders import send_due_reminders
from core.db import utcnow
from core.validators import NotADateError, parse_day

cli = Blueprint("payments_cli", __name__, cli_group="payments")


def _day(ctx, param, value):
    if value is None:
        return None
    try:
        return parse_day(value)
    except NotADateError:
        raise click.BadParameter(f"{value!r} is not a date written YYYY-MM-DD") from None


@cli.cli.command("remind")
@click.option("--as-of", "as_of", callback=_day, default=None,
              help="The day to judge the deadlines on, YYYY-MM-DD (default: today, UTC).")
def remind_command(as_of: date | None):
    """Remind the organizer's contact of each payment due within PAYMENT_DUE_SOON_DAYS days and each one overdue,
    once per milestone and kind (a reminder already written is never written again): each is written into the
    outbox with its record and committed, and the outbox delivers it."""
    now = utcnow()
    report = send_due_reminders(as_of or now.date(), now=now)
    for line in report.lines:
        click.echo(f"queued {line}")
    for warning in report.warnings:
        click.echo(f"WARNING {warning}")
    click.echo(report.summary())
