"""Issue 13, part 3: the earliest decisive game of Art. 3.6.1, and deductions from a player's prize balance under
Art. 3.8.4, 4(b), 5.2 and 7.3.1 recorded with their article and reason — through the result page."""

from datetime import date
from decimal import Decimal

import pytest
from sqlalchemy import select

from contracts.models import Contract, PrizeDeduction
from contracts.queries import status_of
from core.db import db
from evidence.audit import AuditEntry
from tests.contracts.factories_contracts import milestone
from tests.contracts.test_contracts_pages import as_user, get, post

BOOKKEEPING = "Sanity check: bookkeeping of deductions and payments"  # sanity_checks.bookkeeping


@pytest.fixture
def people(cf):
    return {"admin": cf.admin(), "organizer": cf.organizer()}


def test_the_regular_games_decide_the_match_at_game_6_at_the_earliest(app, event, people, cf):
    """Art. 3.6.1: "The FWWCM shall be played over a maximum of ten (10) games and the winner of the match shall be
    the first player to score 5.5 points or more." One point a game: 5.5 points need six games."""
    contract_id = cf.contract(event, owner_id=people["organizer"], admin_id=people["admin"])
    admin = as_user(app, people["admin"])
    # opening on 11 October 2015: game 1 on 12 October, game 5 on 18 October, game 6 on 19 October
    page, _ = post(admin, f"/contracts/{contract_id}/result",
                   {"winner": "CHN", "decided_in": "regular", "completed_on": "2015-10-12", "confirm": "y"},
                   status=422)
    assert ("Art. 3.6.1: the winner is the first player to score 5.5 points, so the regular games cannot decide the "
            "match before game 6 (19 October 2015); 12 October 2015 is game 1.") in page
    page, _ = post(admin, f"/contracts/{contract_id}/result",
                   {"winner": "CHN", "decided_in": "regular", "completed_on": "2015-10-18", "confirm": "y"},
                   status=422)
    assert "18 October 2015 is game 5." in page
    post(admin, f"/contracts/{contract_id}/result", {"winner": "CHN", "decided_in": "regular",
                                                     "completed_on": "2015-10-19", "confirm": "y"})


def _with_result(app, admin, contract_id):
    post(admin, f"/contracts/{contract_id}/result", {"winner": "CHN", "decided_in": "tiebreak",
                                                     "completed_on": "2015-10-28", "confirm": "y"})


def test_a_fine_is_recorded_against_the_prize_balance_with_its_article_and_reason(app, event, people, cf):
    """Art. 4(b): "Unless a player is making an appeal, any player who refuses to sign the score sheets shall be
    penalized with a fine of 1,000 (one thousand) euro." Art. 3.8.4: "the Chief Arbiter shall have the right to
    impose a fine of not more than 5,000 (five thousand) euro." """
    contract_id = cf.contract(event, owner_id=people["organizer"], admin_id=people["admin"])
    admin = as_user(app, people["admin"])
    form = get(admin, f"/contracts/{contract_id}/result")
    assert "Deductions are recorded once the match result is known" in form
    _with_result(app, admin, contract_id)
    url = f"/contracts/{contract_id}/deductions"
    page, _ = post(admin, url, {"player": "UKR", "rule": "fine_playing_conditions", "amount": "5000.01",
                                "decided_on": "2015-10-20", "reason": "Phone in the playing area, game 7."},
                   status=422)
    assert ("Art. 3.8.4: fine for an infringement of the playing conditions is at most €5,000.00 (you entered "
            "€5,000.01).") in page
    assert 'value="Phone in the playing area, game 7."' in page or "Phone in the playing area, game 7." in page
    page, _ = post(admin, url, {"player": "UKR", "rule": "fine_score_sheet", "amount": "500.00",
                                "decided_on": "2015-10-20", "reason": "Refused to sign after game 3."}, status=422)
    assert "Art. 4(b): fine for refusing to sign the score sheets is €1,000.00 (you entered €500.00)." in page
    page, _ = post(admin, url, {"player": "UKR", "rule": "fine_score_sheet", "amount": "1000.00",
                                "decided_on": "2015-10-20", "reason": ""}, status=422)
    assert f"{BOOKKEEPING}: say why the deduction (" in page and "Art. 4(b)) is made" in page
    post(admin, url, {"player": "UKR", "rule": "fine_score_sheet", "amount": "1000.00", "decided_on": "2015-10-20",
                      "reason": "Refused to sign the score sheet of game 3 (Chief Arbiter's report)."})
    page = get(admin, f"/contracts/{contract_id}/result")
    assert "Refused to sign the score sheet of game 3" in page and "<td>4(b)</td>" in page
    with app.app_context():
        c = db.session.get(Contract, contract_id)
        balance = milestone(c, "prize_balance_UKR")
        row = db.session.scalars(select(PrizeDeduction)).one()
        assert (row.article, row.amount, row.milestone_id) == ("4(b)", Decimal("1000.00"), balance.id)
        # FIDE pays the balance less the fine
        assert status_of(balance, date(2015, 11, 1), 7).outstanding == balance.amount - Decimal("1000.00")
        assert db.session.scalars(select(AuditEntry).where(AuditEntry.action == "prize.deduction")).one()
        balance_id, full, owed = balance.id, balance.amount, balance.amount - Decimal("1000.00")
    # Paying the whole balance would pay the fine to the player: refused, saying what is outstanding.
    pay = f"/contracts/{contract_id}/milestones/{balance_id}/payments"
    page, _ = post(admin, pay, {"amount": str(full), "received_on": "2015-11-02", "reference": "FIDE-1",
                                "idempotency_key": "k-full"}, status=422)
    assert "would exceed it" in page
    post(admin, pay, {"amount": str(owed), "received_on": "2015-11-02", "reference": "FIDE-1",
                      "idempotency_key": "k-owed"})
    with app.app_context():
        assert status_of(db.session.get(type(balance), balance_id), date(2015, 11, 3), 7).outstanding == 0
    # Once the balance is paid, nothing is left to take a further fine from.
    page, _ = post(admin, url, {"player": "UKR", "rule": "fine_score_sheet", "amount": "1000.00",
                                "decided_on": "2015-11-03", "reason": "A second refusal."}, status=422)


def test_the_forfeit_of_5_2_goes_5_percent_to_the_organizer_and_5_percent_to_fide_for_each_breach(app, event, people,
                                                                                                   cf):
    """Art. 5.2: "5% of her prize money shall be forfeited to the Organizer and a further 5% to FIDE for each
    breach." """
    contract_id = cf.contract(event, owner_id=people["organizer"], admin_id=people["admin"])
    admin = as_user(app, people["admin"])
    _with_result(app, admin, contract_id)
    url = f"/contracts/{contract_id}/deductions"
    # Hou Yifan won in the tie-breaks, in Ukraine (her opponent's country): her prize money is the 5% of 13.3
    # (10,000) and 55% of the other 190,000 (104,500), 114,500 in all
    page, _ = post(admin, url, {"player": "CHN", "rule": "forfeit_absence_conduct", "amount": "5000.00",
                                "decided_on": "2015-10-30", "reason": "Absent from the closing ceremony."},
                   status=422)
    assert ("Art. 5.2: of the prize money (€114,500.00), 5% to the Organizer (€5,725.00) and 5% to FIDE "
            "(€5,725.00): €11,450.00 for each breach; record one breach at a time (you entered €5,000.00).") in page
    post(admin, url, {"player": "CHN", "rule": "forfeit_absence_conduct", "amount": "11450.00",
                      "decided_on": "2015-10-30", "reason": "Absent from the closing ceremony."})
    page = get(admin, f"/contracts/{contract_id}/result")
    assert "Each breach: 5% to the Organizer; 5% to FIDE." in page
    row = page[page.index('<tr id="deduction-'):]
    row = row[:row.index("</tr>")]
    assert "€5,725.00 to the Organizer (5%)" in row and "€5,725.00 to FIDE (5%)" in row and "€11,450.00" in row
    with app.app_context():
        balance_id = milestone(db.session.get(Contract, contract_id), "prize_balance_CHN").id
    payment_page = get(admin, f"/contracts/{contract_id}/milestones/{balance_id}")
    assert ("Art. 5.2, decided 30 October 2015: €11,450.00 (€5,725.00 to the Organizer; €5,725.00 to FIDE)"
            in payment_page)
    with app.app_context():
        d = db.session.scalars(select(PrizeDeduction)).one()
        assert [(p.key, p.share, p.amount) for p in d.parts] == [("organizer", Decimal("0.05"), Decimal("5725.00")),
                                                                ("fide", Decimal("0.05"), Decimal("5725.00"))]
        entry = db.session.scalars(select(AuditEntry).where(AuditEntry.action == "prize.deduction")).one()
        assert [p["label"] for p in entry.data_dict["parts"]] == ["the Organizer", "FIDE"]


def test_a_withheld_protest_fee_is_returned_when_the_protest_is_accepted(app, event, people, cf):
    """Art. 7.3.1: "Each protest must be accompanied by a deposit fee of €3000 ... This can also be done if the player
    makes a written request that FIDE withholds the fee from his prize money. If the protest is accepted, the fee
    shall be returned." """
    contract_id = cf.contract(event, owner_id=people["organizer"], admin_id=people["admin"])
    admin = as_user(app, people["admin"])
    _with_result(app, admin, contract_id)
    post(admin, f"/contracts/{contract_id}/deductions",
         {"player": "UKR", "rule": "protest_fee", "amount": "3000.00", "decided_on": "2015-10-20",
          "reason": "Protest against the arbiter's decision in game 6; fee withheld at her written request."})
    post(admin, f"/contracts/{contract_id}/deductions",
         {"player": "UKR", "rule": "fine_score_sheet", "amount": "1000.00", "decided_on": "2015-10-21",
          "reason": "Refused to sign the score sheet of game 7."})
    with app.app_context():
        c = db.session.get(Contract, contract_id)
        balance = milestone(c, "prize_balance_UKR")
        fee, fine = db.session.scalars(select(PrizeDeduction).order_by(PrizeDeduction.id)).all()
        fee_id, fine_id, balance_id, full = fee.id, fine.id, balance.id, balance.amount
        assert status_of(balance, date(2015, 11, 1), 7).outstanding == full - Decimal("4000.00")
    page = get(admin, f"/contracts/{contract_id}/result")
    assert f'id="return-deduction-{fee_id}"' in page and f'id="return-deduction-{fine_id}"' not in page
    url = f"/contracts/{contract_id}/deductions/{fee_id}/return"
    page, _ = post(admin, url, {f"return-{fee_id}-decided_on": "2015-10-19",
                                f"return-{fee_id}-reason": "Protest accepted."}, status=422)
    assert (f"{BOOKKEEPING}: the decision to return it comes after the deduction of 20 "
            "October 2015 (you entered 19 October 2015).") in page
    page, _ = post(admin, url, {f"return-{fee_id}-decided_on": "2015-10-20", f"return-{fee_id}-reason": ""},
                   status=422)
    assert "Art. 7.3.1: the amount is returned if the protest is accepted; say so" in page
    post(admin, url, {f"return-{fee_id}-decided_on": "2015-10-20",
                      f"return-{fee_id}-reason": "The Appeals Committee accepted the protest (decision 2015/2)."})
    page = get(admin, f"/contracts/{contract_id}/result")
    assert "<strong>Returned to the player</strong> on 20 October 2015: The Appeals Committee accepted" in page
    assert f'id="return-deduction-{fee_id}"' not in page
    payment_page = get(admin, f"/contracts/{contract_id}/milestones/{balance_id}")
    assert "<del>€3,000.00</del>, returned to the player on 20 October 2015" in payment_page
    with app.app_context():
        balance = db.session.get(type(balance), balance_id)
        # only the fine is still taken from her balance: the fee is hers again
        assert status_of(balance, date(2015, 11, 1), 7).outstanding == full - Decimal("1000.00")
        entry = db.session.scalars(select(AuditEntry).where(AuditEntry.action == "prize.deduction_returned")).one()
        assert entry.data_dict["article"] == "7.3.1"
    # Once only; and a fine is never returned.
    page, _ = post(admin, url, {f"return-{fee_id}-decided_on": "2015-10-21",
                                f"return-{fee_id}-reason": "Again."}, status=422)
    assert f"{BOOKKEEPING}: protest deposit fee withheld from the prize money (Art. 7.3.1) " \
        "was already returned" in page
    page, _ = post(admin, f"/contracts/{contract_id}/deductions/{fine_id}/return",
                   {f"return-{fine_id}-decided_on": "2015-10-22", f"return-{fine_id}-reason": "Mercy."}, status=422)
    assert "Art. 4(b): fine for refusing to sign the score sheets is not returned to the player" in page
