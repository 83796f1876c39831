"""Issue 13, part 1, in the contract: the obligations in kind as its annex, and the signal blocker offered only when
the secretariat recorded that FIDE requires it."""

import io
import re

from pypdf import PdfReader

from accounts.models import User
from contracts import services
from core.db import db
from events.models import Event
from tests.contracts.factories_contracts import ISSUED_AT, selected_bid
from tests.contracts.test_contracts_pages import as_user, get, post
from tests.obligations_written import missing_from


def _checkbox(html: str) -> str:
    before, after = html.split('name="signal_blocker_required"', 1)
    return before.rsplit("<input", 1)[1] + after.split(">", 1)[0]


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
    assert "checked" not in _checkbox(form)  # FIDE has not required it (the call's default)
    _, location = post(admin, f"/bids/{bid_id}/contract/new", {})
    contract_id = int(location.rsplit("/", 1)[1])
    preview = get(admin, f"/contracts/{contract_id}/preview")
    annex = preview[preview.index('id="annex-in-kind"'):]
    assert "Art. 11.4, Local transportation:" in annex and "chauffeur-driven car" in annex
    assert "Art. 12.4.1, Official website:" in annex
    assert 'id="obligation-signal_blocker"' not in preview


def test_the_contract_form_offers_the_blocker_ticked_when_fide_requires_it(app, event, cf):
    """Art. 14.3: "If required by FIDE, the organizer will provide an electronic device to block all mobile
    signals around the playing area." """
    admin_id, organizer_id = cf.admin(), cf.organizer()
    with app.app_context():
        bid_id = selected_bid(event, organizer_id).id
        db.session.get(Event, event).signal_blocker_required = True
        db.session.commit()
    form = get(as_user(app, admin_id), f"/bids/{bid_id}/contract/new")
    assert "checked" in _checkbox(form)


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
