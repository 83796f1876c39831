"""The secretariat's audit log page (evidence.audit_views): a page at a time, newest first, filtered and sorted, each
entry a sentence naming who did what to which object (linked where the secretariat can open it), at a time written
as people read one, sign-ins left out unless asked for, and the chain's head explained as a fingerprint to keep."""

from __future__ import annotations

import ast
import html
import re
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import func, select

from accounts.models import User
from contracts import payments
from contracts.models import Contract
from core.db import db
from evidence import audit
from evidence.audit import AuditEntry
from tests.conftest import login
from tests.contracts.factories_contracts import ContractFactory

SIZE = 10
T0 = datetime(2015, 6, 1, 9, 0, tzinfo=UTC)
URL = "/admin/audit/"


@pytest.fixture
def admin(app, client, make) -> int:
    app.config["PAGE_SIZE"] = SIZE
    user = make.user(email="audit-admin@example.org", roles=("admin",), name="Anna Ushenina")
    assert login(client, "audit-admin@example.org").status_code == 302
    return user


def write(app, specs: list[tuple]) -> list[int]:
    """Append entries (action, object type, object id, actor's email or None for the system, when[, data]) through
    evidence.audit.record, the one way entries are written; their sequence numbers. Without data, {"n": its place}."""
    out = []
    with app.app_context():
        for action, otype, oid, email, at, *data in specs:
            actor = db.session.scalar(select(User).where(User.email == email)) if email else None
            out.append(audit.record(action, actor=actor, now=at, object_type=otype, object_id=oid,
                                    data=data[0] if data else {"n": len(out)}).id)
        db.session.commit()
    return out


def seqs(page: str) -> list[int]:
    """The sequence numbers of the rows shown, in order."""
    return [int(n) for n in re.findall(r'<tr id="entry-(\d+)">', page)]


def all_seqs(app, *where, sign_ins: bool = False) -> list[int]:
    """The sequence numbers of the entries `where` selects, newest first; without the sign-ins unless asked (the page
    leaves them out by default; the only one these tests write is the admin's login, user.login)."""
    if not sign_ins:
        where = (*where, AuditEntry.action != "user.login")
    with app.app_context():
        return list(db.session.scalars(select(AuditEntry.id).where(*where).order_by(AuditEntry.id.desc())))


def row_of(page: str, seq: int) -> str:
    """The HTML of the row of entry `seq`."""
    row = page[page.index(f'<tr id="entry-{seq}">'):]
    return row[:row.index("</tr>")]


def text_of(fragment: str) -> str:
    """What a fragment of HTML reads: its text, spaces run together."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


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
    # What each row says: who did what to which object, and the data.
    row = row_of(page, everything[0])
    assert "The system issued contract 5." in text_of(row)
    assert '<li><span class="hint">n:</span> 24</li>' in row


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
        payment, _ = payments.record_payment(
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
        cells = re.findall(r'<td class="key" data-label="What happened">(.*?)</td>', page, re.S)
        # (the object's link and its words), or ("", the sentence) where the object has no link
        links[query] = [(found.group(1), found.group(2)) if (found := re.search(r'<a href="([^"]*)">([^<]*)</a>', c))
                        else ("", text_of(c)) for c in cells]
    assert links["?type=Payment"][0] == (
        f"/contracts/{contract_id}/milestones/{milestone_id}?entry={payment_id}#payment-{payment_id}",
        f"payment {payment_id}")
    assert (f"/contracts/{contract_id}", f"contract {contract_id}") in links["?type=Contract&action=contract.create"]
    assert any(href == "" and "of bid 999999." in said for href, said in links["?type=Bid"])
    assert (f"/bids/{bid_id}", f"bid {bid_id}") in links["?type=Bid"]
    assert links["?type=Event"][-1][0] == "/events/fwwcm-2015"
    # A user is named, and linked to the page of the account.
    assert links["?type=User&object=" + str(admin)][0] == (f"/admin/users/{admin}", "Anna Ushenina")
    assert links["?type=Scorecard"] == [("", "The system saved scorecard 1 of bid …. scoring.scorecard_saved")]
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
    assert ("decision 424242" in page) or ("dossier 434343" in page)


# ------------------------------------------------------------------------------------------ in plain words


def test_each_entry_reads_as_a_sentence_naming_who_did_what_to_which_object(app, client, admin):
    """Who by name (the email in small print), what by the action's phrase, the object linked where it has a page;
    "The system" where nobody acted, and an action no package told in its own words."""
    payment, submit, issue, note = write(app, [
        ("payment.record", "Payment", "7", "audit-admin@example.org", T0,
         {"amount": Decimal("60000"), "contract": 3, "milestone": 2}),
        ("bid.submit", "Bid", "4", "audit-admin@example.org", T0),
        ("contract.issue", "Contract", "5", None, T0),
        ("bidder.note", "Note", "4", None, T0)])
    page = get(client)
    said = {seq: text_of(row_of(page, seq)) for seq in (payment, submit, issue, note)}
    assert ("Anna Ushenina recorded a payment of €60,000.00 (payment 7) on contract 3. "
            "audit-admin@example.org · payment.record") in said[payment]
    assert "Anna Ushenina submitted bid 4. audit-admin@example.org · bid.submit" in said[submit]
    assert "The system issued contract 5. contract.issue" in said[issue]
    assert "The system recorded “Bidder: note” on note 4. bidder.note" in said[note]
    assert '<span class="who">Anna Ushenina</span>' in row_of(page, payment)
    assert "@" not in said[issue]  # the system has no address to show


def test_times_are_written_as_people_read_them_with_the_zone_named(app, client, admin):
    """"1 June 2015 at 09:00 UTC" (core.money.format_instant, the app's way of writing an instant) in a <time>
    element whose datetime a machine reads; an entry written from another zone is shown in UTC."""
    utc, paris = write(app, [("bid.save", "Bid", "1", None, T0),
                             ("bid.save", "Bid", "2", None, datetime(2015, 6, 1, 16, 30, tzinfo=timezone(
                                 timedelta(hours=2))))])
    page = get(client)
    assert '<time datetime="2015-06-01T09:00:00+00:00">1 June 2015 at 09:00 UTC</time>' in row_of(page, utc)
    assert '<time datetime="2015-06-01T14:30:00+00:00">1 June 2015 at 14:30 UTC</time>' in row_of(page, paris)
    assert "2015-06-01 09:00:00" not in page


def test_sign_ins_and_sign_outs_are_left_out_unless_asked_for_across_pages_and_orders(app, client, admin):
    """The secretariat reads the log for what changed: sign-ins (user.login) and sign-outs (the sessions ended at a
    logout) would bury it, so they are left out until the box is ticked, and the tick is kept by the pager and the
    sort links. Sessions ended for another reason (a password changed) are no sign-out and stay."""
    email = "audit-admin@example.org"
    written = write(app, [("user.login", "User", str(admin), email, T0, {}),
                          ("user.sessions_ended", "User", str(admin), email, T0, {"reason": "logout"}),
                          ("user.sessions_ended", "User", str(admin), email, T0, {"reason": "password changed"})]
                    + MIXED * 3)
    login_entry, logout, password = written[:3]
    sign_ins = {login_entry, logout} | set(all_seqs(app, AuditEntry.action == "user.login", sign_ins=True))
    everything = all_seqs(app, sign_ins=True)
    shown = [s for s in everything if s not in sign_ins]
    default = get(client, "?sort=seq&dir=asc&page=2")
    assert seqs(default) == sorted(shown)[SIZE:2 * SIZE] and password in shown
    assert f"Entries 11–{len(shown)} of {len(shown)}" in default
    assert "Sign-ins and sign-outs are left out." in default
    assert 'id="f-signins">' in default and 'id="f-signins" checked' not in default
    asked = get(client, "?signins=show&sort=seq&dir=asc&page=2")
    assert seqs(asked) == sorted(everything)[SIZE:2 * SIZE] and login_entry not in seqs(default)
    assert f"of {len(everything)}" in asked and "left out" not in asked
    assert 'id="f-signins" checked' in asked
    # Every link to another page or order keeps the tick.
    links = [html.unescape(h) for h in re.findall(r'href="(/admin/audit/\?[^"]*)"', asked)]
    assert links and all("signins=show" in h for h in links), links
    first = get(client, next(h for h in links if "page=1" in h)[len(URL):])
    assert seqs(first) == sorted(everything)[:SIZE] and {login_entry, logout} <= set(seqs(first))
    by_action = get(client, next(h for h in links if "sort=action" in h)[len(URL):])
    assert "Sign-ins and sign-outs are left out." not in by_action
    assert len(seqs(by_action)) == SIZE
    # Who asks for the logins by name sees them, ticked or not; a value the box never sends is said back.
    assert set(seqs(get(client, "?action=user.login"))) == {s for s in sign_ins if s != logout}
    odd = get(client, "?signins=maybe", status=400)
    assert "“maybe” does not say whether to show sign-ins" in html.unescape(odd)
    assert login_entry not in seqs(odd)


def test_the_checkpoint_is_explained_as_a_fingerprint_to_keep_with_the_command_in_small_print(app, client, admin):
    write(app, MIXED)
    page = get(client)
    with app.app_context():
        head = audit.checkpoint()
    explained = text_of(re.search(r'<p id="checkpoint-explained">(.*?)</p>', page, re.S).group(1))
    assert explained.startswith(f"The code below is a fingerprint of the whole log up to entry {head.seq}: had any "
                                "entry up to there been changed, removed or slipped in, the code would be different.")
    assert "keep it outside Gambit" in explained and "the log was altered" in explained
    assert f'<code class="token" id="checkpoint">{head.seq}:{head.digest}</code>' in page
    # The command is there for IT, in small print, after the explanation: not the page's instruction.
    small = re.search(r"<small>For IT: (.*?)</small>", page, re.S)
    assert small and f"flask audit verify --expect {head}" in html.unescape(small.group(1))
    assert page.index("checkpoint-explained") < page.index("flask audit")


# --------------------------------------------------------------------- every action the code writes is told

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("accounts", "api", "bids", "board", "contracts", "core", "demo", "events", "finance", "scoring")


def _dossier_kinds() -> list[str]:
    """The kinds a dossier can be, read from the model's check constraint (kind IN ('bid', 'pack'))."""
    from board.models import Dossier
    text = next(str(c.sqltext) for c in Dossier.__table__.constraints if "kind IN" in str(getattr(c, "sqltext", "")))
    return re.findall(r"'([a-z_]+)'", text)


def _event_actions() -> list[str]:
    from events.lifecycle import EventAction
    return [a.value for a in EventAction]


def _bid_actions() -> list[str]:
    from bids.lifecycle import BidAction
    return [a.value for a in BidAction]


# The actions written as f-strings, by their source text: what each can be. A new one fails the walk until added.
DYNAMIC = {"action": ("", lambda: ["event.regulation_loaded", "event.regulation_upgraded"]),  # load_event's
           "f'dossier.{dossier.kind}'": ("dossier.", _dossier_kinds),
           "f'event.{action}'": ("event.", _event_actions),
           "f'bid.{action.value}'": ("bid.", _bid_actions)}


def _actions(node: ast.expr, where: str) -> list[str]:
    """Every action string the expression passed to audit.record can be. Raises AssertionError for one the walk
    cannot read."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _actions(node.body, where) + _actions(node.orelse, where)
    if isinstance(node, ast.JoinedStr | ast.Name) and ast.unparse(node) in DYNAMIC:
        prefix, values = DYNAMIC[ast.unparse(node)]
        return [prefix + v for v in values()]
    raise AssertionError(f"{where}: audit.record is given the action {ast.unparse(node)}, which this test cannot "
                         "read: add what it can be to DYNAMIC")


def written_actions() -> dict[str, list[tuple[str, set[str] | None]]]:
    """{action: [(where it is written, the keys of its data, None when they cannot be read)]} for every call of
    audit.record in the app's packages."""
    found: dict[str, list[tuple[str, set[str] | None]]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "record" and ast.unparse(node.func.value) in ("audit", "evidence.audit")):
                    continue
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                action = node.args[0] if node.args else next(k.value for k in node.keywords if k.arg == "action")
                data = next((k.value for k in node.keywords if k.arg == "data"), None)
                keys = ({k.value for k in data.keys if isinstance(k, ast.Constant)}
                        if isinstance(data, ast.Dict) and all(isinstance(k, ast.Constant) for k in data.keys)
                        else set() if data is None else None)
                for a in _actions(action, where):
                    found.setdefault(a, []).append((where, keys))
    return found


def test_every_action_the_code_writes_is_told_in_words_with_data_it_holds(app):
    """Walks the source for every call of audit.record and every action it can write (f-strings through DYNAMIC):
    each has a phrase registered with register_audit_actions, and each {key} of the phrase is in the data every
    such call writes (where the call's data can be read), so no sentence shows "…" for a key never recorded."""
    from evidence.audit_views import ACTIONS, _fields
    found = written_actions()
    assert sum(len(w) for w in found.values()) >= 50, found  # the walk found the calls (56 when written)
    untold = sorted(f"{a} ({found[a][0][0]})" for a in found if a not in ACTIONS)
    assert not untold, f"actions written with no phrase in register_audit_actions: {untold}"
    missing = [f"{a}: {{{name}}} is not in the data written at {where}"
               for a, writes in found.items() for name, _ in _fields(ACTIONS[a]) if name != "object"
               for where, keys in writes if keys is not None and name not in keys]
    assert not missing, missing
