"""What a page of each list that can grow costs: the same SQL statements and the same ORM objects with a list two
pages long as with one ten pages long, and the page's rows only (core.paging). The page size is made small (10) so
the lists stay quick to write; the pages read it from the PAGE_SIZE setting."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
from sqlalchemy import Engine, func, select
from sqlalchemy import event as sa_event

from accounts.models import User
from bids.models import Bid
from contracts.models import Contract, Payment
from core.db import db
from core.money import format_eur
from events.models import Event
from evidence import audit
from evidence.audit import AuditEntry
from operations import outbox
from scoring.models import Scorecard, ScorecardScore
from tests.conftest import computed, login
from tests.contracts.factories_contracts import ContractFactory
from tests.scoring.factories_scoring import SCORING_DAY, ScoringFactory
from tests.scoring.test_page_costs import NOT_SHOWN, counting

SIZE = 10
SMALL, LARGE = 2 * SIZE + 3, 10 * SIZE + 3
SLUG = "fwwcm-2015"
HOSTS = ("UKR", "ARM", "AZE", "BUL", "CRO", "POL", "ITA", "NED", "SWE", "NOR")


@pytest.fixture
def sf(app, make) -> ScoringFactory:
    app.config["PAGE_SIZE"] = SIZE
    return ScoringFactory(app, make)


def cost(client, url: str) -> tuple[dict, str]:
    """What showing `url` costs (after a first showing that fills the caches), and the page."""
    client.get(url)
    with counting() as seen, computed(client.application):
        response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return seen, response.get_data(as_text=True)


def body_rows(text: str, marker: str) -> int:
    """The rows of the first table body after `marker`."""
    start = text.index(marker)
    body = text[text.index("<tbody>", start):text.index("</tbody>", start)]
    return body.count("<tr")


def log_in(client, make, email: str, *roles: str) -> None:
    make.user(email=email, roles=roles)
    assert login(client, email).status_code == 302


def grow_bids(app, sf, event: int, n: int, have: list[int], owner: int | None = None) -> None:
    while len(have) < n:
        i = len(have)
        have.append(sf.bid(event, city=f"City {i}", host=HOSTS[i % len(HOSTS)], name=f"Federation {i}",
                           owner_id=owner))


def same_cost(small: dict, large: dict) -> None:
    assert large["statements"] == small["statements"]
    assert large["objects"] == small["objects"]
    assert not NOT_SHOWN & set(large["objects"]), large["objects"]


@pytest.mark.parametrize("role", ["admin", "wcoc"])
def test_a_page_of_the_bid_list_costs_the_same_at_23_and_103_bids(app, sf, event, client, make, role):
    log_in(client, make, f"paged-{role}@example.org", role)
    bids: list[int] = []
    grow_bids(app, sf, event, SMALL, bids)
    small, small_page = cost(client, "/bids/?page=2")
    grow_bids(app, sf, event, LARGE, bids)
    large, large_page = cost(client, "/bids/?page=2")
    same_cost(small, large)
    assert body_rows(small_page, "<table") == body_rows(large_page, "<table") == SIZE
    assert f"Bids 11–20 of {LARGE}" in large_page
    assert "Bid" not in large["objects"]  # submitted bids are read as rows


def test_a_page_of_a_bidders_own_bids_costs_the_same_at_23_and_103_bids(app, sf, event, client, make):
    owner = make.user(email="paged-owner@example.org", roles=("bidder",))
    assert login(client, "paged-owner@example.org").status_code == 302
    sf.bid(event, city="Someone else's")  # not listed
    bids: list[int] = []
    grow_bids(app, sf, event, SMALL, bids, owner=owner)
    small, small_page = cost(client, "/bids/?sort=city&dir=asc")
    grow_bids(app, sf, event, LARGE, bids, owner=owner)
    large, large_page = cost(client, "/bids/?sort=city&dir=asc")
    same_cost(small, large)
    assert body_rows(large_page, "<table") == SIZE
    assert f"Bids 1–10 of {LARGE}" in large_page and "Someone else" not in large_page


def score_all(app, sf, event: int, members: list[int], bids: list[int], scored: set[int]) -> None:
    """Each member submits a scorecard on each bid not scored yet (rows written directly: the counts are under test
    here, not the scoring rules), and declares no conflict."""
    with app.app_context():
        keys = [c.key for c in db.session.get(Event, event).regulation.criteria]
        for i, bid in enumerate(bids):
            if bid in scored:
                continue
            db.session.get(Bid, bid).status = "submitted"
            for m in members:
                db.session.add(Scorecard(
                    bid_id=bid, member_id=m, status="submitted", version=1, revision=2, created_at=SCORING_DAY,
                    updated_at=SCORING_DAY, submitted_at=SCORING_DAY,
                    scores=[ScorecardScore(criterion=k, score=Decimal(1 + (i + m + j) % 5), comment="")
                            for j, k in enumerate(keys)]))
        db.session.commit()
    for m in members:
        sf.declare(event, m)
    scored.update(bids)


def test_a_page_of_the_ranking_shows_its_bids_lines_and_cards_only_at_the_same_cost(app, sf, event, client, make):
    members = [sf.member(federation="GER", name=f"Member {i}") for i in range(3)]
    log_in(client, make, "paged-ranking@example.org", "admin")
    sf.status(event, "scoring")
    bids: list[int] = []
    scored: set[int] = set()
    url = f"/events/{SLUG}/scoring/ranking?page=2"
    grow_bids(app, sf, event, SMALL, bids)
    score_all(app, sf, event, members, bids, scored)
    small, small_page = cost(client, url)
    grow_bids(app, sf, event, LARGE, bids)
    score_all(app, sf, event, members, bids, scored)
    large, large_page = cost(client, url)
    assert large["statements"] == small["statements"]
    assert not NOT_SHOWN & set(large["objects"]) and "Scorecard" not in large["objects"]
    for page in (small_page, large_page):
        assert body_rows(page, '<table class="table ranking stack">') == SIZE
        assert page.count('<article class="card"') == SIZE
    assert f"Ranked bids 11–20 of {LARGE}" in large_page
    # A card's link to its criterion-by-criterion table stays on the card's page, and shows it there.
    on_page = re.findall(r'<article class="card" id="bid-(\d+)">', large_page)
    link = f"/events/{SLUG}/scoring/ranking?page=2&amp;details={on_page[0]}#bid-{on_page[0]}"
    assert f'<a href="{link}">The scores criterion by criterion</a>' in large_page
    detailed = client.get(link.replace("&amp;", "&").split("#")[0]).get_data(as_text=True)
    assert re.findall(r'<article class="card" id="bid-(\d+)">', detailed) == on_page
    assert detailed.count('<th scope="col" class="num">Members who scored it</th>') == 1
    # The leading bids are on the first page: its first line is rank 1, and its cards are theirs.
    first = client.get(f"/events/{SLUG}/scoring/ranking").get_data(as_text=True)
    lines = re.findall(r'<td class="key"><a href="#bid-(\d+)">', first)
    cards = re.findall(r'<article class="card" id="bid-(\d+)">', first)
    assert len(lines) == SIZE and lines == cards
    assert "Ranked bids 1–10 of" in first
    # The notes are those of the page's bids: two bids never scored (listed last, without a total) are named on the
    # last page, not on every page; so are the bids fewer members scored than were due to, the others counted with
    # their pages (a third, scored 5 by two of the three members: ranked first).
    grow_bids(app, sf, event, LARGE + 3, bids)
    with app.app_context():
        keys = [c.key for c in db.session.get(Event, event).regulation.criteria]
        for m in members[:2]:
            db.session.add(Scorecard(
                bid_id=bids[-1], member_id=m, status="submitted", version=1, revision=2, created_at=SCORING_DAY,
                updated_at=SCORING_DAY, submitted_at=SCORING_DAY,
                scores=[ScorecardScore(criterion=k, score=Decimal(5), comment="") for k in keys]))
        db.session.commit()
    with computed(client.application):  # rows written beneath the services: each page computed afresh
        last = client.get(f"/events/{SLUG}/scoring/ranking?page=11").get_data(as_text=True)
        second = client.get(url).get_data(as_text=True)
        first_page = client.get(f"/events/{SLUG}/scoring/ranking").get_data(as_text=True)
    unranked = "Federation 103 — City 103, Ukraine, Federation 104 — City 104, Ukraine"
    assert f"<p class=\"hint\">Without a total, listed last and unranked: {unranked}.</p>" in last
    assert "Without a total" not in second and "Without a total" not in first_page

    def short(page: str) -> str:
        return re.search(r'<p class="flash warning" id="short-of-scorecards">(.*?)</p>', page).group(1)

    assert short(last) == ("Not every WCOC member scored: Federation 103 — City 103, Ukraine, 0 of 3 members scored; "
                           "Federation 104 — City 104, Ukraine, 0 of 3 members scored; and 1 bid on other pages of "
                           "the ranking (page 1). The totals rest on the scorecards that are in.")
    assert short(second) == ("Not every WCOC member scored 3 bids, on other pages of the ranking (pages 1 and 11). "
                             "The totals rest on the scorecards that are in.")
    assert short(first_page) == ("Not every WCOC member scored: Federation 105 — City 105, Ukraine, 2 of 3 members "
                                 "scored; and 2 bids on other pages of the ranking (page 11). The totals rest on the "
                                 "scorecards that are in.")


def test_a_page_of_the_outbox_costs_the_same_at_23_and_103_messages(app, client, make):
    app.config["PAGE_SIZE"] = SIZE
    log_in(client, make, "paged-outbox@example.org", "admin")
    written = datetime(2015, 6, 1, tzinfo=UTC)

    def write(start: int, end: int) -> None:
        with app.app_context():
            for k in range(start, end):
                db.session.add(outbox.OutboxMessage(
                    message_id=f"<cost-{k}@example.org>", created_at=written + timedelta(minutes=k), kind="test",
                    recipients="to@example.org", subject=f"Message {k}", body="Hello", next_attempt_at=written))
            db.session.commit()

    write(0, SMALL)
    small, small_page = cost(client, "/admin/outbox/?page=2")
    write(SMALL, LARGE)
    large, large_page = cost(client, "/admin/outbox/?page=2")
    same_cost(small, large)
    assert large["objects"]["OutboxMessage"] == SIZE
    assert body_rows(small_page, "<table") == body_rows(large_page, "<table") == SIZE


def copy_contracts(app, sf, event: int, template_id: int, n: int) -> None:
    """`n` more draft contracts, each on a bid of its own, copied from the contract `template_id` (its terms and
    milestones are not what the list's cost depends on)."""
    with app.app_context():
        template = db.session.get(Contract, template_id)
        terms, version_id = template.terms_json, template.regulation_version_id
    bids: list[int] = []
    grow_bids(app, sf, event, n, bids)
    with app.app_context():
        for bid in bids:
            db.session.add(Contract(bid_id=bid, regulation_version_id=version_id, version=1, status="draft",
                                    terms_json=terms, created_at=SCORING_DAY))
        db.session.commit()


def test_a_page_of_the_contracts_costs_the_same_at_23_and_103_contracts(app, sf, event, client, make):
    cf = ContractFactory(app, make)
    issued = cf.contract(event)
    log_in(client, make, "paged-contracts@example.org", "admin")
    copy_contracts(app, sf, event, issued, SMALL - 1)
    small, small_page = cost(client, "/contracts/?page=2")
    copy_contracts(app, sf, event, issued, LARGE - SMALL)
    large, large_page = cost(client, "/contracts/?page=2")
    assert large["statements"] == small["statements"]
    assert large["objects"]["Contract"] == small["objects"]["Contract"] == SIZE
    assert body_rows(small_page, "<h2>Every contract</h2>") == body_rows(large_page, "<h2>Every contract</h2>") == SIZE
    assert f"Contracts 11–20 of {LARGE}" in large_page
    # The issued contract is the oldest bid's: on the last page, newest bid first.
    last = client.get(f"/contracts/?page={-(-LARGE // SIZE)}").get_data(as_text=True)
    assert f'/contracts/{issued}"' in last
    assert f"Contracts {LARGE - LARGE % SIZE + 1}–{LARGE} of {LARGE}" in last


def contract_in_force(app, event, client, make, email: str) -> tuple[int, int]:
    """A contract (the contracts' factory) and one of its milestones the organizer pays (not a cap), with pages of
    SIZE rows, the client logged in as the secretariat `email`. Returns their ids."""
    app.config["PAGE_SIZE"] = SIZE
    contract_id = ContractFactory(app, make).contract(event)
    log_in(client, make, email, "admin")
    with app.app_context():
        m = next(m for m in db.session.get(Contract, contract_id).milestones
                 if m.milestone_kind.organizer_pays and not m.is_cap)
        return contract_id, m.id


def test_a_page_of_a_milestones_entries_costs_the_same_at_23_and_103_entries(app, event, client, make):
    """The same statements and the same objects: the page's entries (and the entries they reverse), never the
    milestone's others; its status is read from aggregates."""
    contract_id, milestone_id = contract_in_force(app, event, client, make, "paged-payments@example.org")

    def record(start: int, end: int) -> None:
        """Entries k = start..end-1, received a day apart; every fifth reverses the one before it."""
        with app.app_context():
            for k in range(start, end):
                reverses = None
                if k % 5 == 4:
                    reverses = db.session.scalar(select(Payment.id).where(Payment.idempotency_key == f"paged-{k - 1}"))
                db.session.add(Payment(milestone_id=milestone_id, amount=Decimal("-1.00" if reverses else "1.00"),
                                       kind="reversal" if reverses else "payment", reverses_id=reverses,
                                       reason="Sent twice" if reverses else None,
                                       received_on=date(2015, 7, 1) + timedelta(days=k), reference=f"Transfer {k}",
                                       idempotency_key=f"paged-{k}", recorded_at=SCORING_DAY))
            db.session.commit()

    url = f"/contracts/{contract_id}/milestones/{milestone_id}?page=2&sort=received&dir=desc&as_of=2016-01-01"
    record(0, SMALL)
    small, small_page = cost(client, url)
    record(SMALL, LARGE)
    large, large_page = cost(client, url)
    # (The contract's bid brings its room rates, as every contract page does: the same two at both sizes.)
    assert large["statements"] == small["statements"] and large["objects"] == small["objects"]
    assert small["objects"]["Payment"] == large["objects"]["Payment"] <= 2 * SIZE
    assert body_rows(small_page, "<h2>What FIDE has recorded</h2>") == SIZE
    assert body_rows(large_page, "<h2>What FIDE has recorded</h2>") == SIZE
    assert f"Entries 11–20 of {LARGE}" in large_page
    # Newest first: the second page of 103 entries starts at the 93rd received.
    shown = re.findall(r"<td data-label=\"Reference\">Transfer (\d+)", large_page)
    assert shown == [str(k) for k in range(LARGE - 11, LARGE - 21, -1)]
    # The figures count every entry: 103 entries, 21 of them reversals of the one before.
    reversals = sum(1 for k in range(LARGE) if k % 5 == 4)
    assert f"<dt>Received</dt><dd>{format_eur(Decimal(LARGE - 2 * reversals))}" in large_page


def test_a_page_of_the_contracts_costs_the_same_whatever_the_payments_of_a_contract_in_force(app, event, client,
                                                                                             make):
    """The Overdue and Next due columns read each milestone's status from aggregates: 23 or 103 payments on a
    contract in force, the same statements and objects, and no Payment object."""
    contract_id, milestone_id = contract_in_force(app, event, client, make, "paged-contract-payments@example.org")

    def record(start: int, end: int) -> None:
        with app.app_context():
            for k in range(start, end):
                db.session.add(Payment(milestone_id=milestone_id, amount=Decimal("0.10"),
                                       received_on=date(2015, 7, 1) + timedelta(days=k), reference=f"Transfer {k}",
                                       idempotency_key=f"list-{k}", recorded_at=SCORING_DAY))
            db.session.commit()

    record(0, SMALL)
    small, small_page = cost(client, "/contracts/")
    record(SMALL, LARGE)
    large, large_page = cost(client, "/contracts/")
    assert large["statements"] == small["statements"] and large["objects"] == small["objects"]
    assert "Payment" not in large["objects"]
    assert f'/contracts/{contract_id}"' in large_page


def write_entries(app, start: int, end: int, actors: tuple[int | None, ...] = (None,)) -> None:
    """Audit entries k = start..end-1 through evidence.audit.record, over five kinds of object (two of them linked
    through a lookup, one linked without, two not linked), so that any ten in a row hold every kind; who acted turns
    through `actors` (user ids, None for the system), each named on the page."""
    kinds = [("bid.save", "Bid"), ("event.close", "Event"), ("payment.record", "Payment"),
             ("scoring.scorecard_saved", "Scorecard"), ("user.roles", "User")]
    with app.app_context():
        people = {i: db.session.get(User, i) for i in actors if i is not None}
        for k in range(start, end):
            action, otype = kinds[k % len(kinds)]
            actor = actors[k % len(actors)]
            audit.record(action, actor=people.get(actor) if actor is not None else None,
                         now=datetime(2015, 6, 1, tzinfo=UTC) + timedelta(minutes=k),
                         object_type=otype, object_id=str(k + 1), data={"k": k, "note": "x" * (k % 300)})
        db.session.commit()


def test_a_page_of_the_audit_log_costs_the_same_at_23_and_103_entries(app, client, make):
    app.config["PAGE_SIZE"] = SIZE
    log_in(client, make, "paged-audit@example.org", "admin")
    # Seven people acting in turn: a page names those on it (the names of all, actors and users acted on, in one
    # statement), so a page of ten costs the same as a page of entries by one person.
    actors = tuple(make.user(email=f"paged-audit-{i}@example.org", name=f"Actor {i}") for i in range(6)) + (None,)
    with app.app_context():
        before = db.session.scalar(select(func.count()).select_from(AuditEntry))
    write_entries(app, 0, SMALL - before, actors)
    small, small_page = cost(client, "/admin/audit/?page=2")
    write_entries(app, SMALL - before, LARGE - before, actors)
    large, large_page = cost(client, "/admin/audit/?page=2")
    same_cost(small, large)
    assert large["objects"]["AuditEntry"] == small["objects"]["AuditEntry"] == SIZE + 1  # the page, and the head
    assert body_rows(small_page, '<table class="table stack" id="audit">') == SIZE
    assert body_rows(large_page, '<table class="table stack" id="audit">') == SIZE
    # Sign-ins are left out by default: the admin's login is not counted.
    with app.app_context():
        logins = db.session.scalar(select(func.count()).select_from(AuditEntry)
                                   .where(AuditEntry.action == "user.login"))
    assert logins == 1 and f"Entries 11–20 of {LARGE - logins}" in large_page
    assert "Actor 1" in large_page and large["objects"].get("User", 0) == small["objects"].get("User", 0)
    # Statements count the same whatever the rows they read: every read of the log is a COUNT or a LIMIT (the chain
    # is never walked on view), which a statement count alone would not show.
    reads: list[str] = []

    def on_execute(conn, cursor, statement, parameters, context, executemany):
        if "FROM audit_entry" in statement:
            reads.append(statement)

    sa_event.listen(Engine, "before_cursor_execute", on_execute)
    try:
        client.get("/admin/audit/?page=2")
    finally:
        sa_event.remove(Engine, "before_cursor_execute", on_execute)
    assert reads and all("count(" in r or "LIMIT" in r for r in reads), reads
    # Filtered by an action family and sorted by action, the same again.
    url = "/admin/audit/?action=bid.&sort=action&dir=asc&from=2015-06-01&page=2"
    write_entries(app, LARGE - before, LARGE - before + 5 * SMALL)
    filtered_small, _ = cost(client, url)
    write_entries(app, LARGE - before + 5 * SMALL, LARGE - before + 5 * LARGE)
    filtered_large, _ = cost(client, url)
    same_cost(filtered_small, filtered_large)
