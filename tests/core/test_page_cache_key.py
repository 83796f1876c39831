"""What the key of a versioned page (operations.page_cache.page_key) is made of, as a person's browsers see it: two
browsers of one person never share a copy (each page carries its session's CSRF token), and a page that shows a message
flashed while it was made is never kept nor answered 304."""

from __future__ import annotations

import pytest
from flask import flash, get_flashed_messages, request

from accounts.services import create_user
from core.db import db, utcnow
from operations.page_cache import CACHE_CONTROL, versioned_page
from tests.conftest import csrf_token_from, login
from tests.scoring.factories_scoring import ScoringFactory


def test_two_browsers_of_one_person_never_share_a_copy_of_a_page(app, make, event):
    sf = ScoringFactory(app, make)
    make.user(email="two-browsers@example.org", roles=("admin",))
    bid = sf.bid(event)
    first, second = app.test_client(), app.test_client()
    for browser in (first, second):
        assert login(browser, "two-browsers@example.org").status_code == 302
        browser.get("/")  # the welcome message is shown: the next pages carry none
    for url in (f"/bids/{bid}", "/bids/"):
        mine = first.get(url)
        assert mine.status_code == 200 and "ETag" in mine.headers
        theirs = second.get(url)
        assert theirs.status_code == 200
        # Each page's forms are signed for its own browser's session: the other's copy would carry a stale token.
        assert csrf_token_from(theirs.data) != csrf_token_from(mine.data)
        assert theirs.headers["ETag"] != mine.headers["ETag"]
        # The second browser sending the first one's version is given the page, not a 304.
        again = second.get(url, headers={"If-None-Match": mine.headers["ETag"]})
        assert again.status_code == 200 and csrf_token_from(again.data) == csrf_token_from(theirs.data)
        # Each browser is still answered 304 for its own version, named alone or in a list, weak or strong.
        assert first.get(url, headers={"If-None-Match": mine.headers["ETag"]}).status_code == 304
        listed = f'W/"0000",{theirs.headers["ETag"].removeprefix("W/")}'
        not_modified = second.get(url, headers={"If-None-Match": listed})
        assert not_modified.status_code == 304 and not_modified.headers["ETag"] == theirs.headers["ETag"]
        # What lets a browser keep the page and ask again, and no shared cache hand it to another session.
        assert (not_modified.headers["Vary"], not_modified.headers["Cache-Control"]) == ("Cookie", CACHE_CONTROL)
        assert (theirs.headers["Vary"], theirs.headers["Cache-Control"]) == ("Cookie", CACHE_CONTROL)


@pytest.mark.no_db
def test_a_page_that_flashes_a_message_while_it_is_made_is_never_kept_nor_answered_304(live):
    """A versioned view that flashes as it renders (`?saved=1`), on an app of its own (its routes are added before
    its first request): the page with the message is not the page of that version for the next visit."""

    @live.route("/flashing")
    @versioned_page(access=None)
    def page():
        if request.args.get("saved"):
            flash("The bid was saved.", "success")
        return f"<!doctype html><title>t</title><p>{' '.join(get_flashed_messages()) or 'no message'}</p>"

    with live.app_context():
        create_user(email="flashing@example.org", password="a long enough password", name="F", roles=["admin"],
                    actor=None, now=utcnow())
        db.session.commit()
    browser = live.test_client()
    token = csrf_token_from(browser.get("/login").data)
    assert browser.post("/login", data={"email": "flashing@example.org", "password": "a long enough password",
                                        "csrf_token": token}).status_code == 302
    browser.get("/")  # the welcome message is shown: the next pages carry none
    for _ in range(2):  # each visit flashes its own message: shown, never kept, never given a version
        shown = browser.get("/flashing?saved=1")
        assert shown.status_code == 200 and "The bid was saved." in shown.get_data(as_text=True)
        assert "ETag" not in shown.headers and shown.headers.get("Cache-Control") != CACHE_CONTROL
    plain = browser.get("/flashing")
    assert plain.status_code == 200 and "no message" in plain.get_data(as_text=True)
    etag = plain.headers["ETag"]
    assert browser.get("/flashing", headers={"If-None-Match": etag}).status_code == 304
    with_message = browser.get("/flashing?saved=1", headers={"If-None-Match": etag})
    assert with_message.status_code == 200 and "The bid was saved." in with_message.get_data(as_text=True)
