"""The audit chain's head right after a decision is recorded is printed in its minutes and shown on its page; the
printed checkpoint verifies against the log, and stops verifying once the log is cut back or rewritten."""

import io
import re

import pytest
from pypdf import PdfReader
from sqlalchemy import delete, select, update

from board.models import Decision
from core.db import db, utcnow
from evidence.audit import AuditEntry, Checkpoint, verify_chain
from tests.conftest import login

pytestmark = pytest.mark.pdf_layout_once("dossier.html", "board_pack.html")


def _printed_checkpoint(data: bytes) -> Checkpoint:
    text = "".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)
    flat = re.sub(r"\s+", "", text)  # the digest may wrap across lines in the PDF
    assert "Auditcheckpoint" in flat
    found = re.search(r"entrynumberanditsMAC\):(\d+:[0-9a-f]{64})", flat)
    assert found, flat[-800:]
    return Checkpoint.parse(found.group(1))


@pytest.fixture
def decided(app, scored, make):
    """A decision recorded through the route; returns (admin client, decision id)."""
    board = app.test_client()
    make.user(email="board-member@example.org", roles=("board",), federation="FRA")
    login(board, "board-member@example.org")
    board.post("/board/fwwcm-2015/vote", data={"choice": str(scored["lviv"])})
    admin = app.test_client()
    make.user(email="sec@example.org", roles=("admin",))
    login(admin, "sec@example.org")
    response = admin.post("/board/fwwcm-2015/decision", data={
        "method": "board_vote", "selected": str(scored["lviv"]), "decided_on": utcnow().date().isoformat(),
        "rationale": ""})
    assert response.status_code == 302, response.get_data(as_text=True)[:2000]
    with app.app_context():
        return admin, db.session.scalars(select(Decision)).one().id


def test_the_minutes_print_the_head_after_the_decisions_entry_and_it_verifies(app, decided):
    admin, decision_id = decided
    response = admin.get(f"/board/fwwcm-2015/decision/{decision_id}/minutes.pdf")
    assert response.status_code == 200
    printed = _printed_checkpoint(response.data)
    response.close()
    with app.app_context():
        entry = db.session.scalars(select(AuditEntry).where(AuditEntry.action == "decision.record")).one()
        assert printed == Checkpoint(entry.id, entry.hash) and entry.object_id == str(decision_id)
        # entries written after it (the minutes, the notices) do not stop the checkpoint verifying
        assert db.session.scalar(select(AuditEntry.id).order_by(AuditEntry.id.desc()).limit(1)) > entry.id
        report = verify_chain(expect=printed)
        assert report.ok, report.reason
    page = admin.get("/board/fwwcm-2015/decision").get_data(as_text=True)
    assert str(printed) in page and "right after the entry that recorded this decision" in page


def test_the_printed_checkpoint_catches_a_cut_back_or_rewritten_log(app, decided):
    admin, decision_id = decided
    response = admin.get(f"/board/fwwcm-2015/decision/{decision_id}/minutes.pdf")
    printed = _printed_checkpoint(response.data)
    response.close()
    with app.app_context():
        db.session.execute(update(AuditEntry).where(AuditEntry.id == printed.seq).values(data="{}"))
        report = verify_chain(expect=printed)
        assert report.broken_at == printed.seq and "does not match its MAC" in report.reason
        db.session.rollback()
        db.session.execute(delete(AuditEntry).where(AuditEntry.id >= printed.seq))
        report = verify_chain(expect=printed)
        assert report.broken_at == printed.seq
        assert f"the checkpoint names entry {printed.seq}: the entries after {printed.seq - 1} were deleted" \
            in report.reason
        db.session.rollback()
