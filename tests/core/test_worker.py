"""`flask worker` runs the jobs of every Gambit queue, inside the app; `flask board worker` is the same worker."""

import pytest

from operations import jobs
from tests.scheduling import REDIS, finish, flask_env, start


@pytest.mark.no_db
@pytest.mark.parametrize("command", [["worker", "--burst"], ["board", "worker", "--burst"]])
def test_the_worker_runs_the_jobs_of_every_queue(command, another_app, tmp_path, queue_prefix):
    app = another_app(REDIS_URL=REDIS, RQ_QUEUE_PREFIX=queue_prefix)
    marks = {name: tmp_path / f"{name}.txt" for name in jobs.QUEUES}
    with app.app_context():
        for name, path in marks.items():
            job = jobs.enqueue("tests.scheduling.leave_mark", str(path), f"ran from {name}", queue_=name,
                               job_id=f"mark-{name}")
            assert job.id == f"{queue_prefix}mark-{name}" and job.origin == f"{queue_prefix}{name}"
        # a second request for the same job id is the same job, not a second one
        assert jobs.enqueue("tests.scheduling.leave_mark", "elsewhere", "twice", queue_=jobs.MAIL,
                            job_id=f"mark-{jobs.MAIL}").args[0] == str(marks[jobs.MAIL])
        assert [jobs.queue(name).count for name in jobs.QUEUES] == [1, 1]
    code, out = finish(start(command, flask_env(app, tmp_path, REDIS_URL=REDIS, RQ_QUEUE_PREFIX=queue_prefix)))
    assert code == 0, out
    # each job ran, in the app (it read the app's settings)
    assert {name: path.read_text() for name, path in marks.items()} == {
        "gambit-pdf": f"ran from gambit-pdf {queue_prefix}", "gambit-mail": f"ran from gambit-mail {queue_prefix}"}
    with app.app_context():
        assert [jobs.queue(name).count for name in jobs.QUEUES] == [0, 0]


def test_without_redis_the_worker_says_what_to_set(runner):
    for command in (["worker"], ["board", "worker"]):
        result = runner.invoke(args=command)
        assert result.exit_code == 1
        assert "set REDIS_URL: without it there is no queue to work from" in result.output
