"""`flask scheduler`: each period of a periodic job is claimed once in scheduled_run before it runs; a job that fails is
recorded as failed and the others go on; with REDIS_URL the claimed run goes to `flask worker`. The payment reminders
run through it are tested in tests/contracts/test_scheduled_reminders.py."""

import os
import signal
import time
from datetime import UTC, datetime

import pytest
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from core.db import db
from operations.scheduler import Daily, Every, ScheduledRun, claim, registry, run_claimed
from tests.scheduling import FAILURE, REDIS, broken, finish, flask_env, start, working

NOW = datetime(2026, 12, 3, 7, 0, 5, tzinfo=UTC)


def runs(app, job=None):
    with app.app_context():
        query = select(ScheduledRun).order_by(ScheduledRun.id)
        if job:
            query = query.where(ScheduledRun.job == job)
        found = list(db.session.scalars(query))
        db.session.expunge_all()  # the rows as read, for the test to look at after the context ends
        return found


def test_the_slot_is_the_utc_day_or_the_interval_now_falls_in():
    assert Daily(hour=7).slot(NOW) == "2026-12-03"
    assert Daily(hour=7).slot(datetime.fromisoformat("2026-12-03T23:30:00-02:00")) == "2026-12-04"
    assert Every(seconds=60).slot(NOW) == "2026-12-03T07:00:00Z"
    assert Every(seconds=60).slot(NOW.replace(second=59, microsecond=999999)) == "2026-12-03T07:00:00Z"
    assert Every(seconds=1).slot(NOW) == "2026-12-03T07:00:05Z"
    with pytest.raises(ValueError, match="the hour of a daily job is 0 to 23"):
        Daily(hour=24)


def test_the_claim_table_refuses_a_second_claim_of_the_same_slot(ctx):
    first = claim("payments.remind", "2026-12-03", now=NOW, by="host-a:1")
    assert first is not None
    assert claim("payments.remind", "2026-12-03", now=NOW, by="host-b:2") is None
    # the next day, and another job the same day, are slots of their own
    assert claim("payments.remind", "2026-12-04", now=NOW, by="host-b:2") is not None
    assert claim("mail.deliver", "2026-12-03", now=NOW, by="host-b:2") is not None
    # the database itself refuses it, whoever writes the row
    with pytest.raises(IntegrityError):
        with db.session.begin_nested():
            db.session.add(ScheduledRun(job="payments.remind", slot="2026-12-03", claimed_at=NOW, claimed_by="x"))
    assert [(r.job, r.slot, r.claimed_by) for r in db.session.scalars(select(ScheduledRun).order_by(ScheduledRun.id))
            ] == [("payments.remind", "2026-12-03", "host-a:1"), ("payments.remind", "2026-12-04", "host-b:2"),
                  ("mail.deliver", "2026-12-03", "host-b:2")]


def test_a_claimed_run_runs_once_even_when_delivered_twice(another_app):
    app = another_app()
    registry(app).add("test.working", Daily(hour=7), working)
    with app.app_context():
        run = claim("test.working", "2026-12-03", now=NOW, by="here")
        assert run_claimed(run.id) == "ok"
        assert run_claimed(run.id) is None  # the queue delivered it again: not run twice
        row = db.session.get(ScheduledRun, run.id)
        assert row.outcome == "ok" and row.detail.startswith("worked at ") and row.started_at <= row.finished_at


def test_once_runs_each_job_records_a_failure_and_goes_on_to_the_next(another_app):
    app = another_app()
    registry(app).add("test.broken", Daily(hour=7), broken)
    registry(app).add("test.working", Daily(hour=7), working)
    result = app.test_cli_runner().invoke(args=["scheduler", "--once"])
    today = datetime.now(UTC).date().isoformat()
    assert result.exit_code == 1, result.output
    assert f"test.broken {today}: error\n" in result.output and f"test.working {today}: ok\n" in result.output
    broken_run, = runs(app, "test.broken")
    assert (broken_run.outcome, broken_run.detail) == ("error", f"RuntimeError: {FAILURE}")
    assert broken_run.started_at is not None and broken_run.finished_at is not None
    assert runs(app, "test.working")[0].outcome == "ok"
    # today's runs happened: a second pass (another scheduler, a restart) skips them all
    again = app.test_cli_runner().invoke(args=["scheduler", "--once"])
    assert again.exit_code == 0, again.output
    assert f"test.broken {today}: skipped\n" in again.output and f"payments.remind {today}: skipped\n" in again.output
    assert len(runs(app, "test.broken")) == 1


def test_with_redis_out_of_reach_the_scheduler_runs_the_job_itself(another_app):
    app = another_app(REDIS_URL="redis://127.0.0.1:1/0")  # nothing listens on port 1
    registry(app).add("test.working", Daily(hour=7), working)
    result = app.test_cli_runner().invoke(args=["scheduler", "--once"])
    assert "test.working" in result.output and ": ok\n" in result.output, result.output
    run, = runs(app, "test.working")
    assert run.outcome == "ok" and not run.queued


def test_a_bad_reminder_hour_is_refused_at_start(another_app):
    from app import ConfigurationError

    with pytest.raises(ConfigurationError, match="REMINDER_HOUR_UTC is the hour of the day .* 0 to 23; 24 is not one"):
        another_app(REMINDER_HOUR_UTC=24)


@pytest.mark.no_db
def test_the_scheduler_loop_records_a_failing_job_goes_on_and_stops_on_sigterm(live, tmp_path):
    process = start(["scheduler"], flask_env(live, tmp_path, flask_app="tests.scheduling:create"))
    try:
        deadline = time.monotonic() + 60
        # every second, the broken job fails and the working one works: wait until each has done so twice
        while not (len([r for r in runs(live, "test.broken") if r.outcome]) >= 2
                   and len([r for r in runs(live, "test.working") if r.outcome]) >= 2):
            assert process.poll() is None, finish(process)[1]
            assert time.monotonic() < deadline, "the scheduler did not run its jobs twice within 60 s"
            time.sleep(0.2)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
    code, out = finish(process)
    assert code == 0, out
    assert out.rstrip().endswith("scheduler stopped")
    failed = [r for r in runs(live, "test.broken") if r.outcome]
    assert {(r.outcome, r.detail) for r in failed} == {("error", f"RuntimeError: {FAILURE}")}
    assert len({r.slot for r in failed}) == len(failed)  # one run per second's slot
    assert all(r.outcome == "ok" for r in runs(live, "test.working") if r.finished_at)
    assert "RuntimeError: the job broke on purpose" in out  # logged with its traceback, too
    # the real registry is there as well: today's reminders ran at start
    assert [r.outcome for r in runs(live, "payments.remind")] == ["ok"]


@pytest.mark.no_db
def test_with_redis_the_scheduler_queues_the_run_and_the_worker_runs_it(live, another_app, tmp_path, queue_prefix):
    app = another_app(SQLALCHEMY_DATABASE_URI=live.config["SQLALCHEMY_DATABASE_URI"], REDIS_URL=REDIS,
                      RQ_QUEUE_PREFIX=queue_prefix, BASE_URL="http://gambit.test")
    result = app.test_cli_runner().invoke(args=["scheduler", "--once"])
    today = datetime.now(UTC).date().isoformat()
    assert result.exit_code == 0 and f"payments.remind {today}: queued" in result.output, result.output
    run, = runs(live, "payments.remind")
    assert run.queued and run.started_at is None and run.outcome is None  # claimed, waiting for the worker
    code, out = finish(start(["worker", "--burst"], flask_env(live, tmp_path, REDIS_URL=REDIS,
                                                              RQ_QUEUE_PREFIX=queue_prefix)))
    assert code == 0, out
    run, = runs(live, "payments.remind")
    assert run.outcome == "ok" and run.detail == f"0 reminder(s) queued in the outbox, as of {today}"


@pytest.mark.no_db
def test_a_run_queued_by_a_release_before_the_move_is_run_by_todays_worker(live, another_app, tmp_path, queue_prefix):
    """Releases before 0.36.0 queued `core.scheduler.run_claimed`; the worker started after the upgrade still runs
    it (operations.jobs.MOVED_JOBS)."""
    from operations import jobs

    app = another_app(SQLALCHEMY_DATABASE_URI=live.config["SQLALCHEMY_DATABASE_URI"], REDIS_URL=REDIS,
                      RQ_QUEUE_PREFIX=queue_prefix, BASE_URL="http://gambit.test")
    result = app.test_cli_runner().invoke(args=["scheduler", "--once"])
    assert result.exit_code == 0, result.output
    run, = runs(live, "payments.remind")
    with app.app_context():
        [(name, queued)] = [(name, job) for name in jobs.QUEUES for job in jobs.queue(name).jobs
                            if job.args == (run.id,)]
        assert queued.func_name == "operations.scheduler.run_claimed"
        queued.delete()
        jobs.enqueue("core.scheduler.run_claimed", run.id, queue_=name)
    code, out = finish(start(["worker", "--burst"], flask_env(live, tmp_path, REDIS_URL=REDIS,
                                                              RQ_QUEUE_PREFIX=queue_prefix)))
    assert code == 0, out
    run, = runs(live, "payments.remind")
    today = datetime.now(UTC).date().isoformat()
    assert run.outcome == "ok" and run.detail == f"0 reminder(s) queued in the outbox, as of {today}"
