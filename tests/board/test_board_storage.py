"""Dossiers, the board pack and the decision minutes are served only while their stored bytes are unaltered."""

from pathlib import Path

import pytest
from sqlalchemy import select

from board.models import Decision, Dossier
from board.queries import dossier_dir
from core.db import db, utcnow
from evidence.audit import AuditEntry
from tests.conftest import login


@pytest.fixture
def board_client(app, make):
    client = app.test_client()
    make.user(email="board-member@example.org", roles=("board",), federation="FRA")
    login(client, "board-member@example.org")
    return client


def _alter(app, stored_name: str) -> None:
    path = dossier_dir(app.config["UPLOAD_DIR"]) / stored_name
    path.write_bytes(path.read_bytes() + b"\n% appended\n")


def _refused(app) -> list[tuple[str, str]]:
    with app.app_context():
        return [(e.object_type, e.data_dict["what"]) for e in db.session.scalars(
            select(AuditEntry).where(AuditEntry.action == "file.refused").order_by(AuditEntry.id))]


@pytest.mark.pdf_layout_once
def test_altered_dossier_pack_and_minutes_are_refused(app, scored, board_client, make):
    bid = scored["lviv"]
    response = board_client.get(f"/board/fwwcm-2015/bids/{bid}/dossier.pdf")
    assert response.status_code == 200 and response.data.startswith(b"%PDF-")
    response.close()
    response = board_client.get("/board/fwwcm-2015/pack.pdf")
    assert response.status_code == 200
    response.close()
    with app.app_context():
        dossier = db.session.scalars(select(Dossier).where(Dossier.bid_id == bid)).one()
        pack = db.session.scalars(select(Dossier).where(Dossier.kind == "pack")).one()
        dossier_id, dossier_name, dossier_identifier = dossier.id, dossier.stored_name, dossier.identifier
        pack_id, pack_name, pack_identifier = pack.id, pack.stored_name, pack.identifier
    _alter(app, dossier_name)
    for url in (f"/board/fwwcm-2015/bids/{bid}/dossier.pdf", f"/board/fwwcm-2015/dossiers/{dossier_id}.pdf"):
        response = board_client.get(url)
        assert response.status_code == 409, url
        assert (f"The stored file of the {dossier_identifier} PDF no longer matches the SHA-256 recorded"
                in response.get_data(as_text=True))
    _alter(app, pack_name)
    response = board_client.get(f"/board/fwwcm-2015/dossiers/{pack_id}.pdf")
    assert response.status_code == 409
    assert f"The stored file of the {pack_identifier} PDF no longer matches" in response.get_data(as_text=True)

    board_client.post("/board/fwwcm-2015/vote", data={"choice": str(bid)})
    admin = app.test_client()
    make.user(email="sec@example.org", roles=("admin",))
    login(admin, "sec@example.org")
    response = admin.post("/board/fwwcm-2015/decision", data={
        "method": "board_vote", "selected": str(bid), "decided_on": utcnow().date().isoformat(), "rationale": ""})
    assert response.status_code == 302, response.get_data(as_text=True)[:2000]
    with app.app_context():
        decision = db.session.scalars(select(Decision)).one()
        decision_id, minutes_name = decision.id, decision.minutes_stored_name
    url = f"/board/fwwcm-2015/decision/{decision_id}/minutes.pdf"
    response = admin.get(url)
    assert response.status_code == 200 and response.data.startswith(b"%PDF-")
    response.close()
    Path(dossier_dir(app.config["UPLOAD_DIR"]) / minutes_name).unlink()
    response = admin.get(url)
    assert response.status_code == 409
    assert f"The stored file of the minutes of decision {decision_id} is missing" in response.get_data(as_text=True)
    assert _refused(app) == [("Dossier", f"the {dossier_identifier} PDF")] * 2 + \
        [("Dossier", f"the {pack_identifier} PDF"), ("Decision", f"the minutes of decision {decision_id}")]
