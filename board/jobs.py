"""Rendering dossiers outside the request: in a background worker (RQ) when REDIS_URL is set; otherwise in a
background thread of the web process, or from the command line (`flask board render <slug>`).

The RQ path enqueues one job per dossier snapshot on the "gambit-pdf" queue (operations.jobs; the job id carries the
inputs hash, so a second request for the same snapshot waits for the same job); `flask worker` (or its older name `flask
board worker`) runs the jobs inside the app. Every path renders the bids' dossiers one at a time, committing each as it
is made, then the pack: progress is what is stored, which every process sees, and an interrupted run loses at most the
document it was making."""

from __future__ import annotations

import threading

import click
from flask import Blueprint, current_app

from accounts.models import User
from bids.models import Bid
from board import queries, services
from core.db import db, reading, utcnow
from events.models import Event
from events.services import get_event
from operations import jobs

QUEUE = jobs.PDF

cli = Blueprint("board_cli", __name__, cli_group="board")


def render_all(event_id: int, bid_id: int | None, actor_id: int | None, progress=None) -> int:
    """Make (or find) the current dossier of a bid, or every missing dossier then the pack when bid_id is None;
    returns the id of the document asked for. The same path as the request's (board.services.make_documents, then
    keep), one document at a time: each is rendered in a reading transaction (no write lock held while WeasyPrint
    runs), then stored and committed in a short one of its own; `progress(done, total)` is called after each.
    Runs in an app context (the worker's, the thread's, the CLI's). Raises what the services raise."""
    upload_dir = current_app.config["UPLOAD_DIR"]

    def step(bid: int | None) -> int:
        # Every id is read before a commit: touching an expired row after it would begin a transaction outside
        # `reading()`, one that takes the write lock and keeps it through the next rendering.
        with reading():
            actor = db.session.get(User, actor_id) if actor_id else None
            made = services.make_documents(db.session.get_one(Event, event_id),
                                           db.session.get_one(Bid, bid) if bid is not None else None,
                                           actor=actor, now=utcnow())
            made_id = made[-1].dossier.id
        db.session.commit()  # ends the reading transaction: nothing was written
        if any(m.pdf is not None for m in made):
            made_id = services.keep(made, actor=db.session.get(User, actor_id) if actor_id else None, now=utcnow(),
                                    upload_dir=upload_dir)[-1].id
            db.session.commit()
        return made_id

    if bid_id is not None:
        return step(bid_id)
    # The pack needs every bid's dossier: the missing ones are made first, one per step (after the decision,
    # make_documents gives what it reviewed, and none is missing).
    with reading():
        event = db.session.get_one(Event, event_id)
        missing = [] if queries.reviewed_documents(event) else [b.id for b, _ in queries.missing_dossiers(event)]
    db.session.commit()
    for done, missing_id in enumerate(missing, start=1):
        step(missing_id)
        if progress:
            progress(done, len(missing) + 1)
    pack_id = step(None)
    if progress:
        progress(len(missing) + 1, len(missing) + 1)
    return pack_id


def render_job(event_id: int, bid_id: int | None, actor_id: int | None) -> int:
    """The RQ job: render_all in the worker's app context."""
    return render_all(event_id, bid_id, actor_id)


def enqueue(event_id: int, bid_id: int | None, actor_id: int | None, digest: str):
    """The job rendering this snapshot: the one already queued or running, else a new one (operations.jobs.enqueue with
    a stable id). When Redis cannot be reached, a background thread of this process renders it instead
    (start_thread, as without REDIS_URL), with a warning in the log: the page gets its PDF all the same. Returns
    something with `get_status()`."""
    from redis.exceptions import ConnectionError as RedisConnectionError  # optional at runtime (operations.jobs)
    from redis.exceptions import TimeoutError as RedisTimeoutError

    job_id = f"dossier-{event_id}-{bid_id or 'pack'}-{digest[:24] or 'new'}"
    try:
        restarted = _replace_abandoned(job_id)
        return jobs.enqueue(render_job, event_id, bid_id, actor_id, queue_=QUEUE, job_id=job_id, timeout=1800,
                            result_ttl=600, failure_ttl=3600, meta={"restarted": restarted})
    except (RedisConnectionError, RedisTimeoutError) as exc:
        current_app.logger.warning("Redis (REDIS_URL) cannot be reached (%s): the PDF is rendered in a background "
                                   "thread of this web process instead of by `flask worker`.", exc)
        return ThreadJob(start_thread(event_id, bid_id, actor_id, digest or "new"))


def _replace_abandoned(job_id: str) -> bool:
    """Whether the job of this id lost its worker before it finished (see abandoned); such a job is deleted when
    RQ still shows it queued or started, so that operations.jobs.enqueue makes a new one (a job RQ failed for it is
    replaced by operations.jobs.enqueue itself). Raises redis.ConnectionError when Redis cannot be reached."""
    from rq.exceptions import NoSuchJobError  # optional at runtime (operations.jobs)
    from rq.job import Job

    redis = jobs.connection()
    try:  # operations.jobs.enqueue puts RQ_QUEUE_PREFIX before a stable job id
        job = Job.fetch(f"{current_app.config.get('RQ_QUEUE_PREFIX', '')}{job_id}", connection=redis)
    except NoSuchJobError:
        return False
    if job.get_status() in ("queued", "started") and abandoned(job):
        current_app.logger.warning("The worker rendering %s stopped before it finished (its process is gone or "
                                   "its heartbeat lapsed): the job is queued again.", job.id)
        _forget(job)
        return True
    return _abandoned_before(job)


def abandoned(job) -> bool:
    """Whether a job taken by a worker has lost it (the worker killed, its machine gone), so that waiting for the
    job would be waiting forever. RQ's own account first: a started job whose heartbeat lapsed (about a minute and
    a half after its worker stopped) is moved to the failed registry (AbandonedJobError). Sooner: a worker that
    took it (one of the job's executions) whose registration has expired, or, on the worker's own machine, whose
    process no longer exists. A job still waiting in the queue has no execution and is not abandoned."""
    from rq.registry import StartedJobRegistry  # optional at runtime (operations.jobs)

    StartedJobRegistry(queue=jobs.queue(QUEUE, redis=job.connection)).cleanup()
    if job.get_status(refresh=True) == "failed":
        return True
    return any(_worker_gone(execution.worker_name, job.connection) for execution in job.get_executions())


def _worker_gone(name: str, redis) -> bool:
    import os
    import socket

    from rq import Worker  # optional at runtime (operations.jobs)

    if not name:
        return False
    worker = Worker.find_by_key(Worker.redis_worker_namespace_prefix + name, connection=redis)
    if worker is None:
        return True
    if worker.hostname == socket.gethostname() and worker.pid:
        try:
            os.kill(worker.pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:  # a process of another user has that id: the worker's, or not; RQ will tell
            return False
    return False


def _forget(job) -> None:
    """Delete a job with every trace a dead worker left of it (its executions in the started registry, its entry
    in the queue's intermediate list), so that none of them is later taken for the new job of the same id."""
    from rq.intermediate_queue import IntermediateQueue  # optional at runtime (operations.jobs)
    from rq.registry import StartedJobRegistry

    q = jobs.queue(QUEUE, redis=job.connection)
    StartedJobRegistry(queue=q).remove_executions(job)
    IntermediateQueue(q.key, connection=job.connection).remove(job.id)
    job.delete()


def _abandoned_before(job) -> bool:
    """A failed job that RQ failed for having lost its worker (rather than for an error of the rendering)."""
    if job.get_status() != "failed":
        return False
    result = job.latest_result()
    return result is not None and "AbandonedJobError" in (result.exc_string or "")


class ThreadJob:
    """A background thread's state (start_thread) answering like an RQ job, for the page that shows progress."""

    def __init__(self, state: dict):
        self.state = state

    def get_status(self) -> str:
        return self.state["status"]


# ---- without Redis: one background thread per snapshot and process

_THREADS: dict[str, dict] = {}
_LOCK = threading.Lock()


def start_thread(event_id: int, bid_id: int | None, actor_id: int | None, digest: str) -> dict:
    """Render in a daemon thread of this process (one per snapshot at a time); returns its status dict
    ({"status": "started" | "finished" | "failed", "error": str | None}). Another process may render the same
    snapshot at the same moment: the stored row is unique by its inputs, one of the two is kept."""
    # Flask types current_app as the app it proxies, without the proxy's own methods.
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    key = f"{event_id}-{bid_id or 'pack'}-{digest}"
    with _LOCK:
        state = _THREADS.get(key)
        if state is not None and state["status"] != "failed":
            return state
        state = _THREADS[key] = {"status": "started", "error": None}

    def run() -> None:
        with app.app_context():
            try:
                render_all(event_id, bid_id, actor_id)
                state["status"] = "finished"
            except Exception as exc:  # shown on the progress page; the next request starts again
                db.session.rollback()
                state.update(status="failed", error=str(exc))
                app.logger.exception("background rendering of %s failed", key)
            finally:
                db.session.remove()

    threading.Thread(target=run, name=f"gambit-pdf-{key[:40]}", daemon=True).start()
    return state


@cli.cli.command("worker")
@click.option("--burst", is_flag=True, help="Run the queued jobs, then stop.")
def worker(burst):
    """The older name of `flask worker` (every queue, dossiers among them); needs REDIS_URL."""
    jobs.run_worker(burst=burst)


@cli.cli.command("render")
@click.argument("slug")
def render(slug):
    """Make every missing dossier of a call and its board pack now, showing the progress."""
    event = get_event(slug)
    if event is None:
        raise click.ClickException(f"No call with the slug {slug!r}.")
    render_all(event.id, None, None, progress=lambda done, total: click.echo(f"{done}/{total} documents made"))
    click.echo("The board pack is up to date.")
