"""`flask seed --demo` leaves every page filled, and running it again changes nothing."""

from datetime import date

from sqlalchemy import func, select

from bids.models import Bid
from bids.rules import home_match
from bids.services import compliance
from core.db import db, utcnow
from events.services import get_event
from evidence.audit import AuditEntry


def test_demo_seed_makes_compliant_bids_a_home_match_and_a_failing_one(runner, app):
    result = runner.invoke(args=["seed", "--demo"])
    assert result.exit_code == 0, result.output
    with app.app_context():
        event = get_event("fwwcm-2015")
        bids = db.session.scalars(select(Bid).where(Bid.event_id == event.id)).all()
        submitted = [b for b in bids if b.state.visible_to_reviewers]
        assert len(submitted) >= 3
        assert len({b.host_federation for b in submitted}) == len(submitted)
        assert all(b.last_version.compliant for b in submitted)
        assert any(home_match(event.regulation, b.to_data()) for b in submitted)
        failing = [b for b in bids if any(f.failed for f in compliance(b, today=utcnow().date()))]
        assert failing and all(b.status == "draft" for b in failing)
        entries = db.session.scalar(select(func.count()).select_from(AuditEntry))
        # scoring, the board and the decision are filled in too
        from board.models import Decision, Dossier
        from scoring.models import Scorecard

        assert event.status == "decided"
        assert db.session.scalar(select(func.count()).select_from(Scorecard)) >= 6
        assert db.session.scalar(select(func.count()).select_from(Dossier)) == len(submitted) + 1
        decision = db.session.scalars(select(Decision)).one()
        assert decision.selected_bid.status == "selected"
        assert sum(b.status == "not_selected" for b in bids) == len(submitted) - 1
        from contracts.models import Contract, Payment

        contract = db.session.scalars(select(Contract).where(Contract.bid_id == decision.selected_bid_id)).one()
        assert contract.status == "signed"
        assert db.session.scalar(select(func.count()).select_from(Payment)) >= 3
        # A newcomer sees verified signatures at once: the issued and the countersigned contract check out as
        # Gambit's, and the demo letters of application are signed by the demo CA, which is on the trust list.
        from bids.models import BidDocument
        from contracts.queries import pdf_path
        from evidence.signing import verify_issued

        upload_dir = app.config["UPLOAD_DIR"]
        # The selected bid, and so the contract, copies the schedule Art. 2.2 publishes: game 1 on 13 October 2015.
        assert decision.selected_bid.opening_date == date(2015, 10, 12)
        assert decision.selected_bid.closing_date == date(2015, 10, 30)
        from tests.contracts.test_contracts_pdf import pdf_text

        printed = " ".join(pdf_text(pdf_path(upload_dir, contract).read_bytes()).split())
        assert "Tue 13 Oct 2015 Game 1, 15:00" in printed and "Thu 29 Oct 2015 Tie-break games" in printed
        assert "Sat 10 Oct 2015 The players may inspect their accommodation at the venue (Art. 3.1)" in printed
        issued = verify_issued(pdf_path(upload_dir, contract).read_bytes())
        assert issued.ok and issued.document == f"contract {contract.reference}", issued.lines()
        countersigned = verify_issued(pdf_path(upload_dir, contract, signed=True).read_bytes())
        assert countersigned.ok and any(line.startswith("Countersigned after Gambit: signed by ")
                                        for line in countersigned.details), countersigned.lines()
        letters = db.session.scalars(select(BidDocument).where(BidDocument.kind == "signed_letter")).all()
        assert letters and all(d.inspection.good for d in letters), [d.signature_words for d in letters]
        assert all(", intact, trusted" in d.signature_words for d in letters)
    # Every evidence row the demo wrote is bound to the audit entry that wrote it, and every stored file matches.
    verified = runner.invoke(args=["audit", "verify"])
    assert verified.exit_code == 0, verified.output
    assert "evidence intact:" in verified.output and "not bound" not in verified.output
    again = runner.invoke(args=["seed", "--demo"])
    assert again.exit_code == 0 and "demo bid" not in again.output
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(AuditEntry)) == entries
