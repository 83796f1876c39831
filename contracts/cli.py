"""`flask payments remind [--as-of DATE]`, for cron: remind organizers of payments falling due or overdue."""

from __future__ import annotations

from datetime import date

import click
from flask import Blueprint
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from contracts import queries, services
from contracts.models import Contract
from core.db import db, utcnow
from core.money import format_eur
from core.urls import external_url
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
    day = as_of or utcnow().date()
    days = queries.due_soon_days()
    todo = queries.due_reminders(day, days)
    sent = 0
    for milestone, kind, status in todo:
        url = _url(milestone.contract_id)
        try:
            with db.session.begin_nested():
                services.send_reminder(milestone, kind, status, url=url, now=utcnow())
        except IntegrityError:
            db.session.rollback()  # another run sent it meanwhile
            continue
        db.session.commit()
        sent += 1
        assert status.due is not None  # only a milestone with a deadline is reminded of
        click.echo(f"queued {kind.value:8} {milestone.contract.reference} {milestone.key}: "
                   f"{format_eur(status.outstanding)} due {status.due.isoformat()} ({status.label})")
    for contract in db.session.scalars(select(Contract).where(Contract.status.in_(queries.IN_FORCE))):
        t = queries.tracker(contract, day, due_soon_days=days, guarantee_warning_days=queries.guarantee_warning_days())
        for warning in t.warnings:
            click.echo(f"WARNING {contract.reference}: {warning}")
    click.echo(f"{sent} reminder(s) queued in the outbox, as of {day.isoformat()}")


def _url(contract_id: int) -> str:
    return external_url("contracts.view", contract_id=contract_id)
