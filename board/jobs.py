"""Rendering dossiers in a background worker (RQ) when REDIS_URL is set; in the request otherwise.

The web process enqueues one job per dossier snapshot (the job id carries the inputs hash, so a second request
for the same snapshot waits for the same job); `flask board worker` runs the jobs inside the app.
"""

from __future__ import annotations

import click
from flask import Blueprint, current_app

QUEUE = "gambit-pdf"

cli = Blueprint("board_cli", __name__, cli_group="board")


def _redis():
    from redis import Redis

    return Redis.from_url(current_app.config["REDIS_URL"])


def queue():
    from rq import Queue

    return Queue(QUEUE, connection=_redis())


def render_job(event_id: int, bid_id: int | None, actor_id: int | None) -> int:
    """Make (or find) the current dossier of a bid, or the pack when bid_id is None; returns its id. Runs in the
    worker's app context."""
    from accounts.models import User
    from bids.models import Bid
    from board import services
    from core.db import db, utcnow
    from events.models import Event

    event = db.session.get(Event, event_id)
    actor = db.session.get(User, actor_id) if actor_id else None
    upload_dir = current_app.config["UPLOAD_DIR"]
    if bid_id is None:
        found, _ = services.ensure_pack(event, actor=actor, now=utcnow(), upload_dir=upload_dir)
    else:
        found = services.ensure_dossier(db.session.get(Bid, bid_id), actor=actor, now=utcnow(),
                                        upload_dir=upload_dir)
    db.session.commit()
    return found.id


def enqueue(event_id: int, bid_id: int | None, actor_id: int | None, digest: str):
    """The job rendering this snapshot: the one already queued or running, else a new one."""
    from rq.exceptions import NoSuchJobError
    from rq.job import Job

    job_id = f"dossier-{event_id}-{bid_id or 'pack'}-{digest[:24] or 'new'}"
    try:
        job = Job.fetch(job_id, connection=_redis())
        if job.get_status() not in ("failed", "stopped", "canceled"):
            return job
        job.delete()
    except NoSuchJobError:
        pass
    return queue().enqueue_call(render_job, args=(event_id, bid_id, actor_id), job_id=job_id, timeout=120,
                                result_ttl=600, failure_ttl=3600)


@cli.cli.command("worker")
@click.option("--burst", is_flag=True, help="Run the queued jobs, then stop.")
def worker(burst):
    """Render dossiers in the background (needs REDIS_URL); run it beside gunicorn."""
    from rq import Worker

    if not current_app.config.get("REDIS_URL"):
        raise click.ClickException("set REDIS_URL: without it dossiers render in the request")
    Worker([queue()], connection=_redis()).work(burst=burst)
