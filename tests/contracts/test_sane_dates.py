"""Issue 25, finding 6: a payment dated 0001-01-01 was accepted. Days entered for a payment, a deduction or a
signature are checked for sanity: not before the call existed, not more than SANE_DATE_DAYS_AHEAD days after today.
A sanity check, not an article: the message says so, quotes the day entered, and the form keeps what was typed."""

from datetime import date, timedelta

from sqlalchemy import select

from contracts.models import Payment, PrizeDeduction
from core.db import db
from core.money import format_day
from tests.conftest import utcnow
from tests.contracts.test_contracts_pages import as_user, get, milestone_id, one_time_key, people, post  # noqa: F401


def test_a_payment_dated_before_the_call_existed_is_refused_and_the_form_kept(app, event, people, cf):  # noqa: F811
    contract_id = cf.contract(event, owner_id=people["organizer"], admin_id=people["admin"])
    url = f"/contracts/{contract_id}/milestones/{milestone_id(app, contract_id, 'instalment_1')}"
    admin = as_user(app, people["admin"])
    data = {"received_on": "0001-01-01", "amount": "60000.00", "reference": "UBS 4711", "note": "first part",
            "idempotency_key": one_time_key(get(admin, url))}
    page, _ = post(admin, f"{url}/payments", data, status=422)
    assert ("Sanity check: the day the money was received cannot be 1 January 1 (you entered 0001-01-01): that is "
            "before this call existed (1 March 2015). Check the date.") in page
    assert "Art." not in page.split("Sanity check:")[1].split("Check the date.")[0]  # no article is cited
    assert 'value="0001-01-01"' in page and 'value="60000.00"' in page and 'value="UBS 4711"' in page
    with app.app_context():
        assert db.session.scalars(select(Payment)).first() is None


def test_a_deduction_dated_before_the_call_or_far_in_the_future_is_refused(app, event, people, cf):  # noqa: F811
    contract_id = cf.contract(event, owner_id=people["organizer"], admin_id=people["admin"])
    admin = as_user(app, people["admin"])
    post(admin, f"/contracts/{contract_id}/result", {"winner": "CHN", "decided_in": "tiebreak",
                                                     "completed_on": "2015-10-28", "confirm": "y"})
    url = f"/contracts/{contract_id}/deductions"
    form = {"player": "UKR", "rule": "fine_score_sheet", "amount": "1000.00",
            "reason": "Refused to sign the score sheet of game 3."}
    page, _ = post(admin, url, {**form, "decided_on": "0001-01-01"}, status=422)
    assert ("Sanity check: the day the deduction was decided cannot be 1 January 1 (you entered 0001-01-01): that "
            "is before this call existed (1 March 2015). Check the date.") in page
    assert "Refused to sign the score sheet of game 3." in page
    today = utcnow().date()
    far = today + timedelta(days=app.config["SANE_DATE_DAYS_AHEAD"] + 1)
    page, _ = post(admin, url, {**form, "decided_on": far.isoformat()}, status=422)
    assert (f"Sanity check: the day the deduction was decided cannot be {format_day(far)} (you entered "
            f"{far.isoformat()}): that is more than {app.config['SANE_DATE_DAYS_AHEAD']} days after today "
            f"({format_day(today)}). Check the date.") in page
    with app.app_context():
        assert db.session.scalars(select(PrizeDeduction)).first() is None
    post(admin, url, {**form, "decided_on": "2015-10-20"})  # a sane day is recorded
    with app.app_context():
        assert db.session.scalars(select(PrizeDeduction.decided_on)).one() == date(2015, 10, 20)


def test_a_countersignature_dated_before_the_call_existed_is_refused(app, practice, people, cf,  # noqa: F811
                                                                     signing_ca):
    """The signer's software wrote the day of signing; one before the call existed is a clock (or a key) to check.
    Here a practice call (its bid deadline ahead) whose record says it was created after today: today's signature
    is dated before it."""
    event = practice
    import io

    from contracts import queries
    from contracts.models import Contract
    from events.models import Event
    from evidence import signing, trust
    from tests.signing import sign, trusted_signer

    contract_id = cf.contract(event, owner_id=people["organizer"], admin_id=people["admin"])
    later = utcnow() + timedelta(days=40)
    with app.app_context():
        trust.add_certificate(signing.pem(signing_ca.ca), actor=None, now=utcnow())
        db.session.get(Event, event).created_at = later
        existed = min(later.date(), db.session.get(Event, event).regulation.event.bid_deadline.date())
        issued = queries.pdf_path(app.config["UPLOAD_DIR"], db.session.get(Contract, contract_id)).read_bytes()
        db.session.commit()
    signed = sign(issued, trusted_signer(signing_ca, "Anna Organizer", "Lviv Chess"), field="Organizer")
    admin = as_user(app, people["admin"])
    response = admin.post(f"/contracts/{contract_id}/sign", data={"file": (io.BytesIO(signed), "signed.pdf")},
                          content_type="multipart/form-data")
    assert response.status_code == 422
    today = utcnow().date()
    assert (f"Sanity check: the day Anna Organizer (Lviv Chess) signed cannot be {format_day(today)} (you entered "
            f"{today.isoformat()}): that is before this call existed ({format_day(existed)}). Check the date."
            ) in response.get_data(as_text=True)
    with app.app_context():
        assert db.session.get(Contract, contract_id).status == "issued"
