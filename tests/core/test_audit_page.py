"""The secretariat's audit log page (core.audit_views): a page at a time, newest first, filtered and sorted, each
object linked where the secretariat can open it, and the chain's head as `flask audit checkpoint` prints it."""

from __future__ import annotations

import html
import re
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
from sqlalchemy import func, select

from accounts.models import User
from contracts import services as contract_services
from contracts.models import Contract
from core import audit
from core.audit import AuditEntry
from core.db import db
from tests.conftest import login
from tests.contracts.factories_contracts import ContractFactory

SIZE = 10
T0 = datetime(2015, 6, 1, 9, 0, tzinfo=UTC)
URL = "/admin/audit/"


@pytest.fixture
def admin(app, client, make) -> int:
    app.config["PAGE_SIZE"] = SIZE
    user = make.user(email="audit-admin@example.org", roles=("admin",))
    assert login(client, "audit-admin@example.org").status_code == 302
    return user


def write(app, specs: list[tuple[str, str, str, str | None, datetime]]) -> list[int]:
    """Append entries (action, object type, object id, actor's email or None for the system, when) through
    core.audit.record, the one way entries are written; their sequence numbers."""
    out = []
    with app.app_context():
        for action, otype, oid, email, at in specs:
            actor = db.session.scalar(select(User).where(User.email == email)) if email else None
            out.append(audit.record(action, actor=actor, now=at, object_type=otype, object_id=oid,
                                    data={"n": len(out)}).id)
        db.session.commit()
    return out


def seqs(page: str) -> list[int]:
    """The sequence numbers of the rows shown, in order."""
    return [int(n) for n in re.findall(r'<tr id="entry-(\d+)">', page)]


def all_seqs(app, *where) -> list[int]:
    with app.app_context():
        return list(db.session.scalars(select(AuditEntry.id).where(*where).order_by(AuditEntry.id.desc())))


def get(client, query: str = "", status: int = 200) -> str:
    response = client.get(URL + query)
    assert response.status_code == status, (query, response.status_code)
    return response.get_data(as_text=True)


MIXED = [("bid.submit", "Bid", "1", None, T0),
         ("bid.save", "Bid", "2", "audit-admin@example.org", T0 + timedelta(days=1)),
         ("payment.record", "Payment", "3", "audit-admin@example.org", T0 + timedelta(days=2)),
         ("bidder.note", "Note", "4", None, T0 + timedelta(days=3)),
         ("contract.issue", "Contract", "5", None, T0 + timedelta(days=4))]


def test_the_page_shows_the_newest_entries_first_with_the_head_that_checkpoint_gives(app, client, admin):
    write(app, MIXED * 5)
    page = get(client)
    everything = all_seqs(app)
    assert seqs(page) == everything[:SIZE]
    assert f"Entries 1–{SIZE} of {len(everything)}" in page
    with app.app_context():
        head = audit.checkpoint()
    assert head.seq == everything[0]
    assert f'<code class="token" id="checkpoint">{head.seq}:{head.digest}</code>' in page
    # What each row says: the label of its action, who acted, the object and the data.
    row = page[page.index(f'<tr id="entry-{everything[0]}">'):]
    row = row[:row.index("</tr>")]
    assert '<td class="key" data-label="What">Contract issued <span class="hint">(contract.issue)</span></td>' in row
    assert '<td data-label="Who">system</td>' in row
    assert '<li><span class="hint">n:</span> 24</li>' in row
    assert "flask audit verify" in page and "does not check the chain" in page


def test_the_nav_leads_the_secretariat_to_the_audit_log_and_nobody_else(app, client, make, admin):
    assert f'<a href="{URL}">Audit log</a>' in client.get("/").get_data(as_text=True)
    other = app.test_client()
    make.user(email="audit-bidder@example.org", roles=("bidder",))
    login(other, "audit-bidder@example.org")
    assert "Audit log" not in other.get("/").get_data(as_text=True)


@pytest.mark.parametrize("role", ["bidder", "wcoc", "board"])
def test_every_other_role_is_refused(app, make, role):
    other = app.test_client()
    make.user(email=f"audit-{role}@example.org", roles=(role,))
    login(other, f"audit-{role}@example.org")
    assert other.get(URL).status_code == 403
    anonymous = app.test_client().get(URL)
    assert anonymous.status_code == 302 and "/login" in anonymous.headers["Location"]


def test_filters_select_by_action_family_object_actor_and_days(app, client, admin):
    written = write(app, MIXED * 3)
    bids = [s for s, spec in zip(written, MIXED * 3, strict=True) if spec[0].startswith("bid.")]
    for family in ("bid.", "bid.*", "bid", "BID."):
        # A family: bid.submit and bid.save, never bidder.note (which only starts with the same letters).
        assert seqs(get(client, f"?action={family}")) == sorted(bids, reverse=True), family
    assert seqs(get(client, "?action=bid.save")) == sorted(written[1::5], reverse=True)
    assert seqs(get(client, "?type=payment")) == sorted(written[2::5], reverse=True)  # the type in any case
    assert seqs(get(client, "?type=Bid&object=2")) == sorted(written[1::5], reverse=True)
    mine = get(client, "?actor=AUDIT-admin@example.org&action=bid.")
    admin_bids = all_seqs(app, AuditEntry.actor_label == "audit-admin@example.org", AuditEntry.action.like("bid.%"))
    assert seqs(mine) == admin_bids and admin_bids == sorted(written[1::5], reverse=True)
    # Days are whole UTC days, both ends included.
    assert seqs(get(client, "?from=2015-06-02&to=2015-06-03")) == sorted(written[1::5] + written[2::5], reverse=True)
    assert seqs(get(client, "?from=2015-06-05&type=Contract")) == sorted(written[4::5], reverse=True)
    empty = get(client, "?action=no.such")
    assert seqs(empty) == [] and "No entry matches these filters." in empty and "Entries: none" in empty


def test_a_filter_that_cannot_be_read_is_said_back_kept_and_ignored(app, client, admin):
    write(app, MIXED)
    everything = all_seqs(app)
    page = get(client, "?action=bid%20submit%3B&type=Bid&from=2015-02-30", status=400)
    assert ("“bid submit;” is not an action: write one as bid.submit, or bid. for every action on bids. The list "
            "is shown for every action.") in html.unescape(page)
    assert ("The first day “2015-02-30” is not a date: write it as YYYY-MM-DD, for example 2015-06-30. The list is "
            "shown without it.") in html.unescape(page)
    assert 'value="bid submit;"' in page and 'value="2015-02-30"' in page  # what was typed stays in the form
    assert seqs(page) == all_seqs(app, AuditEntry.object_type == "Bid")  # the readable filter still applies
    backwards = get(client, "?from=2015-06-05&to=2015-06-01", status=400)
    assert ("The range ends (2015-06-01) before it starts (2015-06-05): the list is shown without the dates."
            in html.unescape(backwards))
    assert seqs(backwards) == everything[:SIZE]
    long = get(client, "?object=" + "9" * 65, status=400)
    assert "An object's number is at most 64 characters." in html.unescape(long)


def test_sorting_by_action_actor_and_time_with_the_number_breaking_ties(app, client, admin):
    written = write(app, MIXED * 3)
    with app.app_context():
        rows = db.session.execute(select(AuditEntry.id, AuditEntry.action, AuditEntry.actor_label, AuditEntry.at)
                                  .where(AuditEntry.id.in_(written))).all()
    page = get(client, "?sort=action&dir=asc&type=Bid")
    assert seqs(page) == [r.id for r in sorted((r for r in rows if r.action.startswith("bid.")),
                                               key=lambda r: (r.action, r.id))]
    assert '<th scope="col" aria-sort="ascending">' in page
    by_actor = get(client, "?sort=actor&dir=desc&from=2015-06-01")
    assert seqs(by_actor) == [r.id for r in sorted(rows, key=lambda r: (r.actor_label, r.id), reverse=True)][:SIZE]
    oldest = get(client, "?sort=at&dir=asc&from=2015-06-01")
    assert seqs(oldest) == [r.id for r in sorted(rows, key=lambda r: (r.at, r.id))][:SIZE]
    # A sort or direction the page does not know falls back to the newest first.
    assert seqs(get(client, "?sort=hash&dir=sideways")) == all_seqs(app)[:SIZE]


def test_paging_boundaries_fall_back_to_the_first_or_the_last_page(app, client, admin):
    write(app, MIXED * 6)
    everything = all_seqs(app)
    pages = -(-len(everything) // SIZE)
    for bad in ("0", "-1", "abc", "1e3", "１", "9" * 12):
        assert seqs(get(client, f"?page={bad}")) == everything[:SIZE], bad
    last = get(client, "?page=999")
    assert seqs(last) == everything[(pages - 1) * SIZE:]
    assert f"Entries {(pages - 1) * SIZE + 1}–{len(everything)} of {len(everything)}" in last
    second = get(client, "?page=2&action=bid.")
    bids = all_seqs(app, AuditEntry.action.like("bid.%"))
    assert seqs(second) == bids[SIZE:2 * SIZE]
    # The pager keeps the filter and the order.
    assert "action=bid." in second and 'href="/admin/audit/?page=1&amp;action=bid."' in second


def test_each_object_links_to_its_page_where_the_secretariat_can_open_one(app, client, event, make, admin):
    cf = ContractFactory(app, make)
    contract_id = cf.contract(event)
    with app.app_context():
        contract = db.session.get(Contract, contract_id)
        m = next(m for m in contract.milestones if m.milestone_kind.organizer_pays and not m.is_cap)
        milestone_id, bid_id = m.id, contract.bid_id
        actor = db.session.get(User, admin)
        payment, _ = contract_services.record_payment(
            m, amount=Decimal("10.00"), received_on=date(2015, 7, 1), reference="Audit link", note="",
            idempotency_key="audit-link-1", actor=actor, now=datetime(2015, 7, 2, tzinfo=UTC))
        db.session.commit()
        payment_id = payment.id
    write(app, [("scoring.scorecard_saved", "Scorecard", "1", None, T0),  # no page for the secretariat: no link
                ("bid.save", "Bid", "999999", None, T0),  # no such bid: no link
                ("bid.save", "Bid", str(bid_id), None, T0)])
    links = {}
    for query in ("?type=Payment", "?type=Contract&action=contract.create", "?type=Bid", "?type=Event",
                  "?type=User&object=" + str(admin), "?type=Scorecard"):
        page = get(client, query)
        links[query] = re.findall(r'<td data-label="Object">(?:<a href="([^"]*)">)?([^<]*)', page)
    assert links["?type=Payment"][0] == (
        f"/contracts/{contract_id}/milestones/{milestone_id}?entry={payment_id}#payment-{payment_id}",
        f"Payment {payment_id}")
    assert (f"/contracts/{contract_id}", f"Contract {contract_id}") in links["?type=Contract&action=contract.create"]
    assert ("", "Bid 999999") in links["?type=Bid"] and (f"/bids/{bid_id}", f"Bid {bid_id}") in links["?type=Bid"]
    assert links["?type=Event"][-1][0] == "/events/fwwcm-2015"
    assert links["?type=User&object=" + str(admin)][0] == (f"/admin/users/{admin}", f"User {admin}")
    assert links["?type=Scorecard"] == [("", "Scorecard 1")]
    # Each link opens its object: the payment's on the page of entries that holds it.
    for query in links:
        for href, _ in links[query]:
            if href:
                assert client.get(href.replace("&amp;", "&")).status_code == 200, href
    shown = client.get(links["?type=Payment"][0][0]).get_data(as_text=True)
    assert f'<tr id="payment-{payment_id}">' in shown


def test_the_head_is_read_from_the_last_entry_only(app, client, admin):
    """The page never walks the chain: its statements are the same with a broken entry as with an intact log."""
    write(app, MIXED)
    with app.app_context():
        first = db.session.scalar(select(func.min(AuditEntry.id)))
        db.session.get(AuditEntry, first).data = '{"tampered": true}'
        db.session.commit()
        head = audit.checkpoint()
        assert not audit.verify_chain().ok
    page = get(client)
    assert f"{head.seq}:{head.digest}" in page


@pytest.mark.parametrize("query", ["", "?family=decision", "?type=Dossier", "?sort=action"])
def test_a_page_holding_decision_and_dossier_entries_answers_200(app, client, admin, query):
    """Their links are resolved through board.queries.call_slugs; handing dict() the query's Result (which has
    keys()) answered 500 for every page that held one, the demo's first page among them."""
    write(app, [("decision.record", "Decision", "424242", None, T0),
                ("dossier.render", "Dossier", "434343", None, T0 + timedelta(hours=1))])
    page = get(client, query)
    assert ("Decision 424242" in page) or ("Dossier 434343" in page)
