"""`flask events load FILE`: validate a regulation file strictly and store it on its call; a changed file of a call
already loaded is an amendment, recorded with who decided it, the date and reference of the decision and the
reason, and every submitted bid is judged again under the new version."""

from __future__ import annotations

import json
from datetime import date

import click
from flask import Blueprint

from core.db import db, utcnow
from core.validators import NotADateError, parse_day
from events.regulation import RegulationError, load_regulation_file
from events.rules import snapshot_changes
from events.services import AmendmentError, amendment_problems, get_event, load_event, record_amendment

cli = Blueprint("events_cli", __name__, cli_group="events")


def _day(ctx: click.Context, param: click.Parameter, value: str | None) -> date | None:
    """The option's day, read by core.validators.parse_day. Raises click.BadParameter for anything else."""
    if value is None:
        return None
    try:
        return parse_day(value)
    except NotADateError:
        raise click.BadParameter(f"{value!r} does not match the format '%Y-%m-%d'.") from None


@cli.cli.command("load")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--authority", default=None,
              help="Who decided the change (a key of the file's amendment_authorities, e.g. board or president).")
@click.option("--decided-on", callback=_day, default=None, metavar="YYYY-MM-DD",
              help="The date of the decision (YYYY-MM-DD).")
@click.option("--reference", default=None, help="The reference of the decision (minutes, letter).")
@click.option("--reason", default=None, help="Why the regulation changed.")
@click.option("--recommended-by", default=None,
              help="Who made the recommendation the authority acted upon (the WCOC's, for the Board).")
@click.option("--recommended-on", callback=_day, default=None, metavar="YYYY-MM-DD",
              help="The date of that recommendation (YYYY-MM-DD).")
@click.option("--recommendation", default=None, help="What that recommendation said.")
@click.option("--grounds", default=None,
              help="The grounds of a decision allowed only on certain grounds (a key of the authority's grounds). "
                   "Whether a change is covered by the regulations is the call file's list of covered items, "
                   "not an option.")
def load(path, authority, decided_on, reference, reason, recommended_by, recommended_on, recommendation, grounds):
    """Load or update a call from its TOML file; a changed file makes a new regulation version, recorded as an
    amendment (the options say who decided it, when, under which reference and why)."""
    try:
        reg = load_regulation_file(path)
    except RegulationError as exc:
        raise click.ClickException(f"{path}: {exc}") from None
    decided = decided_on
    existing = get_event(reg.event.slug)
    old_version = existing.regulation_version if existing is not None else None
    amending = old_version is not None and old_version.sha256 != reg.sha256
    if amending and old_version is not None:
        keys = [c["key"] for c in snapshot_changes(json.loads(old_version.snapshot), json.loads(reg.snapshot))]
        problems = amendment_problems(reg, authority=authority, decided_on=decided, reference=reference,
                                      reason=reason, recommended_by=recommended_by, recommended_on=recommended_on,
                                      recommendation=recommendation, grounds=grounds, changed_keys=keys,
                                      covered_before=old_version.regulation.covered)
        if problems:
            raise click.ClickException(
                f"{path}: the file of {reg.event.slug} changed, so the change is an amendment: "
                + "; ".join(problems) + " (options --authority, --decided-on, --reference, --reason, "
                "--recommended-by, --recommended-on, --recommendation, --grounds). Nothing was loaded.")
    now = utcnow()
    event, changed = load_event(reg, actor=None, now=now, source=str(path))
    version = event.regulation_version
    amendment = None
    if changed and amending and old_version is not None:
        try:
            amendment = record_amendment(event, old_version, version, authority=authority, decided_on=decided,
                                         reference=reference, reason=reason, actor=None, now=now,
                                         recommended_by=recommended_by, recommended_on=recommended_on,
                                         recommendation=recommendation, grounds=grounds)
        except AmendmentError as exc:
            db.session.rollback()
            raise click.ClickException(f"{path}: {exc} Nothing was loaded.") from None
    db.session.commit()
    if not changed:
        click.echo(f"{event.slug} unchanged: regulation {version.label} already in force")
        return
    click.echo(f"loaded {event.slug}: regulation {version.label}")
    if amendment is not None:
        changes = amendment.loads("changes")
        click.echo(f"amendment recorded: {amendment.authority_label} (Art. {amendment.article}), decided on "
                   f"{amendment.decided_on.isoformat()}, reference {amendment.reference}; "
                   f"{len(changes)} key(s) changed: {', '.join(c['key'] for c in changes)}")
        if amendment.recommended_by:
            click.echo(f"upon the recommendation of {amendment.recommended_by} of "
                       f"{amendment.recommended_on.isoformat() if amendment.recommended_on else ''}: "
                       f"{amendment.recommendation}")
        if amendment.grounds_label:
            click.echo(f"grounds: {amendment.grounds_label}")
        report = amendment.loads("report")
        if not report:
            click.echo("every submitted bid judged again: no findings changed")
        for entry in report:
            verdict = (f"{'complies' if entry['compliant_before'] else 'does not comply'} -> "
                       f"{'complies' if entry['compliant_after'] else 'does not comply'}")
            codes = ", ".join(f"{c.get('cite') or c['code']} ({c['before']} -> {c['after']})" for c in entry["changed"])
            click.echo(f"findings changed: bid {entry['bid']} {entry['title']}: {verdict}; {codes}")
