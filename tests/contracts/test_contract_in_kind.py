"""Issue 13, part 1, in the contract: the obligations in kind as its annex; issue 23: the signal blocker in the
contract exactly as the call records FIDE's answer (Art. 14.3), never asked again and never assumed."""

import io
import re

import pytest
from pypdf import PdfReader

from accounts.models import User
from contracts import services
from core.db import db
from events.models import Event
from tests.contracts.factories_contracts import ISSUED_AT, selected_bid
from tests.contracts.test_contracts_pages import as_user, get, post
from tests.obligations_written import missing_from


def test_the_contract_carries_the_obligations_in_kind_as_its_annex(app, event, cf):
    """Art. 11.4.2: "For each player, a chauffeur-driven car shall be at their disposal." Art. 12.4.1: "The organizer
    will be responsible for managing, updating and reviewing the official web domain which will be used for the
    event." """
    admin_id, organizer_id = cf.admin(), cf.organizer()
    with app.app_context():
        bid_id = selected_bid(event, organizer_id).id
        db.session.commit()
    admin = as_user(app, admin_id)
    form = get(admin, f"/bids/{bid_id}/contract/new")
    assert 'name="signal_blocker_required"' not in form  # the contract follows the call; nothing to tick
    _, location = post(admin, f"/bids/{bid_id}/contract/new", {})
    contract_id = int(location.rsplit("/", 1)[1])
    preview = get(admin, f"/contracts/{contract_id}/preview")
    annex = preview[preview.index('id="annex-in-kind"'):]
    assert "Art. 11.4, Local transportation:" in annex and "chauffeur-driven car" in annex
    assert "Art. 12.4.1, Official website:" in annex
    assert 'id="obligation-signal_blocker"' not in preview


@pytest.mark.parametrize("required", [False, True], ids=["not-required", "required"])
def test_the_contract_and_the_bids_obligations_follow_the_calls_answer_on_the_signal_blocker(app, event, cf,
                                                                                               required):
    """Art. 14.3: "If required by FIDE, the organizer will provide an electronic device to block all mobile
    signals around the playing area of the FWWCM." The call page, the bid's obligations and the contract say the
    same thing: what the secretariat recorded on the call."""
    admin_id, organizer_id = cf.admin(), cf.organizer()
    with app.app_context():
        bid_id = selected_bid(event, organizer_id).id
        db.session.get(Event, event).signal_blocker_required = required
        db.session.commit()
    admin = as_user(app, admin_id)
    said = "required by FIDE for this call" if required else "not required by FIDE for this call"
    form = get(admin, f"/bids/{bid_id}/contract/new")
    assert 'name="signal_blocker_required"' not in form
    assert f"the device blocking mobile signals: {said}" in form
    _, location = post(admin, f"/bids/{bid_id}/contract/new", {})
    contract_id = int(location.rsplit("/", 1)[1])
    preview = get(admin, f"/contracts/{contract_id}/preview")
    term = preview[preview.index('id="signal-blocker-term"'):].split("</p>", 1)[0]
    assert f"Art. 14.3, the device blocking mobile signals around the playing area: {said}" in term
    assert ('id="obligation-signal_blocker"' in preview) is required
    public = get(admin, "/events/fwwcm-2015")
    assert ("Required by FIDE for this call" in public) is required
    assert ("Not required by FIDE for this call" in public) is not required
    bid_page = get(as_user(app, organizer_id), f"/bids/{bid_id}")
    assert ('id="obligation-signal_blocker"' in bid_page) is required
    api = admin.get(f"/api/v1/bids/{bid_id}/obligations")
    assert api.status_code == 200, api.get_data(as_text=True)
    assert ('"signal_blocker"' in api.get_data(as_text=True)) is required


def test_the_contract_pdf_annex_carries_every_obligation_of_the_regulations(app, event, make, ctx):
    """Art. 4, 8.2, 8.3, 10.2, 12.1, 12.4.2, 12.4.3 and 7.4.3, the obligations the call's file lacked, in the annex
    of the contract the organizer signs (Art. 15.6.1), read back from its PDF."""
    admin = db.session.get(User, make.user(roles=("admin",)))
    bid = selected_bid(event, make.user())
    draft = services.create_contract(bid, actor=admin, now=ISSUED_AT)
    reader = PdfReader(io.BytesIO(services.render_contract_pdf(draft, services.build_terms(draft), draft=True)))
    text = re.sub(r"\s+", " ", " ".join(page.extract_text() for page in reader.pages))
    annex = text[text.index("Annex: the organizer's obligations in kind"):]
    assert missing_from(annex) == []
    assert "Annex: what the organizer undertakes" in annex
