"""The whole app crawled as every person meets it (tests/crawl.py), after the whole flow (tests/crawl_world.py), on
the suite's kind of database: no page answers 5xx, every link shown opens, every GET route is asked."""

from __future__ import annotations

import pytest

from tests.crawl import ROLES, crawl
from tests.crawl_world import app_config, build_world, fresh_database, migrate


@pytest.fixture(scope="session")
def crawled_app(database_url, tmp_path_factory, signing_ca):
    """One app on a database of its own holding the whole flow, for the session (made once per run)."""
    from app import create_app
    from core.db import db

    folder = tmp_path_factory.mktemp("crawl")
    with fresh_database(database_url, folder, "crawl") as url:
        application = create_app(app_config(url, folder, signing_ca))
        migrate(application)
        build_world(application)
        yield application
        with application.app_context():
            db.session.remove()
            db.engine.dispose()


@pytest.mark.no_db
def test_every_page_opens_for_every_person_after_the_whole_flow(crawled_app):
    report = crawl(crawled_app, ROLES)
    said = "\n".join(report.failures[:40])
    assert not report.failures, f"{said}\n({len(report.failures)} in all; {report.summary()})"
    routes = {rule.endpoint for rule in crawled_app.url_map.iter_rules() if "GET" in (rule.methods or ())}
    assert routes - report.endpoints == set(), "GET routes never asked"
