"""A bid's compliance report is kept with it when a service changes it (bids.judged), and the bid list and the bid's
page read it instead of judging again: it must always be the report the rules give now, through every kind of change,
and a report that no longer holds (a write outside the services, a document, an amendment, a day) is judged anew."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from sqlalchemy import update

from accounts.models import User
from bids import judged, services
from bids.models import Bid
from bids.queries import bid_rows
from bids.rules import is_compliant
from core.db import db, utcnow
from events.models import Event
from tests.bids.factories import valid_bid
from tests.pdfs import valid_pdf


def _report(findings) -> list[dict]:
    return [f.as_dict() for f in findings]


def _same_as_judged_now(bid: Bid, *days) -> bool:
    """The report the bid's page shows on each of `days` is the one the rules give on that day; True when it was
    read from the report kept (on the first day)."""
    for day in days:
        assert _report(judged.findings_of(bid, today=day)) == _report(judged.judge(bid, today=day)), day
    return judged.kept_findings(bid.judged_report, bid.judged_key, bid.judged_on, key=judged.bid_key(bid),
                                today=days[0]) is not None


def _draft(app, make, practice, *, now):
    owner = db.session.get(User, make.user(email="judged@example.org", roles=("bidder",)))
    event = db.session.get(Event, practice)
    return owner, event, services.create_bid(event, owner=owner, actor=owner, now=now)


def test_the_report_kept_is_the_report_judged_now_through_every_change(app, make, practice):
    with app.app_context():
        now = utcnow()
        today = now.date()
        owner, event, bid = _draft(app, make, practice, now=now)
        assert _same_as_judged_now(bid, today, today + timedelta(days=400))  # kept at creation
        reg = event.regulation
        data = valid_bid(reg, signed_on=today)
        services.save_section(bid, "dates_venue", {"venue_city": data.venue_city, "venue_country": data.venue_country,
                                             "venue_name": data.venue_name},
                              actor=owner, now=now, revision=bid.revision)
        assert _same_as_judged_now(bid, today)
        # A write outside the services (a script, the demo): the report is forgotten, the page judges the bid.
        bid.prize_fund_eur = reg.prize_fund.minimum
        db.session.flush()
        assert bid.judged_key is None and not _same_as_judged_now(bid, today)
        judged.keep(bid, now=now)
        assert _same_as_judged_now(bid, today)
        services.apply_data(bid, data)  # every field and the room rates, set beneath the services
        db.session.flush()
        assert bid.judged_key is None and not _same_as_judged_now(bid, today)
        services.save_section(bid, "signature", {"signatory_name": "A. Signer"}, actor=owner, now=now,
                              revision=bid.revision)
        assert _same_as_judged_now(bid, today)
        letter_missing = {f["code"]: f["outcome"] for f in _report(judged.findings_of(bid, today=today))}
        assert letter_missing["15.2k.signed_letter"] == "fail"
        for kind in ("signed_letter", "guarantee"):
            services.store_document(bid, kind, filename="x.pdf", content=valid_pdf(),
                                    upload_dir=app.config["UPLOAD_DIR"], max_bytes=10**6, actor=owner, now=now)
            assert _same_as_judged_now(bid, today)
        outcomes = {f["code"]: f["outcome"] for f in _report(judged.findings_of(bid, today=today))}
        assert outcomes["15.2k.signed_letter"] == "pass"
        services.submit_bid(bid, actor=owner, now=now)
        assert bid.status == "submitted" and _same_as_judged_now(bid, today)
        services.reopen_bid(bid, actor=owner, now=now)
        assert bid.status == "draft" and _same_as_judged_now(bid, today)
        services.save_section(bid, "hotel", {"hotel_stars": 3}, actor=owner, now=now, revision=bid.revision,
                              room_rates=[("single", Decimal("1"))])
        assert _same_as_judged_now(bid, today)
        bid.room_rates[0].eur_per_night = Decimal("99999")  # one rate changed beneath the services
        db.session.flush()
        assert bid.judged_key is None and not _same_as_judged_now(bid, today)
        db.session.rollback()


def test_a_document_added_outside_the_services_is_seen(app, make, practice):
    """A document is a row of its own, never deleted: how many and the newest are in the report's key."""
    with app.app_context():
        now = utcnow()
        owner, event, bid = _draft(app, make, practice, now=now)
        assert _same_as_judged_now(bid, now.date())
        from bids.models import BidDocument
        db.session.add(BidDocument(bid_id=bid.id, kind="signed_letter", original_name="x.pdf", stored_name="x",
                                   sha256="0" * 64, size_bytes=1, uploaded_at=now, uploaded_by_id=owner.id))
        db.session.flush()
        db.session.expire(bid, ["documents"])
        assert not _same_as_judged_now(bid, now.date())
        outcomes = {f["code"]: f["outcome"] for f in _report(judged.findings_of(bid, today=now.date()))}
        assert outcomes["15.2k.signed_letter"] == "pass"
        db.session.rollback()


def test_a_signing_date_to_come_is_judged_again_on_that_day(app, make, practice):
    """The only rule that reads the day: a bid signed "tomorrow" fails today and passes from tomorrow on, so the
    report kept today holds today and not tomorrow."""
    with app.app_context():
        now = utcnow()
        today = now.date()
        owner, event, bid = _draft(app, make, practice, now=now)
        services.save_section(bid, "signature", {"signed_on": today + timedelta(days=1)}, actor=owner, now=now,
                              revision=bid.revision)
        signed = {d: {f["code"]: f["outcome"] for f in _report(judged.findings_of(bid, today=d))}["15.2k.signed_on"]
                  for d in (today, today + timedelta(days=1))}
        assert signed == {today: "fail", today + timedelta(days=1): "pass"}
        assert _same_as_judged_now(bid, today, today + timedelta(days=1), today + timedelta(days=30))
        assert judged.kept_findings(bid.judged_report, bid.judged_key, bid.judged_on, key=judged.bid_key(bid),
                                    today=today + timedelta(days=1)) is None
        db.session.rollback()


def test_the_page_the_list_and_the_api_read_the_report_kept(app, client, make, practice, login_as):
    """Wiring: a report kept that says otherwise than the rules (written here beneath the services: every check
    passed) is what the page, the list and the API show while its key holds; a write of the bid outside the
    services makes them judge it again."""
    with app.app_context():
        now = utcnow()
        owner, event, bid = _draft(app, make, practice, now=now)
        services.save_section(bid, "dates_venue", {"venue_city": "Kyiv"}, actor=owner, now=now, revision=bid.revision)
        assert not is_compliant(judged.judge(bid, today=now.date()))
        report = (bid.judged_report.replace('"outcome": "fail"', '"outcome": "pass"')
                  .replace('"outcome": "pending"', '"outcome": "pass"')
                  .replace("the prize fund must be", "THE KEPT REPORT SAYS the prize fund must be"))
        db.session.execute(update(Bid).where(Bid.id == bid.id).values(judged_report=report))
        bid_id = bid.id
        db.session.commit()

    def listed():
        with app.app_context():
            owner = db.session.get(User, db.session.get(Bid, bid_id).owner_id)
            row, = bid_rows(services.bids_visible_to(owner), {e.id: e for e in db.session.scalars(db.select(Event))},
                            today=utcnow().date(), url=str)
            assert row.id == bid_id
            return row.complies, row.open_findings

    def from_the_api():
        body = client.get(f"/api/v1/bids/{bid_id}").get_json()["compliance"]
        return body["compliant"], any("THE KEPT REPORT SAYS" in f["message"] for f in body["findings"])

    login_as("admin")
    assert "THE KEPT REPORT SAYS" in client.get(f"/bids/{bid_id}").get_data(as_text=True)
    assert listed() == (True, 0)
    assert from_the_api() == (True, True)
    with app.app_context():
        db.session.get(Bid, bid_id).venue_name = "Palace of Sports"  # beneath the services
        db.session.commit()
    page = client.get(f"/bids/{bid_id}").get_data(as_text=True)
    assert "THE KEPT REPORT SAYS" not in page and "the prize fund must be" in page
    complies, open_findings = listed()
    assert not complies and open_findings > 0
    assert from_the_api() == (False, False)


def test_an_amendment_judges_every_kept_report_again(runner, app, tmp_path, reg, make, event):
    """A bid keyed in from paper (flask bids import) is judged and its report kept; an amendment raising the minimum
    prize fund (Art. 13.1, through Art. 1.1) changes the regulation in force, so the report kept no longer holds and
    the page judges the bid under the new version."""
    from tests.api.test_bids_api import _imported_bid
    from tests.events.test_amendments import OPTIONS, _changed_file

    bid_id, _, _ = _imported_bid(app, runner, tmp_path, reg, make)
    with app.app_context():
        bid = db.session.get(Bid, bid_id)
        today = utcnow().date()
        assert _same_as_judged_now(bid, today)
        assert {f.code: f.outcome.value for f in judged.findings_of(bid, today=today)}["15.2c.minimum"] == "pass"
    result = runner.invoke(args=["events", "load", str(_changed_file(tmp_path)), *OPTIONS])
    assert result.exit_code == 0, result.output
    with app.app_context():
        bid = db.session.get(Bid, bid_id)
        assert not _same_as_judged_now(bid, today)
        assert {f.code: f.outcome.value for f in judged.findings_of(bid, today=today)}["15.2c.minimum"] == "fail"


def test_a_release_that_changes_the_rules_judges_every_kept_report_again(app, make, practice):
    """The code that judges is in the key: a report kept by another release is not used."""
    with app.app_context():
        now = utcnow()
        owner, event, bid = _draft(app, make, practice, now=now)
        assert _same_as_judged_now(bid, now.date())
        bid.judged_key = bid.judged_key.replace(f"/c{judged.rules_code()}", "/c" + "0" * 16)
        assert not _same_as_judged_now(bid, now.date())
        assert len(judged.rules_code()) == 16 and judged.rules_code() in judged.bid_key(bid)
        db.session.rollback()


def test_the_key_changes_with_each_thing_the_report_was_judged_on():
    """Each value of the key tells two reports apart: the revision, the regulation version in force (a call without
    one is not version 1), how many documents and the newest (a document deleted in SQL and another added keep
    the count: the newest tells them apart)."""
    base = judged.key_of(5, 2, 3, 40)
    others = [judged.key_of(6, 2, 3, 40), judged.key_of(5, 3, 3, 40), judged.key_of(5, 2, 4, 40),
              judged.key_of(5, 2, 3, 41)]
    assert len({base, *others}) == 5
    assert judged.key_of(5, None, 0, None) != judged.key_of(5, 1, 0, None)
    assert judged.key_of(5, 1, 1, None) != judged.key_of(5, 1, 1, 1)
    assert base.endswith(f"/c{judged.rules_code()}")


def test_the_key_of_a_bid_names_its_newest_document(app, make, practice):
    with app.app_context():
        now = utcnow()
        owner, event, bid = _draft(app, make, practice, now=now)
        for kind in ("signed_letter", "guarantee"):
            services.store_document(bid, kind, filename="x.pdf", content=valid_pdf(),
                                    upload_dir=app.config["UPLOAD_DIR"], max_bytes=10**6, actor=owner, now=now)
        ids = [d.id for d in bid.documents]
        assert judged.bid_key(bid) == judged.key_of(bid.revision, event.regulation_version_id, 2, max(ids))
        db.session.rollback()


def test_a_report_without_its_day_or_text_is_not_used():
    """A row whose report has no day it was judged on (or no text) is judged again, never read: the day decides
    whether a date the rules read has passed since."""
    report = '{"findings": [], "turns_on": ["2015-03-01"]}'
    today = utcnow().date()
    assert judged.kept_findings(report, "k", today, key="k", today=today) == []
    assert judged.kept_findings(report, "k", None, key="k", today=today) is None
    assert judged.kept_findings(None, "k", today, key="k", today=today) is None
    assert judged.kept_findings(report, "other", today, key="k", today=today) is None
