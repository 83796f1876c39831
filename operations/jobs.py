"""Background jobs through RQ when REDIS_URL is set: the queues, the connection, enqueuing, and the one worker.

Every Gambit queue is listed here, once (QUEUES); `flask worker` serves them all, inside the app (its database, its
settings), so a job is a plain function that may use `db.session` and `current_app`. Without REDIS_URL there is no
queue: each caller has its own path (board.jobs renders in a thread, the scheduler runs its jobs in its own process).

redis and rq are imported only when a queue is used: the queue is optional at runtime, and importing rq costs about
a second at every start of a process that never uses it (the web workers, every `flask` command).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import click
from flask import Blueprint, current_app

if TYPE_CHECKING:
    from redis import Redis
    from rq.job import Job
    from rq.queue import Queue

PDF = "gambit-pdf"  # dossiers and board packs (board.jobs)
MAIL = "gambit-mail"  # the mail outbox, and the periodic jobs that write to it (operations.scheduler)
QUEUES = (PDF, MAIL)

cli = Blueprint("jobs_cli", __name__, cli_group=None)


class NoQueueError(RuntimeError):
    """REDIS_URL is not set: there is no queue to put a job on or to work from."""


def enabled() -> bool:
    """Whether jobs go through Redis (REDIS_URL is set). Raises nothing inside an app."""
    return bool(current_app.config.get("REDIS_URL"))


def connection() -> Redis:
    """A client of the Redis REDIS_URL names (it connects on first use). Raises NoQueueError without REDIS_URL."""
    if not enabled():
        raise NoQueueError("REDIS_URL is not set")
    from redis import Redis  # optional at runtime: only with REDIS_URL (see the module's docstring)

    # Bounded waits: a Redis that is down or hangs must not hold a request (the callers fall back).
    return Redis.from_url(current_app.config["REDIS_URL"], socket_connect_timeout=2, socket_timeout=5)


def queue_name(name: str) -> str:
    """The name in Redis of one of QUEUES: RQ_QUEUE_PREFIX before it, so that two installations (or two test runs)
    can share one Redis without taking each other's jobs (enqueue puts it before job ids too). Raises ValueError
    for a queue not in QUEUES."""
    if name not in QUEUES:
        raise ValueError(f"{name!r} is not one of Gambit's queues {QUEUES}")
    return f"{current_app.config.get('RQ_QUEUE_PREFIX', '')}{name}"


def queue(name: str, *, redis: Redis | None = None) -> Queue:
    """The RQ queue `name` (one of QUEUES). Raises NoQueueError without REDIS_URL, ValueError for another name."""
    from rq import Queue  # optional at runtime

    return Queue(queue_name(name), connection=redis or connection())


def enqueue(func: Callable[..., Any] | str, *args: Any, queue_: str, job_id: str | None = None,
            **options: Any) -> Job:
    """Put `func(*args)` on the queue `queue_` (one of QUEUES); `func` is a function or its dotted path (the worker
    imports it). With a stable `job_id` (RQ_QUEUE_PREFIX is put before it), the job of that id already queued or
    running is returned instead of a second one (one that failed, stopped or was canceled is replaced). `options`
    go to RQ (timeout, result_ttl, failure_ttl...).

    Raises NoQueueError without REDIS_URL, ValueError for an unknown queue, redis.ConnectionError when Redis cannot
    be reached."""
    redis = connection()
    if job_id is not None:
        job_id = f"{current_app.config.get('RQ_QUEUE_PREFIX', '')}{job_id}"  # two installations' ids apart too
        from rq.exceptions import NoSuchJobError  # optional at runtime
        from rq.job import Job

        try:
            job = Job.fetch(job_id, connection=redis)
            if job.get_status() not in ("failed", "stopped", "canceled"):
                return job
            job.delete()
        except NoSuchJobError:
            pass
    # RQ takes a function or its dotted path; its type variable takes either, not the union of both.
    return queue(queue_, redis=redis).enqueue_call(cast("Callable[..., Any]", func), args=args, job_id=job_id,
                                                   **options)


# RQ keeps a queued job's function as its dotted path. Releases before 0.36.0 kept mail and the scheduler in core/:
# a job they queued and a worker of this release takes (queued before an upgrade, run after it) names the old path.
MOVED_JOBS = {"core.outbox.deliver_job": "operations.delivery.deliver_job",
              "core.scheduler.run_claimed": "operations.scheduler.run_claimed"}


def answer_to_moved_paths() -> None:
    """Make each old path of MOVED_JOBS name its job's function in this process (and in the forks that run its
    jobs), so that a job queued under an old path runs: the old module is a stand-in holding those functions only.
    Raises ImportError only if a new home is missing."""
    import importlib
    import types

    for old, new in MOVED_JOBS.items():
        old_module, name = old.rsplit(".", 1)
        new_module, new_name = new.rsplit(".", 1)
        stand_in = sys.modules.setdefault(old_module, types.ModuleType(old_module, "moved: " + new_module))
        setattr(stand_in, name, getattr(importlib.import_module(new_module), new_name))


def work(*, burst: bool = False) -> None:
    """Run an RQ worker over every queue of QUEUES, in this process's app context (each job runs in a fork of it,
    so inside the app); jobs queued by an earlier release under a moved path run too (answer_to_moved_paths).
    Returns when `burst` and the queues are empty, or when the worker is told to stop (SIGTERM, SIGINT: it finishes
    the job it is running first). Raises NoQueueError without REDIS_URL."""
    from rq import Worker  # optional at runtime

    answer_to_moved_paths()
    redis = connection()
    Worker([queue(name, redis=redis) for name in QUEUES], connection=redis).work(burst=burst)


@cli.cli.command("worker")
@click.option("--burst", is_flag=True, help="Run the queued jobs, then stop.")
def worker_command(burst: bool) -> None:
    """Run the background jobs of every queue (dossiers, mail, scheduled jobs); needs REDIS_URL. Run it beside
    gunicorn and `flask scheduler`."""
    run_worker(burst=burst)


def run_worker(*, burst: bool = False) -> None:
    """`flask worker` and its older name `flask board worker`: refuses clearly without REDIS_URL. Raises
    click.ClickException then."""
    if not enabled():
        raise click.ClickException("set REDIS_URL: without it there is no queue to work from (dossiers render in a "
                                   "thread of the web process or with `flask board render`, and `flask scheduler` "
                                   "runs its jobs itself)")
    work(burst=burst)
