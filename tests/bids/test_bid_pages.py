"""A federation fills in its bid in the browser over several sittings, sees compliance and cost, submits."""

import dataclasses
import re
from datetime import date, timedelta

import pytest
from sqlalchemy import select

from bids.models import Bid, BidDocument, BidVersion
from core.db import db, utcnow
from core.federations import country_names
from core.money import format_day, format_eur
from events.models import Event
from events.rules import SCHEDULE_SHOWN_BELOW_DAYS
from evidence.audit import AuditEntry
from tests.bids.factories import valid_bid
from tests.bids.web import PDF, fill_bid, fill_section, revision, section_posts, start_bid, upload
from tests.conftest import login


@pytest.fixture(autouse=True)
def preg(app, practice):
    with app.app_context():
        return db.session.get(Event, practice).regulation


@pytest.fixture
def good(preg):
    return valid_bid(preg, signed_on=utcnow().date())


def _bid(app, bid_id):
    with app.app_context():
        return db.session.get(Bid, bid_id)


def test_federation_fills_in_over_two_sittings_and_submits(client, app, login_as, good):
    login_as("bidder", email="ukr@example.org", federation="UKR", applicant_type="federation",
             organisation="Ukrainian Chess Federation")
    bid_id = start_bid(client)
    fill_bid(client, bid_id, good, only=("applicant", "dates_venue", "money"))
    client.post("/logout")
    assert login(client, "ukr@example.org").status_code == 302
    page = client.get(f"/bids/{bid_id}/edit/money").get_data(as_text=True)
    assert f'value="{good.prize_fund_eur}"' in page  # what was typed in the first sitting is there
    dates = client.get(f"/bids/{bid_id}/edit/dates_venue").get_data(as_text=True)
    assert "Game 10, 15:00" in dates and "Closing ceremony" in dates  # the day-by-day schedule of Art. 2.2
    fill_bid(client, bid_id, good, only=("commitments", "hotel", "inspection", "guarantee", "signature",
                                         "evaluation"))
    view = client.get(f"/bids/{bid_id}").get_data(as_text=True)
    assert "2 requirements not met." in view and "the bank guarantee must be attached" in view
    assert upload(client, bid_id, "signed_letter").status_code == 302
    assert upload(client, bid_id, "guarantee", name="guarantee.pdf").status_code == 302
    view = client.get(f"/bids/{bid_id}").get_data(as_text=True)
    assert "Every requirement is met." in view
    assert "What the organiser commits to pay" in view and "€40,000.00" in view  # FIDE's 20% (Art. 13.2)
    response = client.post(f"/bids/{bid_id}/submit")
    assert response.status_code == 302
    bid = _bid(app, bid_id)
    assert bid.status == "submitted" and bid.version == 1
    with app.app_context():
        version = db.session.scalars(select(BidVersion).where(BidVersion.bid_id == bid_id)).one()
        assert version.compliant and version.data_dict["prize_fund_eur"] == str(good.prize_fund_eur)
        assert {d["kind"] for d in version.documents_list} == {"signed_letter", "guarantee"}


def test_a_double_click_submits_once(client, app, login_as, good):
    login_as("bidder")
    bid_id = start_bid(client)
    fill_bid(client, bid_id, good)
    upload(client, bid_id, "signed_letter")
    upload(client, bid_id, "guarantee")
    first = client.post(f"/bids/{bid_id}/submit")
    second = client.post(f"/bids/{bid_id}/submit", follow_redirects=True)
    assert first.status_code == 302
    assert "This bid was already submitted." in second.get_data(as_text=True)
    with app.app_context():
        assert db.session.scalars(select(BidVersion).where(BidVersion.bid_id == bid_id)).all().__len__() == 1


def test_submit_refuses_a_bid_that_breaks_a_rule_and_says_which(client, login_as, good):
    login_as("bidder")
    bid_id = start_bid(client)
    fill_bid(client, bid_id, dataclasses.replace(good, prize_fund_eur=good.prize_fund_eur - 1))
    upload(client, bid_id, "signed_letter")
    upload(client, bid_id, "guarantee")
    html = client.post(f"/bids/{bid_id}/submit", follow_redirects=True).get_data(as_text=True)
    assert "The bid cannot be submitted yet" in html
    assert "Art. 15.2(c): the prize fund must be at least €200,000.00 net of local taxes (you entered " \
           "€199,999.00)." in html.replace("&#39;", "'")


def test_a_validators_message_then_a_fix(client, login_as, good):
    login_as("bidder")
    bid_id = start_bid(client)
    values = section_posts(good)["money"]
    response = fill_section(client, bid_id, "money", {**values, "prize_fund_eur": "200 000"})
    html = response.get_data(as_text=True)
    assert response.status_code == 422
    assert "do not use thousand separators" in html and 'value="200 000"' in html
    assert f'value="{good.fide_contribution_eur}"' in html  # the other value typed is still there
    assert fill_section(client, bid_id, "money", values).status_code == 302


@pytest.mark.parametrize("field, bad, message", [
    ("prize_fund_eur", "abc", "Enter the amount in euros as digits only"),
    ("prize_fund_eur", "1e309", "Enter the amount in euros as digits only"),
    ("prize_fund_eur", "NaN", "Enter the amount in euros as digits only"),
    ("prize_fund_eur", "-5", "The amount cannot be negative (you entered '-5')."),
    ("prize_fund_eur", "10^15", "Enter the amount in euros as digits only"),
    ("prize_fund_eur", "200,000", "do not use thousand separators"),
    ("prize_fund_eur", "1" * 16, "The amount is too large"),
])
def test_bad_amounts_get_a_message_beside_the_field_and_nothing_is_lost(client, login_as, good, field, bad,
                                                                         message):
    login_as("bidder")
    bid_id = start_bid(client)
    values = {**section_posts(good)["money"], field: bad}
    response = fill_section(client, bid_id, "money", values)
    html = response.get_data(as_text=True).replace("&#39;", "'")
    assert response.status_code == 422
    assert message in html
    assert f'value="{bad}"' in html


@pytest.mark.parametrize("section, values, message", [
    ("dates_venue", {"opening_date": "2027-02-30"}, "Enter a real date as YYYY-MM-DD"),
    ("hotel", {"hotel_stars": "four"}, "Enter a whole number, for example 2 (you entered 'four')."),
    ("hotel", {"hotel_stars": "7"}, "A hotel category is a whole number of stars from 1 to 5."),
    ("applicant", {"contact_email": "nope"}, "Enter a valid email address"),
    ("applicant", {"applicant_name": "x" * 1_000_000}, "Keep this under 200 characters."),
    ("evaluation", {"eval_visas": "y" * 5001}, "Keep this under 5,000 characters"),
])
def test_bad_input_in_other_sections(client, login_as, good, section, values, message):
    login_as("bidder")
    bid_id = start_bid(client)
    response = fill_section(client, bid_id, section, {**section_posts(good)[section], **values})
    assert response.status_code == 422
    assert message in response.get_data(as_text=True).replace("&#39;", "'")


def test_script_in_a_text_field_is_stored_as_text_and_shown_escaped(client, login_as, good):
    login_as("bidder")
    bid_id = start_bid(client)
    fill_section(client, bid_id, "dates_venue", {**section_posts(good)["dates_venue"],
                                                 "venue_name": "<script>alert('x')</script>"})
    html = client.get(f"/bids/{bid_id}/edit/dates_venue").get_data(as_text=True)
    assert "<script>alert" not in html
    assert 'value="&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"' in html


def test_a_save_from_a_stale_tab_is_refused_and_its_values_shown(client, login_as, good):
    login_as("bidder")
    bid_id = start_bid(client)
    stale = revision(client, bid_id, "money")
    fill_section(client, bid_id, "money", section_posts(good)["money"])
    response = client.post(f"/bids/{bid_id}/edit/money", data={"revision": stale, "prize_fund_eur": "333333.00"})
    html = response.get_data(as_text=True)
    assert response.status_code == 409
    assert "was changed in another window" in html and 'value="333333.00"' in html


def test_documents_are_checked_by_content_not_name(client, app, login_as, tmp_path):
    login_as("bidder")
    bid_id = start_bid(client)
    html = upload(client, bid_id, "signed_letter", b"just some text\n", "letter.pdf")
    page = client.get(html.location).get_data(as_text=True)
    assert "is not a PDF (its content does not start like a PDF, whatever its name)" in page
    upload(client, bid_id, "signed_letter", PDF, "../../etc/evil name.pdf")
    with app.app_context():
        doc = db.session.scalars(select(BidDocument).where(BidDocument.bid_id == bid_id)).one()
        assert doc.original_name == "evil name.pdf"
        assert re.fullmatch(r"[0-9a-f]{32}\.pdf", doc.stored_name)
    download = client.get(f"/bids/{bid_id}/documents/{doc.id}")
    assert download.status_code == 200 and download.data == PDF
    assert download.headers["Content-Disposition"].startswith("attachment")
    download.close()


def test_an_upload_over_the_limit_gets_a_message(client, app, login_as):
    login_as("bidder")
    bid_id = start_bid(client)
    big = PDF + b"0" * (app.config["MAX_UPLOAD_MB"] * 1024 * 1024 + 10)
    response = upload(client, bid_id, "signed_letter", big)
    page = client.get(response.location).get_data(as_text=True)
    assert "above the limit of 10 MB" in page


def test_an_upload_far_over_the_limit_is_a_clear_413(client, app, login_as):
    login_as("bidder")
    bid_id = start_bid(client)
    huge = PDF + b"0" * (app.config["MAX_CONTENT_LENGTH"] + 1)
    response = upload(client, bid_id, "signed_letter", huge)
    assert response.status_code in (302, 413)
    text = (client.get(response.location) if response.status_code == 302 else response).get_data(as_text=True)
    assert "larger than the limit of 10 MB" in text


def test_bidders_never_see_another_bidders_bid(client, app, login_as, make, good):
    login_as("bidder", email="first@example.org")
    bid_id = start_bid(client)
    upload(client, bid_id, "signed_letter")
    with app.app_context():
        doc_id = db.session.scalars(select(BidDocument.id)).first()
    other = app.test_client()
    make.user(email="second@example.org")
    login(other, "second@example.org")
    for url in (f"/bids/{bid_id}", f"/bids/{bid_id}/edit/money", f"/bids/{bid_id}/documents/{doc_id}",
                f"/api/v1/bids/{bid_id}", f"/api/v1/bids/{bid_id}/obligations"):
        assert other.get(url).status_code == 404, url
    assert other.post(f"/bids/{bid_id}/submit").status_code == 404
    assert "first@example.org" not in other.get("/bids/").get_data(as_text=True)


def test_reviewers_see_submitted_bids_but_not_drafts(client, app, login_as, make):
    login_as("bidder")
    bid_id = start_bid(client)
    wcoc = app.test_client()
    make.user(email="w@example.org", roles=("wcoc",))
    login(wcoc, "w@example.org")
    assert wcoc.get(f"/bids/{bid_id}").status_code == 404
    with app.app_context():
        bid = db.session.get(Bid, bid_id)
        bid.status, bid.first_submitted_at = "submitted", utcnow()
        db.session.commit()
    response = wcoc.get(f"/bids/{bid_id}")
    assert response.status_code == 302 and "/scoring/conflicts" in response.location  # declare first
    with app.app_context():
        from accounts.services import find_user_by_email
        from scoring.queries import bids_before_reviewers
        from scoring.services import declare_conflicts

        member = find_user_by_email("w@example.org")
        event = db.session.get(Bid, bid_id).event
        listed = bids_before_reviewers(event)
        declare_conflicts(event, member, has_conflict=False, conflicted=[], reason="", listed=listed,
                          actor=member, now=utcnow())
        db.session.commit()
    assert wcoc.get(f"/bids/{bid_id}").status_code == 200
    assert wcoc.get(f"/bids/{bid_id}/edit/money").status_code == 403


def test_reopen_makes_a_new_version_and_keeps_the_old(client, app, login_as, good):
    login_as("bidder")
    bid_id = start_bid(client)
    fill_bid(client, bid_id, good)
    upload(client, bid_id, "signed_letter")
    upload(client, bid_id, "guarantee")
    client.post(f"/bids/{bid_id}/submit")
    assert client.post(f"/bids/{bid_id}/edit/money", data={"revision": "99"}).status_code in (302, 409)
    client.post(f"/bids/{bid_id}/reopen")
    assert _bid(app, bid_id).status == "draft"
    fill_section(client, bid_id, "money", {**section_posts(good)["money"], "prize_fund_eur": "250000.00",
                                           "fide_contribution_eur": "50000.00"})
    fill_section(client, bid_id, "guarantee", {**section_posts(good)["guarantee"],
                                               "guarantee_amount_eur": "300000.00"})
    client.post(f"/bids/{bid_id}/submit")
    bid = _bid(app, bid_id)
    assert bid.status == "submitted" and bid.version == 2
    v1 = client.get(f"/bids/{bid_id}/versions/1").get_data(as_text=True)
    v2 = client.get(f"/bids/{bid_id}/versions/2").get_data(as_text=True)
    assert format_eur(good.prize_fund_eur) in v1 and "€250,000.00" in v2


def test_the_submitted_version_reads_like_the_form(client, app, login_as, good):
    """Issue 14, item 7: the form's labels in the form's order, values as people read them, no internals."""
    login_as("bidder")
    bid_id = start_bid(client)
    fill_bid(client, bid_id, good)
    upload(client, bid_id, "signed_letter")
    upload(client, bid_id, "guarantee")
    assert client.post(f"/bids/{bid_id}/submit").status_code == 302
    page = client.get(f"/bids/{bid_id}/versions/1").get_data(as_text=True)
    facts = re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", page)
    shown = dict(facts)
    labels = [label for label, _ in facts]
    assert labels.index("Legal name of the applicant") < labels.index("Opening ceremony") \
        < labels.index("Prize fund (euros)") < labels.index("Name of the official hotel") \
        < labels.index("Valid until") < labels.index("Date signed")
    assert shown["Prize fund (euros)"] == format_eur(good.prize_fund_eur)
    assert shown["Contribution to FIDE (euros)"] == format_eur(good.fide_contribution_eur)
    assert shown["Opening ceremony"] == format_day(good.opening_date)
    assert shown["Both amounts are net of all applicable local taxes"] == "Yes"
    assert shown["Do you offer a bank guarantee?"] == "Yes"
    assert shown["Country"] == country_names()[good.venue_country]
    assert shown["The applicant is"] == "A FIDE member federation"
    assert shown["Special room rates for visitors, meals included"].startswith(
        f"{good.room_rates[0].room_type}: {format_eur(good.room_rates[0].eur_per_night)}")
    assert "The signed bid letter: letter.pdf" in page and "The bank guarantee:" in page
    # The labels' citations are filled in from the call (a placeholder such as "{criterion:a}" is an internal too).
    for internal in ("Fide contribution eur", "Ioc conflict free", "True", "signed_letter:", "{criterion:", "{cite:",
                     "{art:", good.opening_date.isoformat(), f">{good.prize_fund_eur}<"):
        assert internal not in page, internal


def test_withdraw_before_the_deadline(client, app, login_as, good):
    login_as("bidder")
    bid_id = start_bid(client)
    fill_bid(client, bid_id, good)
    upload(client, bid_id, "signed_letter")
    upload(client, bid_id, "guarantee")
    client.post(f"/bids/{bid_id}/submit")
    client.post(f"/bids/{bid_id}/withdraw")
    assert _bid(app, bid_id).status == "withdrawn"
    html = client.post(f"/bids/{bid_id}/submit", follow_redirects=True).get_data(as_text=True)
    assert "A withdrawn bid cannot be submitted." in html


def test_no_new_bid_after_the_deadline(client, login_as, event):
    login_as("bidder")
    response = client.post("/events/fwwcm-2015/bids/new", follow_redirects=True)
    assert ("The bid deadline (31 May 2015, 23:59 UTC; Bidding procedure: bid deadline) has passed: a draft can no longer be started. The secretariat "  # noqa: E501
            "can admit a late bid, with its reason, until scoring opens.") in response.get_data(as_text=True)


def test_admin_rejects_with_a_reason_and_the_bidder_is_emailed(client, app, login_as, make, good, smtp):
    login_as("bidder", email="bidder-x@example.org")
    bid_id = start_bid(client)
    fill_bid(client, bid_id, good)
    upload(client, bid_id, "signed_letter")
    upload(client, bid_id, "guarantee")
    client.post(f"/bids/{bid_id}/submit")
    admin = app.test_client()
    make.user(email="sec@example.org", roles=("admin",))
    login(admin, "sec@example.org")
    refused = admin.post(f"/bids/{bid_id}/reject", data={"reason": "  "})
    assert refused.status_code == 422
    assert "Give the reason for the rejection" in refused.get_data(as_text=True)
    admin.post(f"/bids/{bid_id}/reject", data={"reason": "The venue cannot host the match in October."})
    bid = _bid(app, bid_id)
    assert bid.status == "rejected" and bid.rejection_reason.startswith("The venue")
    assert "The venue cannot host the match in October." in client.get(f"/bids/{bid_id}").get_data(as_text=True)
    assert len(smtp.deliver()) == 1
    message = smtp.deliver()[0]
    assert "bidder-x@example.org" in message["To"] and "rejected" in message["Subject"]
    assert "The venue cannot host the match in October." in message.get_content()


def test_admin_records_the_host_federations_answer_on_a_sponsors_bid(client, app, login_as, make, good):
    """Art. 15.1: "FIDE shall consult the federation where the sponsor proposes to hold the FWWCM. If the
    federation refuses or is unable to co-operate, FIDE may still accept a proposal from a potential sponsor." """
    login_as("bidder")
    bid_id = start_bid(client)
    with app.app_context():
        db.session.get(Bid, bid_id).applicant_type = "sponsor"
        db.session.commit()
    admin = app.test_client()
    make.user(email="sec@example.org", roles=("admin",))
    login(admin, "sec@example.org")
    too_long = admin.post(f"/bids/{bid_id}/consultation", data={"outcome": "refused", "note": "é" * 6000})
    assert too_long.status_code == 422 and "é" * 6000 in too_long.get_data(as_text=True)  # nothing lost
    admin.post(f"/bids/{bid_id}/consultation", data={"outcome": "refused", "note": "Letter of 2 May"})
    assert _bid(app, bid_id).consultation == "refused"
    html = admin.get(f"/bids/{bid_id}").get_data(as_text=True)
    assert ("Art. 15.1: The federation refused to co-operate (Letter of 2 May). FIDE may still accept the "
            "sponsor&#39;s proposal; until it records that it does, the bid cannot be selected.") in html
    # the sponsor sees where it stands too, without the secretariat's form
    own = client.get(f"/bids/{bid_id}").get_data(as_text=True)
    assert "FIDE may still accept the sponsor&#39;s proposal" in own and 'id="consultation-form"' not in own


def test_admin_keys_in_a_paper_bid_after_the_deadline_and_submits_it_once_admitted_late(client, app, login_as,
                                                                                      event, reg):
    admin_id = login_as("admin")
    response = client.post("/admin/events/fwwcm-2015/paper-bid", data={"owner": ""})
    assert response.status_code == 302
    bid_id = int(re.search(r"/bids/(\d+)/", response.location).group(1))
    data = valid_bid(reg, signed_on=utcnow().date() - timedelta(days=1))
    fill_bid(client, bid_id, data)
    upload(client, bid_id, "signed_letter")
    upload(client, bid_id, "guarantee")
    refused = client.post(f"/bids/{bid_id}/submit", follow_redirects=True).get_data(as_text=True)
    assert ("The bid deadline (31 May 2015, 23:59 UTC; Bidding procedure: bid deadline) has passed: a bid can no longer be submitted. The secretariat "  # noqa: E501
            "can admit a late bid, with its reason, until scoring opens.") in refused
    assert _bid(app, bid_id).status == "draft"
    assert "Admit the bid late" in refused
    blank = client.post(f"/bids/{bid_id}/admit-late", data={"reason": " "})
    assert blank.status_code == 422 and "Say why the bid is admitted after the deadline" in blank.get_data(as_text=True)
    client.post(f"/bids/{bid_id}/admit-late", data={"reason": "Posted on 29 May 2015; the post office stamp shows it."})
    client.post(f"/bids/{bid_id}/submit")
    bid = _bid(app, bid_id)
    assert bid.status == "submitted" and bid.late_admitted_by_id == admin_id
    with app.app_context():
        version = db.session.scalars(select(BidVersion).where(BidVersion.bid_id == bid_id)).one()
        assert version.submitted_by_id == admin_id
        actions = db.session.scalars(select(AuditEntry.action).where(AuditEntry.object_type == "Bid",
                                                                     AuditEntry.object_id == str(bid_id))).all()
    assert actions.index("bid.late_admission") < actions.index("bid.submit")


def test_every_change_is_in_the_audit_log(client, app, login_as, good):
    login_as("bidder")
    bid_id = start_bid(client)
    fill_bid(client, bid_id, good, only=("money",))
    upload(client, bid_id, "signed_letter")
    with app.app_context():
        actions = db.session.scalars(select(AuditEntry.action).where(AuditEntry.object_type == "Bid",
                                                                     AuditEntry.object_id == str(bid_id))).all()
    assert actions == ["bid.create", "bid.save", "bid.document"]


def test_a_prize_fund_above_the_sanity_bound_is_shown_as_a_warning_and_the_bid_can_still_be_submitted(
        client, app, login_as):
    """Art. 15.2(c): "Proposed prize fund for the players (minimum 200,000 euros ...)": no maximum. A very large
    figure is Gambit's sanity check: shown beside the field as a warning, never a refusal."""
    login_as("bidder")
    bid_id = start_bid(client)
    response = fill_section(client, bid_id, "money", {"prize_fund_eur": "60000000.00",
                                                      "fide_contribution_eur": "12000000.00",
                                                      "amounts_net_of_taxes": "y"})
    assert response.status_code == 302
    html = client.get(f"/bids/{bid_id}/edit/money").get_data(as_text=True)
    assert ("Sanity check: prize fund figure: a prize fund above €50,000,000.00 is unusual: please check the "
            "figure (a warning, not a requirement of the regulations) (you entered €60,000,000.00).") in html
    assert "Art. 15.2(c): the prize fund can be at most" not in html
    with app.app_context():
        from bids.models import Bid
        from bids.rules import is_compliant
        from bids.services import compliance
        from core.db import db

        findings = compliance(db.session.get(Bid, bid_id), today=date.today())
        assert not any(f.code == "15.2c.maximum" and f.blocks_submission for f in findings)
        assert is_compliant([f for f in findings if f.code.startswith("15.2c")])


@pytest.mark.parametrize(("span", "shown"), [(SCHEDULE_SHOWN_BELOW_DAYS - 1, True), (SCHEDULE_SHOWN_BELOW_DAYS, False)])
def test_the_day_by_day_schedule_is_shown_only_for_a_plausible_span_of_dates(client, login_as, good, span, shown):
    """Gambit's sanity check (events.rules.SCHEDULE_SHOWN_BELOW_DAYS), not a rule: a closing ceremony that far
    after the opening is a slip in a date, and both pages leave the programme out rather than stretch it."""
    login_as("bidder")
    bid_id = start_bid(client)
    dated = dataclasses.replace(good, closing_date=good.opening_date + timedelta(days=span))
    response = fill_section(client, bid_id, "dates_venue", section_posts(dated)["dates_venue"])
    assert response.status_code == 302
    edit = client.get(f"/bids/{bid_id}/edit/dates_venue").get_data(as_text=True)
    view = client.get(f"/bids/{bid_id}").get_data(as_text=True)
    assert ("Your dates under the schedule of Art." in edit) is shown
    assert ("<h2>The schedule</h2>" in view) is shown  # its source beside it (issue 36)
    assert ("Game 10, 15:00" in view) is shown


def test_the_inspection_invitation_covers_all_expenses_not_only_travel_and_hotel(client, login_as, good, preg):
    """Art. 15.4: "Each proposal shall be accompanied by an invitation to at least two members of the WCOC to inspect
    the proposed venue and examine the other conditions, with all expenses paid by the bidder." (Art. 15.2(i) names
    the travel and hotel expenses; 15.4 asks for all of them.)"""
    login_as("bidder")
    bid_id = start_bid(client)
    form = client.get(f"/bids/{bid_id}/edit/inspection").get_data(as_text=True)
    assert "All their expenses (travel, hotel and every other) are paid by the bidder" in form
    fill_bid(client, bid_id, dataclasses.replace(good, inspection_expenses_covered=False))
    upload(client, bid_id, "signed_letter")
    upload(client, bid_id, "guarantee")
    html = client.post(f"/bids/{bid_id}/submit", follow_redirects=True).get_data(as_text=True)
    assert (f"Art. {preg.inspection.article}: the bidder must pay all expenses of the inspection: the travel and "
            f"hotel expenses, and, as Art. {preg.inspection.also_article} requires, every other expense.") in html
    public = client.get(f"/events/{preg.event.slug}").get_data(as_text=True)
    assert "with all expenses paid by the bidder (travel and hotel, and every other)" in public


def test_the_compliance_report_never_leaves_the_entered_cell_blank(client, app, login_as):
    login_as("bidder", email="ukr2@example.org", federation="UKR", applicant_type="federation",
             organisation="Ukrainian Chess Federation")
    bid_id = start_bid(client)
    view = client.get(f"/bids/{bid_id}").get_data(as_text=True)
    table = view.split('<table class="table compliance stack">', 1)[1].split("</table>", 1)[0]
    cells = re.findall(r'<tr class="outcome-row-[^"]*">\s*<td[^>]*>.*?</td>\s*<td[^>]*>.*?</td>\s*<td[^>]*>(.*?)</td>',
                       table, re.S)
    assert cells and all(c.strip() for c in cells)
    assert "nothing entered" in cells


def test_the_country_is_asked_for_by_name_not_by_iso_code(client, app, login_as):
    login_as("bidder", email="ukr3@example.org", federation="UKR", applicant_type="federation",
             organisation="Ukrainian Chess Federation")
    bid_id = start_bid(client)
    form = client.get(f"/bids/{bid_id}/edit/dates_venue").get_data(as_text=True)
    select = re.search(r'<select[^>]*name="venue_country".*?</select>', form, re.S).group(0)
    assert '<option value="UA">Ukraine</option>' in select
    view = client.get(f"/bids/{bid_id}").get_data(as_text=True)
    assert "the bid must give the country of the proposed venue: choose it from the list of countries" in view
    assert "ISO" not in form and "ISO" not in view
