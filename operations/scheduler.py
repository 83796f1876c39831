"""Periodic jobs: `flask scheduler` runs each job of the app's registry on its schedule, each period exactly once
however many scheduler processes (and app servers) run.

Why APScheduler 3.11 for the timing (cron-like and interval triggers in UTC, a missed time run late once rather than
dropped, a thread pool so one slow job does not hold the others): RQ 3.0 has periodic jobs of its own
(rq.cron.CronScheduler, `rq cron`), but only as an enqueuer into Redis, so it needs REDIS_URL, which Gambit keeps
optional (without it the scheduler runs its jobs in its own process); it reads its cron fields in the machine's local
time; and rq.repeat.Repeat re-enqueues one job a fixed number of times, which is no calendar. Neither library knows
whether another process already ran a period: that is Gambit's own, in the database every process shares.

Exactly once: before a job runs, its run claims its slot, the job's name and the period it covers ("payments.remind",
"2026-12-03"), by inserting a ScheduledRun row; the unique constraint on (job, slot) lets one insert win, committed
before the job starts, and the loser skips. The row then records when the job started and finished and how it went
("ok" and its summary, or "error" and the error's text). With REDIS_URL set, the scheduler puts the claimed run on
the job's queue and `flask worker` runs it (run_claimed); without it, or when Redis cannot be reached, the scheduler
runs it itself. A job's exception is logged and recorded, never stops the loop. A run claimed but cut off (the process
killed mid-job) stays unfinished in the table and its period is not run again: the jobs' own work is idempotent
(a reminder is sent once per milestone and kind), and the row shows an operator what to look at.

Jobs are registered in one place, create_app (app._periodic_jobs), into the app's Registry: name, schedule, function.
A job's function takes the instant it starts (UTC) and returns a summary (or None), or raises to record a failure.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import click
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger
from flask import Blueprint, Flask, current_app
from sqlalchemy import CheckConstraint, String, Text, UniqueConstraint, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, mapped_column

from core.db import Model, db, rowcount, utcnow
from operations import jobs

log = logging.getLogger("gambit.scheduler")

cli = Blueprint("scheduler_cli", __name__, cli_group=None)

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class ScheduledRun(Model):
    """One run of a periodic job for one period: claimed once (the unique constraint), then started and finished."""

    __tablename__ = "scheduled_run"
    __table_args__ = (
        UniqueConstraint("job", "slot", name="uq_scheduled_run_job_slot"),
        CheckConstraint("outcome IS NULL OR outcome IN ('ok', 'error')", name="outcome"),
        CheckConstraint("(outcome IS NULL) = (finished_at IS NULL)", name="finished_whole"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    job: Mapped[str] = mapped_column(String(80))
    slot: Mapped[str] = mapped_column(String(40))
    claimed_at: Mapped[datetime]
    claimed_by: Mapped[str] = mapped_column(String(200))
    queued: Mapped[bool] = mapped_column(default=False)
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    outcome: Mapped[str | None] = mapped_column(String(10))
    detail: Mapped[str | None] = mapped_column(Text)


# ------------------------------------------------------------------------------------------------ schedules


@dataclass(frozen=True)
class Daily:
    """Once a day at `hour`:00 UTC; the period is the UTC day ("2026-12-03")."""

    hour: int

    def __post_init__(self) -> None:
        if not 0 <= self.hour <= 23:
            raise ValueError(f"the hour of a daily job is 0 to 23 (UTC), not {self.hour}")

    def trigger(self) -> BaseTrigger:
        return CronTrigger(hour=self.hour, minute=0, timezone=UTC)

    def slot(self, now: datetime) -> str:
        return now.astimezone(UTC).date().isoformat()

    def __str__(self) -> str:
        return f"every day at {self.hour:02d}:00 UTC"


@dataclass(frozen=True)
class Every:
    """Every `seconds` seconds, at whole multiples of it since 1970 (every 60: at each minute's start); the period is
    the one `now` falls in, named by its start ("2026-12-03T07:41:00Z")."""

    seconds: int

    def __post_init__(self) -> None:
        if self.seconds < 1:
            raise ValueError(f"a job runs at most every second, not every {self.seconds}")

    def trigger(self) -> BaseTrigger:
        return IntervalTrigger(seconds=self.seconds, start_date=EPOCH, timezone=UTC)

    def slot(self, now: datetime) -> str:
        start = int(now.timestamp()) // self.seconds * self.seconds
        return datetime.fromtimestamp(start, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def __str__(self) -> str:
        return f"every {self.seconds} s"


Schedule = Daily | Every


@dataclass(frozen=True)
class PeriodicJob:
    """A job of the registry: `func(now)` runs once per period of `schedule`; with REDIS_URL, on `queue`."""

    name: str
    schedule: Schedule
    func: Callable[[datetime], Any]
    queue: str = jobs.MAIL


class Registry:
    """The periodic jobs of one app, filled by create_app (app._periodic_jobs); `registry(app)` returns it."""

    def __init__(self) -> None:
        self._jobs: dict[str, PeriodicJob] = {}

    def add(self, name: str, schedule: Schedule, func: Callable[[datetime], Any], *,
            queue: str = jobs.MAIL) -> PeriodicJob:
        """Register `func` to run once per period of `schedule` under `name`. Raises ValueError for a name already
        registered, or a queue that is not one of operations.jobs.QUEUES."""
        if name in self._jobs:
            raise ValueError(f"a periodic job named {name!r} is already registered")
        if queue not in jobs.QUEUES:
            raise ValueError(f"{queue!r} is not one of Gambit's queues {jobs.QUEUES}")
        job = self._jobs[name] = PeriodicJob(name, schedule, func, queue)
        return job

    def get(self, name: str) -> PeriodicJob | None:
        return self._jobs.get(name)

    def __iter__(self) -> Iterator[PeriodicJob]:
        return iter(list(self._jobs.values()))

    def __len__(self) -> int:
        return len(self._jobs)


def registry(app: Flask) -> Registry:
    """The app's registry of periodic jobs (made empty on first use). Raises nothing."""
    return app.extensions.setdefault("gambit.scheduler", Registry())


# ------------------------------------------------------------------------------------------------ one run


def claim(job: str, slot: str, *, now: datetime, by: str) -> ScheduledRun | None:
    """Claim the run of `job` for `slot`: insert its row and commit. Returns the row, or None when another process
    claimed that slot first (its insert committed, or committing now: this one waits for it, then loses). Rolls the
    session back then. Raises the database's other errors."""
    run = ScheduledRun(job=job, slot=slot, claimed_at=now, claimed_by=by)
    db.session.add(run)
    try:
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        return None
    return run


def run_claimed(run_id: int) -> str | None:
    """Run a claimed run's job, in the current app: mark it started (compare-and-swap, so a run delivered twice by
    the queue runs once), call the job's function, record the outcome. Returns the outcome ("ok", "error"), or None
    when the run had already started. A job's exception is logged and recorded, not raised; raises only the
    database's errors. The RQ job of a queued run."""
    started = utcnow()
    result = db.session.execute(update(ScheduledRun).where(ScheduledRun.id == run_id,
                                                           ScheduledRun.started_at.is_(None))
                                .values(started_at=started).execution_options(synchronize_session=False))
    name = db.session.scalars(select(ScheduledRun.job).where(ScheduledRun.id == run_id)).one()
    db.session.commit()
    if rowcount(result) != 1:
        log.warning("run %s of %s had already started: not run again", run_id, name)
        return None
    job = registry(current_app).get(name)
    try:
        if job is None:
            raise LookupError(f"no periodic job named {name!r} in this app's registry")
        summary = job.func(started)
        outcome, detail = "ok", (None if summary is None else str(summary))
    except Exception as exc:  # recorded on the run; the scheduler and the worker go on
        db.session.rollback()
        log.exception("periodic job %s (run %s) failed", name, run_id)
        outcome, detail = "error", f"{type(exc).__name__}: {exc}"
    db.session.execute(update(ScheduledRun).where(ScheduledRun.id == run_id)
                       .values(finished_at=utcnow(), outcome=outcome, detail=detail)
                       .execution_options(synchronize_session=False))
    db.session.commit()
    log.info("%s (run %s): %s%s", name, run_id, outcome, f" ({detail})" if detail else "")
    return outcome


@dataclass(frozen=True)
class Tick:
    """What one tick did with one job: "skipped" (the slot was claimed elsewhere), "queued", "ok" or "error"."""

    job: str
    slot: str
    status: str

    def __str__(self) -> str:
        return f"{self.job} {self.slot}: {self.status}"


def tick(app: Flask, job: PeriodicJob) -> Tick:
    """Claim the job's current slot and, if this process won it, queue it (REDIS_URL set and Redis reachable) or run
    it here. Never raises: any error (the database's too) is logged and returned as "error"."""
    with app.app_context():
        slot = "?"
        try:
            now = utcnow()
            slot = job.schedule.slot(now)
            run = claim(job.name, slot, now=now, by=f"{socket.gethostname()}:{os.getpid()}")
            if run is None:
                log.info("%s %s: claimed by another process, skipped", job.name, slot)
                return Tick(job.name, slot, "skipped")
            if _queued(run, job):
                return Tick(job.name, slot, "queued")
            return Tick(job.name, slot, run_claimed(run.id) or "skipped")
        except Exception:  # the loop goes on: the next tick tries again
            db.session.rollback()
            log.exception("periodic job %s (%s) could not be claimed or run", job.name, slot)
            return Tick(job.name, slot, "error")
        finally:
            db.session.remove()


def _queued(run: ScheduledRun, job: PeriodicJob) -> bool:
    """Put the claimed run on the job's queue for `flask worker`; False without REDIS_URL, or when Redis cannot be
    reached (logged: the scheduler runs it itself then). Raises the database's errors."""
    if not jobs.enabled():
        return False
    from redis.exceptions import RedisError  # optional at runtime: only with REDIS_URL (see operations.jobs)

    try:
        jobs.enqueue(run_claimed, run.id, queue_=job.queue, job_id=f"gambit-scheduled-{run.id}",
                     result_ttl=3600, failure_ttl=7 * 86400)
    except RedisError as exc:
        log.warning("%s %s: Redis cannot be reached (%s); running it in the scheduler", run.job, run.slot, exc)
        return False
    run.queued = True
    db.session.commit()
    return True


# ------------------------------------------------------------------------------------------------ the loop


def serve(app: Flask, stop: threading.Event) -> None:
    """Run every job of the app's registry on its schedule until `stop` is set, then wait for the jobs running to
    finish. Each job also runs at start, for its current period if no process ran it yet (today's reminders, when
    the scheduler starts after their hour or was down then). Raises nothing of the jobs'."""
    scheduler = BackgroundScheduler(timezone=UTC, job_defaults={
        # a time missed (the machine asleep, a long job) runs once, late, rather than being dropped or run N times
        "coalesce": True, "max_instances": 1, "misfire_grace_time": None})
    start = datetime.now(UTC)
    for job in registry(app):
        scheduler.add_job(tick, trigger=job.schedule.trigger(), args=(app, job), id=job.name, name=job.name,
                          next_run_time=start)
        log.info("%s: %s", job.name, job.schedule)
    scheduler.start()
    try:
        while not stop.wait(1):
            pass
    finally:
        scheduler.shutdown(wait=True)


@cli.cli.command("scheduler")
@click.option("--once", is_flag=True,
              help="Run every job whose current period has not run yet, once, then stop (exit 1 if one failed).")
def scheduler_command(once: bool) -> None:
    """Run the periodic jobs (payment reminders, ...) on their schedules until stopped (SIGTERM, Ctrl-C); each
    period runs once however many schedulers run. With REDIS_URL set, `flask worker` runs the jobs."""
    app: Flask = current_app._get_current_object()  # type: ignore[attr-defined]
    # What the scheduler does goes to stderr through the app's own handler (operations.logs, on the root logger: JSON
    # lines in production, each line once); at INFO at least, since its lines are the record of what ran.
    log.setLevel(logging.INFO)
    _scheduler(app, once=once)


def _scheduler(app: Flask, *, once: bool) -> None:
    if once:
        ticks = [tick(app, job) for job in registry(app)]
        for t in ticks:
            click.echo(str(t))
        if any(t.status == "error" for t in ticks):
            raise SystemExit(1)
        return
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, frame: stop.set())
    click.echo(f"scheduler started ({len(registry(app))} job(s)); stop it with Ctrl-C or SIGTERM")
    serve(app, stop)
    click.echo("scheduler stopped")
