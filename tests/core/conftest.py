"""Fixtures of the core tests: `queue_prefix`, queues of the test's own on the real Redis."""

import pytest
import redis

from tests.scheduling import REDIS, unique_prefix


@pytest.fixture
def queue_prefix():
    """An RQ_QUEUE_PREFIX of the test's own on the Redis tests.scheduling.REDIS names; its keys are deleted after."""
    connection = redis.Redis.from_url(REDIS)
    try:
        connection.ping()
    except redis.ConnectionError:
        pytest.fail("Redis is not running on 127.0.0.1:6379 (make test and .ci/run start it)")
    prefix = unique_prefix()
    yield prefix
    for key in connection.scan_iter(f"*{prefix}*"):
        connection.delete(key)
    connection.close()
