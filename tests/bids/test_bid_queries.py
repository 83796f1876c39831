"""What a bid's page reads (bids.queries): its access step loads of the bid and its call only what the rules of
access read; the page, computed after it in the same request, loads the rest into the same objects."""

from __future__ import annotations

from sqlalchemy import event, inspect

from accounts.models import User
from bids import services
from bids.queries import bid_for_access, bid_for_page
from core.db import db, utcnow
from events.models import Event


def test_the_page_after_the_access_step_has_the_whole_call_without_a_query_of_its_own(app, make, practice):
    owner_id = make.user(email="queries@example.org", roles=("bidder",))
    with app.app_context():
        owner, call = db.session.get(User, owner_id), db.session.get(Event, practice)
        bid_id = services.create_bid(call, owner=owner, actor=owner, now=utcnow()).id
        db.session.commit()
        db.session.expunge_all()
        statements: list[str] = []

        def seen(conn, cursor, statement, *args):
            if statement.startswith("SELECT"):  # not the test's savepoints
                statements.append(statement)

        engine = db.session.get_bind()
        event.listen(engine, "before_cursor_execute", seen)
        try:
            access = bid_for_access(bid_id)
            assert len(statements) == 1 and "regulation_version" not in statements[0]  # the call's id, state, slug
            assert {"title", "regulation_version"} <= inspect(access.event).unloaded
            page = bid_for_page(bid_id)
            assert page is access and len(statements) == 2
            assert not inspect(page.event).unloaded - {"versions"}  # every column and its regulation's version
            assert page.event.title and page.event.regulation_version.sha256 and len(statements) == 2
        finally:
            event.remove(engine, "before_cursor_execute", seen)
