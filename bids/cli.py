"""`flask bids import FILE.json --event SLUG [--check] [--owner EMAIL]`: a paper bid from the JSON shape."""

from __future__ import annotations

import json

import click
from flask import Blueprint
from sqlalchemy import select

from accounts.models import User, UserRole
from accounts.services import find_user_by_email
from bids import services
from bids.rules import check_bid
from bids.shape import BidImportError, bid_from_json
from core.auth import Role
from core.db import db, utcnow
from core.findings import Outcome
from events.services import get_event

cli = Blueprint("bids_cli", __name__, cli_group="bids")


@cli.cli.command("import")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--event", "slug", required=True, help="The call's slug, e.g. fwwcm-2015.")
@click.option("--check", is_flag=True, help="Only judge the file; change nothing.")
@click.option("--owner", default=None, help="Email of the bidder account the draft belongs to (default: the "
              "secretariat member keying it in).")
@click.option("--by", "by", default=None, help="Email of the secretariat (admin) account keying the bid in; it is "
              "recorded as entered by them on the owner's behalf (default: the first admin account).")
def import_command(path, slug, check, owner, by):
    """Judge a bid in the JSON shape against the call's rules, and (without --check) store it as a draft.

    Prints every finding that fails, and the documents still to attach; exits 1 if any rule fails. A paper bid is
    keyed in while the call is open or closed; after the deadline the secretariat admits it late, with a reason,
    before submitting it on the bidder's behalf in the web form.
    """
    event = get_event(slug)
    if event is None:
        raise click.ClickException(f"no call with the slug {slug!r}; `flask events load` it first")
    data = _read_bid(path)
    now = utcnow()
    findings = check_bid(event.regulation, data, today=now.date())
    failed = _print_findings(findings)
    if not check:
        clerk = _secretariat(by)
        user = _account(owner) if owner else clerk
        try:
            bid = services.import_bid(event, data, owner=user, actor=clerk, now=now)
        except services.BidError as exc:
            db.session.rollback()
            raise click.ClickException(str(exc)) from None
        db.session.commit()
        click.echo(f"stored as draft bid {bid.id} for {event.slug} (owner {user.email}, keyed in by {clerk.email}); "
                   "attach the documents and submit it in the web form")
    if failed:
        raise SystemExit(1)


def _read_bid(path: str):
    """The bid in the JSON file at path, in the shape bid_from_json gives; a ClickException saying why it cannot
    be read."""
    try:
        with open(path, encoding="utf-8") as fh:
            raw = json.load(fh)
    except OSError as exc:
        raise click.ClickException(f"cannot read {path}: {exc.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise click.ClickException(f"{path} is not valid JSON: {exc}") from None
    except RecursionError:
        raise click.ClickException(f"{path} is nested too deeply to be a bid (lists or objects inside each other "
                                   "hundreds of times); a bid's JSON is at most three levels deep") from None
    except ValueError as exc:  # Python refuses integers of more than 4300 digits rather than spend time on them
        raise click.ClickException(f"{path} holds a number too long to read ({exc}); no field of a bid takes "
                                   "one") from None
    try:
        return bid_from_json(raw)
    except (BidImportError, RecursionError) as exc:
        problem = exc if isinstance(exc, BidImportError) else "nested too deeply to be read"
        raise click.ClickException(f"{path}: {problem}") from None


def _print_findings(findings):
    """Prints the warnings, the failures, the documents still to attach and a count; returns the failures."""
    failed = [f for f in findings if f.outcome is Outcome.FAIL]
    pending = [f for f in findings if f.outcome is Outcome.PENDING]
    for f in findings:
        if f.outcome is Outcome.WARNING:
            click.echo(f"CHECK   {f.as_text()}")
    for f in failed:
        click.echo(f"FAIL    {f.as_text()}")
    for f in pending:
        click.echo(f"ATTACH  {f.cite}: {f.message}")
    click.echo(f"{sum(not f.blocks_submission for f in findings)} passed or not applicable, {len(failed)} failed, "
               f"{len(pending)} document(s) to attach in the web form")
    return failed


def _account(email: str) -> User:
    user = find_user_by_email(email)
    if user is None:
        raise click.ClickException(f"no account with the email {email}")
    return user


def _secretariat(email: str | None) -> User:
    """The admin account keying the bid in: --by, or the first admin."""
    if email:
        user = _account(email)
        if Role.ADMIN not in user.role_set:
            raise click.ClickException(f"{email} is not a secretariat (admin) account: only the secretariat keys in "
                                       "a paper bid")
        return user
    admin = db.session.scalars(select(User).where(User.roles.any(UserRole.role == Role.ADMIN.value))
                               .order_by(User.id)).first()
    if admin is None:
        raise click.ClickException("no admin account to key the bid in; create one (flask users create --role admin)")
    return admin
