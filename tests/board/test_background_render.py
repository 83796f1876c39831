"""With REDIS_URL set, dossiers render in an RQ worker and the board sees the progress."""

import pytest
import redis
from rq import Queue, SimpleWorker

from tests.conftest import login

pytestmark = pytest.mark.pdf_layout_once

REDIS = "redis://127.0.0.1:6379/14"


@pytest.fixture
def queue():
    connection = redis.Redis.from_url(REDIS)
    try:
        connection.ping()
    except redis.ConnectionError:
        pytest.fail("Redis is not running on 127.0.0.1:6379 (make test and .ci/run start it)")
    connection.flushdb()
    yield Queue("gambit-pdf", connection=connection)
    connection.flushdb()
    connection.close()


def test_the_worker_renders_the_dossier_and_the_page_shows_progress(another_app, scored, make, queue):
    app = another_app(WTF_CSRF_ENABLED=False, REDIS_URL=REDIS)
    make.user(email="bg-board@example.org", roles=("board",), federation="FRA")
    client = app.test_client()
    login(client, "bg-board@example.org")
    url = f"/board/fwwcm-2015/bids/{scored['lviv']}/dossier.pdf"
    waiting = client.get(url)
    assert waiting.status_code == 202
    html = waiting.get_data(as_text=True)
    assert "Preparing the dossier of Ukrainian Chess Federation" in html and 'http-equiv="refresh"' in html
    assert client.get(url).status_code == 202 and queue.count == 1  # the same snapshot is queued once
    with app.app_context():
        SimpleWorker([queue], connection=queue.connection).work(burst=True)
    ready = client.get(url)
    assert ready.status_code == 200 and ready.data.startswith(b"%PDF")
    ready.close()
