"""The whole flow of one call as a hypothesis state machine (issue 11, "Done means").

Random sequences of SERVICE calls (bids, events, scoring, board, contracts: never the views) by random actors
(bidders, the secretariat, WCOC members of several federations, board members, the President) drive the 2015
call from its file: drafts, paper bids, submissions, withdrawals, reopenings, late admission, the deadline
passing (a simulated clock), the call's transitions, declarations, scorecards, reading the scores, the board
pack, votes, decisions and minutes, corrections, contracts, payments and reversals. A refusal (the domain's
exception) is an answer; anything else (IntegrityError, AttributeError, ...) fails the test. After every step
the invariants of the flow are checked (see `step` and the `@invariant`).

Two kinds of rules: "anything goes" rules (any actor, any bid, any action: most are refused, and a refusal must
change and audit nothing) and steering rules that do what a careful user does next (declare conflicts for every
listed bid, score the bids still due, make the pack then decide, contract with the winner, pay its milestones),
so that a fixed budget of steps reaches the end of the flow. Each example starts at a stage of the flow drawn by
`initialize` (reached through the same services, checked the same way), so that every stage gets its share of
the steps. COVERAGE counts what each step did across the run; `pytest -s` prints it.

Each step is a request: the service runs, then the session commits (or rolls back on a refusal) and is
removed, so nothing is held across steps. Each example runs inside a savepoint of the test's rolled-back
transaction (tests/conftest.py `_rollback`), rolled back when the example ends.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
from collections import Counter
from datetime import date, timedelta
from decimal import Decimal

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import event as statistic
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from sqlalchemy import func, select

import evidence.pdf
from accounts.models import User
from accounts.services import AccountError, create_user
from bids import services as bids
from bids.lifecycle import BidStatus
from bids.lifecycle import TransitionError as BidTransitionError
from bids.models import Bid, BidVersion
from board import queries as board_queries
from board import services as board
from board.models import Decision, Dossier, Vote
from board.rules import DecisionError
from contracts import payments as contract_payments
from contracts import queries as contract_queries
from contracts import services as contracts
from contracts.models import Contract, Milestone, Payment
from contracts.rules.terms import ContractRuleError
from core.db import db
from core.lifecycle import LifecycleError
from events.lifecycle import MANUAL_ACTIONS, EventStatus, actions_from
from events.lifecycle import TransitionError as EventTransitionError
from events.models import Event
from events.regulation import default_event_file, load_regulation_file
from events.services import change_event_status, load_event
from evidence.audit import AuditEntry, checkpoint, verify_chain, verify_evidence
from scoring import services as scoring
from scoring.lifecycle import ScoringRuleError
from scoring.models import ConflictDeclaration, Scorecard, conflict_declaration_bid
from scoring.queries import (
    REVIEWED_STATUSES,
    bids_before_reviewers,
    build_ranking,
    declaration_of,
    load_scoring,
    scores_csv,
)
from tests.bids.factories import valid_bid
from tests.contracts.factories_contracts import fake_render, proposed_dates

# The domain's refusals: an answer to the person who asked, never a failure of the test.
REFUSALS = (bids.BidError, BidTransitionError, scoring.ScoringError, ScoringRuleError, DecisionError,
            contracts.ContractError, ContractRuleError, EventTransitionError, LifecycleError, AccountError)

# Budget: a fixed number of examples and steps, under a minute on SQLite; the same sequences on PostgreSQL
# (derandomized: CI sees the same examples every run, and a failure is reproducible). Shrinking a failure to the
# shortest sequence can take minutes, so it is on only when asked: GAMBIT_STATEFUL_SHRINK=1 pytest <this file>.
PHASES = tuple(Phase) if os.environ.get("GAMBIT_STATEFUL_SHRINK") == "1" else (
    Phase.explicit, Phase.reuse, Phase.generate)
SETTINGS = settings(deadline=None, derandomize=True, phases=PHASES,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
# (examples, steps) from each stage: the later stages have fewer steps of their own before them (the flow up to
# them is walked through by `initialize`), and the contracts' stage most to do.
BUDGET = {"open": (4, 40), "closed": (3, 30), "scoring": (4, 40), "deliberation": (4, 40), "decided": (6, 50)}

# What each step did across the run ("<step>: done" / "<step>: refused"): printed by the test (pytest -s), not
# asserted, so that a change that starves a stage of the flow shows up when someone looks.
COVERAGE: Counter = Counter()

# How far the runs get: each stage of the flow, as a query that finds a row proving the call reached it.
REACH_QUERIES = {
    "submitted": lambda event_id: select(BidVersion.id).join(Bid, BidVersion.bid_id == Bid.id)
    .where(Bid.event_id == event_id),
    "scored": lambda event_id: select(Scorecard.id).join(Bid, Scorecard.bid_id == Bid.id)
    .where(Bid.event_id == event_id, Scorecard.version >= 1),
    "decided": lambda event_id: select(Decision.id).where(Decision.event_id == event_id),
    "contracted": lambda event_id: select(Contract.id).join(Bid, Contract.bid_id == Bid.id)
    .where(Bid.event_id == event_id, Contract.issued_at.is_not(None)),
    "paid": lambda event_id: select(Payment.id).join(Milestone, Payment.milestone_id == Milestone.id)
    .join(Contract, Milestone.contract_id == Contract.id).join(Bid, Contract.bid_id == Bid.id)
    .where(Bid.event_id == event_id, Payment.kind == "payment"),
}
# The stages each test's fixed budget reaches in at least one of its examples (derandomized, so the same every
# run): a change that starves a stage of the flow fails the test instead of going unnoticed.
MUST_REACH = {
    "open": ("submitted", "scored", "decided"),
    "closed": ("submitted", "scored"),
    "scoring": ("submitted", "scored"),
    "deliberation": ("submitted", "scored", "decided"),
    "decided": ("submitted", "scored", "decided", "contracted", "paid"),
}
REACHED: dict[str, set[str]] = {}

PASSWORD = "correct horse battery staple"
# The stage the examples of each test start from (one test per stage, each with the budget above), so that every
# stage of the flow gets its share of steps whatever hypothesis draws.
STAGES = ("open", "closed", "scoring", "deliberation", "decided")
FORWARD = {"open": "close", "closed": "open_scoring", "scoring": "close_scoring"}
SCORING_OVER = (EventStatus.DELIBERATION.value, EventStatus.DECIDED.value)

# Steps that, when they succeed, always change a lifecycle row, so they must write at least one audit entry even
# where the fingerprint below would not see the change.
ALWAYS_AUDITED = {
    "create_bid", "submit_bid", "withdraw_bid", "reopen_bid", "reject_bid", "admit_late_bid", "admit_to_scoring_bid",
    "declare_conflicts", "submit_scorecard", "reopen_scorecard", "record_scores_shown", "cast_vote",
    "record_decision", "correct_decision", "store_minutes", "create_contract", "issue_contract",
    "prepare_contract_correction", "record_payment", "reverse_payment",
    *(f"call {a}" for a in MANUAL_ACTIONS),
}


def fast_pdf(html: str, *, timeout: float | None = None, attachments=()) -> bytes:
    """A one-page PDF standing in for WeasyPrint (the templates are still rendered; the PDF, and the files it would
    carry, are not what this test is about, and WeasyPrint takes seconds per dossier)."""
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=595, height=842)
    writer.add_metadata({"/Subject": hashlib.sha256(html.encode()).hexdigest()})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def pick(ids: list, i: int):
    return ids[i % len(ids)]


def _shown_to(data, member) -> tuple[set[tuple[int, int]], set[int]]:
    """What the views show `member` of the others' scores, as (bid, other member): beside each bid (`others_on`),
    counted in the ranking (`build_ranking(data, viewer)`) and in the CSV export; and the bids the ranking lists."""
    shown: set[tuple[int, int]] = set()   # (bid, other member)
    for bid in data.ranked:
        shown |= {(bid.id, other.id) for other, _, _ in data.others_on(bid, member)}
    report = build_ranking(data, member)
    shown |= {(bid_id, m) for bid_id, by in report.counted.items() for m in by}
    ranked_ids = {r.bid_id for r in report.ranking.bids}
    by_name = {u.name: u.id for u in data.members.values()}
    for row in list(csv.DictReader(io.StringIO(scores_csv(data, member)))):
        shown.add((int(row["bid_id"]), by_name[row["member"]]))
    return {(b, m) for b, m in shown if m != member.id}, ranked_ids


def _blind_phase_violations(where: str, bid_id: int, other: int, *, missing, due, own, listed,
                            first_shown) -> list[str]:
    """While scoring is open, a member shown another member's scores on a bid must have submitted their own
    scorecards on every bid due (`missing` none), be due to score some bid, and have a declaration covering every
    listed bid that records the first showing."""
    out = []
    if missing:
        out.append(f"{where}: shown member {other}'s scores on bid {bid_id} before submitting "
                   f"their own scorecards on bids {missing}")
    if not due:
        out.append(f"{where}: recused from every bid, shown member {other}'s scores on bid "
                   f"{bid_id} before scoring closed")
    if own is None or not listed <= own[0]:
        out.append(f"{where}: shown scores with no declaration covering every listed bid")
    if first_shown is None:
        out.append(f"{where}: shown scores, yet their declaration does not record it")
    return out


class FlowMachine(RuleBasedStateMachine):
    app = None     # set by the test
    stage = "open"  # set by the test: where `the_call_and_its_people` leaves the flow

    def __init__(self):
        super().__init__()
        self._ctx = self.app.app_context()
        self._ctx.push()
        self._req = self.app.test_request_context()
        self._req.push()
        db.session.remove()
        # Every example inside its own savepoint of the test's outer transaction.
        self._example = db.session.get_bind().begin_nested()
        self.reg = load_regulation_file(default_event_file())
        self.deadline = self.reg.event.bid_deadline
        self.now = self.deadline - timedelta(days=12)
        self.upload_dir = self.app.config["UPLOAD_DIR"]
        self.event_id: int | None = None
        self.status = EventStatus.OPEN.value   # the call's status after the last step (for the preconditions)
        self.bid_ids: list[int] = []
        self.decision_ids: list[int] = []
        self.contract_ids: list[int] = []
        self.payment_ids: list[int] = []
        self.seen_versions: set[int] = set()
        self.read_before_own: dict[tuple[int, int], str] = {}   # (member, bid) -> the step that showed scores
        # member -> {bid: conflicted?} over the bids their declaration covered when scores were first shown to them
        self.locked_declarations: dict[int, dict[int, bool]] = {}
        self.violations: list[str] = []
        self.steps = 0
        self.packs_made = 0
        self._facts: dict = {}   # what the preconditions asked the database since the last step
        self.head = None   # the audit chain's checkpoint after the last step

    def teardown(self):
        try:
            db.session.remove()
            self._example.rollback()
        finally:
            self._req.pop()
            self._ctx.pop()

    # ------------------------------------------------------------------------------------------ helpers

    def user(self, uid: int) -> User:
        return db.session.get(User, uid)

    def event(self) -> Event:
        return db.session.get(Event, self.event_id)

    def bid(self, i: int) -> Bid:
        return db.session.get(Bid, pick(self.bid_ids, i))

    def newest(self, model) -> int:
        return db.session.scalars(select(model.id).order_by(model.id.desc())).first()

    def fingerprint(self) -> dict:
        """The state of every lifecycle row (not revisions or timestamps): {(kind, id): (state, audited as)}, where
        "audited as" are the (object type, id) an audit entry of a change of that row may name (its own, or for a
        row made with its parent, the parent's). Read as plain columns (no ORM objects), once per step."""
        run = db.session.execute
        conflicts: dict[int, list[int]] = {}
        link = conflict_declaration_bid.c
        for decl_id, bid_id in run(select(link.declaration_id, link.bid_id)):
            conflicts.setdefault(decl_id, []).append(bid_id)
        rows = {("event", i): (status, {("Event", i)}) for i, status in run(select(Event.id, Event.status))}
        rows |= {("bid", r[0]): (tuple(r[1:]), {("Bid", r[0])}) for r in run(select(
            Bid.id, Bid.status, Bid.version, Bid.admitted_reason, Bid.entered_by_id, Bid.late_admitted_reason))}
        rows |= {("version", i): (n, {("Bid", b)}) for i, b, n in run(select(BidVersion.id, BidVersion.bid_id,
                                                                              BidVersion.number))}
        rows |= {("decl", r[0]): ((*r[1:], tuple(sorted(conflicts.get(r[0], ())))), {("ConflictDeclaration", r[0])})
                 for r in run(select(ConflictDeclaration.id, ConflictDeclaration.has_conflict,
                                     ConflictDeclaration.covered_bid_ids, ConflictDeclaration.scores_first_shown_at))}
        rows |= {("card", r[0]): (tuple(r[1:]), {("Scorecard", r[0])})
                 for r in run(select(Scorecard.id, Scorecard.status, Scorecard.version))}
        rows |= {("vote", i): (b, {("Vote", i)}) for i, b in run(select(Vote.id, Vote.bid_id))}
        rows |= {("decision", r[0]): (tuple(r[1:]), {("Decision", r[0])})
                 for r in run(select(Decision.id, Decision.selected_bid_id, Decision.status, Decision.minutes_sha256))}
        rows |= {("dossier", i): (h, {("Dossier", i)}) for i, h in run(select(Dossier.id, Dossier.pdf_sha256))}
        rows |= {("contract", i): (status, {("Contract", i)})
                 for i, status in run(select(Contract.id, Contract.status))}
        rows |= {("milestone", i): (a, {("Contract", c)}) for i, c, a in run(select(
            Milestone.id, Milestone.contract_id, Milestone.amount))}
        rows |= {("payment", i): (a, {("Payment", i), ("Contract", c)} if kind == "carried_over" else {("Payment", i)})
                 for i, kind, a, c in run(select(Payment.id, Payment.kind, Payment.amount, Milestone.contract_id)
                                          .join(Milestone, Payment.milestone_id == Milestone.id))}
        return {k: (v[0], {(t, str(i)) for t, i in v[1]}) for k, v in rows.items()}

    def fact(self, name: str, compute):
        """A precondition's answer from the database, asked once per step (hypothesis asks every precondition
        before every step)."""
        if name not in self._facts:
            self._facts[name] = compute()
            db.session.remove()
        return self._facts[name]

    def last_audit_id(self) -> int:
        return db.session.scalar(select(func.coalesce(func.max(AuditEntry.id), 0)))

    def step(self, what: str, work):
        """Run one service call as a request: commit on success, roll back on a refusal. A refusal changes nothing
        and writes nothing to the audit log; a success writes one audit entry naming each row it changed (at
        least one for a lifecycle step), and the chain verifies up to the checkpoint of the step before.
        Returns (ok, result)."""
        self.steps += 1
        self._facts.clear()
        before_audit, before = self.last_audit_id(), self.fingerprint()
        status_before = self.event().status if self.event_id else None
        db.session.commit()
        try:
            result = work()
            db.session.commit()
            ok = True
        except REFUSALS as exc:
            db.session.rollback()
            ok, result = False, None
            if os.environ.get("GAMBIT_STATEFUL_DEBUG"):
                print(f"  {what}: refused: {exc}")
        db.session.remove()
        COVERAGE[f"{what}: {'done' if ok else 'refused'}"] += 1
        COVERAGE[f"(steps with the call '{status_before}')"] += 1
        statistic(f"{what}: {'done' if ok else 'refused'}")
        after_audit, after = self.last_audit_id(), self.fingerprint()
        if self.event_id:
            self.status = self.event().status
        if ok:
            audited = {(t, i) for t, i in db.session.execute(
                select(AuditEntry.object_type, AuditEntry.object_id).where(AuditEntry.id > before_audit))}
            changed = sorted(k for k in before.keys() | after.keys()
                             if (before.get(k) or (None,))[0] != (after.get(k) or (None,))[0])
            unaudited = [k for k in changed if not (after.get(k) or before.get(k))[1] & audited]
            assert not unaudited, f"{what}: changed {unaudited} without an audit entry naming them"
            assert what not in ALWAYS_AUDITED or after_audit > before_audit, (
                f"{what}: succeeded without writing the audit log")
            if self.event_id:
                self.check_new_versions(what, status_before)
        else:
            assert after_audit == before_audit and after == before, f"{what}: refused, yet it changed the state"
        db.session.remove()
        return ok, result

    def check_new_versions(self, what: str, status_before: str) -> None:
        """No bid submitted after the deadline except by an audited late admission; nothing enters a call under
        scoring, deliberation or decided."""
        for v in db.session.scalars(select(BidVersion)):
            if v.id in self.seen_versions:
                continue
            self.seen_versions.add(v.id)
            late = db.session.scalar(select(func.count(AuditEntry.id)).where(
                AuditEntry.object_type == "Bid", AuditEntry.object_id == str(v.bid_id),
                AuditEntry.action == "bid.late_admission"))
            if v.submitted_at > self.deadline and not late:
                self.violations.append(f"{what}: bid {v.bid_id} version {v.number} submitted at "
                                       f"{v.submitted_at:%Y-%m-%d}, after the deadline, with no audited late admission")
            if status_before not in (EventStatus.OPEN.value, EventStatus.CLOSED.value):
                self.violations.append(f"{what}: bid {v.bid_id} version {v.number} submitted into a call that "
                                       f"was '{status_before}'")

    # ------------------------------------------------------------------------------------------ the cast

    def person(self, role: str, name: str, *, federation=None, is_president=False) -> int:
        user = create_user(email=f"{name.lower()}@example.org", password=PASSWORD, name=name, roles=[role],
                           actor=None, now=self.now, federation=federation, is_president=is_president,
                           applicant_type="federation" if role == "bidder" else None,
                           organisation=f"Federation {federation}" if role == "bidder" else "")
        db.session.flush()
        return user.id

    @initialize(late_paper=st.booleans(), by_vote=st.booleans())
    def the_call_and_its_people(self, late_paper, by_vote):
        """The call, its people and four complete bids (two typed in and submitted by their bidders, one paper
        bid keyed in by the secretariat, one online draft left unsubmitted), then the flow driven by the steering
        rules up to the test's `stage`: each example spends its budget from there. The paper bid is submitted in
        time, or (`late_paper`) admitted late once the deadline has passed; the decision is by board vote or
        (`by_vote` False) the President's."""
        stage = self.stage
        COVERAGE[f"(examples starting at '{stage}')"] += 1
        event, _ = load_event(self.reg, actor=None, now=self.now, source="stateful test")
        self.event_id = event.id
        self.admin = self.person("admin", "Secretariat")
        self.bidders = [self.person("bidder", n, federation=f) for n, f in
                        (("Ukraine", "UKR"), ("Georgia", "GEO"), ("Spain", "ESP"))]
        self.wcoc = [self.person("wcoc", n, federation=f) for n, f in
                     (("Aalto", "FIN"), ("Kovalenko", "UKR"), ("Beridze", "GEO"))]
        self.board = [self.person("board", n, federation=f) for n, f in (("Berg", "SWE"), ("Ochoa", "ESP"))]
        self.president = self.person("board", "President", federation="FRA", is_president=True)
        self.everyone = [self.admin, *self.bidders, *self.wcoc, *self.board, self.president]
        db.session.commit()
        self.head = checkpoint()
        db.session.remove()
        self.four_bids()
        if stage == "open":
            return
        if late_paper:
            self.time_passes(13)
            self.late_bid(0)
        else:
            self.secretariat_acts_on_bid(2, "submit")
        self.call_moves_on()                                    # closed
        if stage == "closed":
            return
        self.call_moves_on()                                    # scoring
        for who in range(3):
            self.declare_every_listed_bid(who, conflict=None)
        if stage == "scoring":
            return
        self.everything_scored()
        self.call_moves_on()                                    # deliberation
        for who in range(3):
            self.read_scores(who)
        if stage == "deliberation":
            return
        if by_vote:
            self.board_agrees(0)
        self.decide(0, by_vote)                                 # decided

    def four_bids(self) -> None:
        """Two bids typed in and submitted by their bidders, a paper bid keyed in by the secretariat (not yet
        submitted), and a complete online draft left unsubmitted."""
        for who, paper in ((0, False), (1, False), (2, True)):
            self.create_bid(who, paper)
            self.fill_bid(who, compliant=True, by_admin=paper)
            if not paper:
                self.bidder_acts(who, "submit", "owner")
        # A complete online draft its bidder never submitted: at every later stage, submitting it must be refused.
        self.create_bid(2, False)
        self.fill_bid(3, compliant=True, by_admin=False)

    def everything_scored(self) -> None:
        """Steering: for each WCOC member, as many scorecards submitted as there are bids (score_due: from that
        member, or the next one with a scorecard due), each with the score 3."""
        for who in range(3):
            for _ in range(len(self.bid_ids)):
                self.score_due(who, "3")

    # ------------------------------------------------------------------------------------------ bids

    @precondition(lambda self: len(self.bid_ids) < 5)
    @rule(who=st.integers(0, 2), paper=st.booleans())
    def create_bid(self, who, paper):
        """A draft, or a paper bid keyed in by the secretariat on the bidder's behalf."""
        owner, admin = self.user(self.bidders[who]), self.user(self.admin)
        ok, _ = self.step("create_bid", lambda: bids.create_bid(
            self.event(), owner=owner, actor=admin if paper else owner, now=self.now,
            entered_by=admin if paper else None))
        if ok:
            self.bid_ids.append(self.newest(Bid))

    @precondition(lambda self: self.bid_ids and self.status in ("open", "closed"))
    @rule(i=st.integers(0, 9), compliant=st.booleans(), by_admin=st.booleans())
    def fill_bid(self, i, compliant, by_admin):
        """Every section saved with a complete bid's values, and its documents uploaded."""
        bid = self.bid(i)
        actor = self.user(self.admin) if by_admin else bid.owner
        owner = bid.owner
        overrides = {} if compliant else {"prize_fund_eur": self.reg.prize_fund.minimum - 1}
        data = valid_bid(self.reg, applicant_name=owner.organisation, host_federation=owner.federation,
                         signed_on=self.now.date() - timedelta(days=1), **overrides)
        template = Bid()
        bids.apply_data(template, data)
        rates = [(r.room_type, r.eur_per_night) for r in template.room_rates]

        def work():
            b = db.session.get(Bid, bid.id)
            for section, columns in bids.SECTION_COLUMNS.items():
                bids.save_section(b, section, {c: getattr(template, c) for c in columns}, actor=actor,
                                  now=self.now, revision=b.revision, room_rates=rates if section == "hotel" else None)
            for kind in ("signed_letter", "guarantee"):
                bids.store_document(b, kind, filename=f"{kind}.pdf", content=fast_pdf(kind),
                                    upload_dir=self.upload_dir, max_bytes=10_000_000, actor=actor, now=self.now)

        self.step("fill_bid", work)

    @precondition(lambda self: self.bid_ids)
    @rule(i=st.integers(0, 9), action=st.sampled_from(["submit", "withdraw", "reopen"]),
          by=st.sampled_from(["owner", "owner", "other"]))
    def bidder_acts(self, i, action, by):
        """The bidder (or another bidder) submits, withdraws or reopens a bid."""
        bid = self.bid(i)
        actor = bid.owner if by == "owner" else self.user(self.bidders[(self.bidders.index(bid.owner_id) + 1) % 3])
        status = self.status
        ok, _ = self.step(f"{action}_bid", {
            "submit": lambda: bids.submit_bid(bid, actor=actor, now=self.now),
            "withdraw": lambda: bids.withdraw_bid(bid, actor=actor, now=self.now),
            "reopen": lambda: bids.reopen_bid(bid, actor=actor, now=self.now),
        }[action])
        if ok and action == "reopen" and status != EventStatus.OPEN.value:
            self.violations.append(f"reopen_bid: a submitted bid was reopened while the call was '{status}'")

    @precondition(lambda self: self.bid_ids)
    @rule(i=st.integers(0, 9), action=st.sampled_from(["submit", "admit_late", "reject", "admit_to_scoring"]))
    def secretariat_acts_on_bid(self, i, action):
        """The secretariat submits a (paper) bid, admits a late one, rejects one (Art. 15.3), or admits to
        scoring one that failed the gate."""
        bid, admin = self.bid(i), self.user(self.admin)
        self.step(f"{action}_bid", {
            "submit": lambda: bids.submit_bid(bid, actor=admin, now=self.now),
            "admit_late": lambda: bids.admit_late_bid(bid, reason="Posted in time; arrived late.", actor=admin,
                                                      now=self.now),
            "reject": lambda: bids.reject_bid(bid, reason="Art. 15.3: incomplete.", actor=admin, now=self.now),
            "admit_to_scoring": lambda: scoring.admit_bid(bid, "Admitted by the secretariat.", actor=admin,
                                                          now=self.now),
        }[action])

    def drafts(self) -> list[int]:
        return list(db.session.scalars(select(Bid.id).where(Bid.event_id == self.event_id,
                                                            Bid.status == BidStatus.DRAFT.value).order_by(Bid.id)))

    @precondition(lambda self: self.status in ("open", "closed") and self.fact("drafts", self.drafts))
    @rule(i=st.integers(0, 9))
    def late_bid(self, i):
        """Steering: a draft that missed the deadline (or the close of the call) is admitted late by the
        secretariat, with its reason, and submitted (by the secretariat for a paper bid, else by its bidder)."""
        bid_id = pick(self.drafts(), i)
        bid, admin = db.session.get(Bid, bid_id), self.user(self.admin)
        ok, _ = self.step("admit_late_bid", lambda: bids.admit_late_bid(
            bid, reason="Posted in time; arrived late.", actor=admin, now=self.now))
        bid = db.session.get(Bid, bid_id)
        if bid.late_admitted_reason:
            submitter = self.user(self.admin) if bid.entered_by_id else bid.owner
            self.step("submit_bid", lambda: bids.submit_bid(bid, actor=submitter, now=self.now))

    # ------------------------------------------------------------------------------------------ the call

    @rule(days=st.sampled_from([1, 4, 10]))
    def time_passes(self, days):
        self.now += timedelta(days=days)
        self._facts.clear()

    @rule(choice=st.integers(0, 9), any_action=st.booleans())
    def call_action(self, choice, any_action):
        """The secretariat moves the call on (one of the actions its page offers, or any action at all)."""
        offered = actions_from(EventStatus(self.status)) if not any_action else list(MANUAL_ACTIONS)
        action = pick(offered or list(MANUAL_ACTIONS), choice)
        self.step(f"call {action}", lambda: change_event_status(self.event(), action, actor=self.user(self.admin),
                                                                now=self.now))

    def ready_to_move_on(self) -> bool:
        """Enough is done at this stage for a careful secretariat to move the call on."""
        if self.status == "open":
            return db.session.scalar(select(func.count(Bid.id)).where(
                Bid.event_id == self.event_id, Bid.status == BidStatus.SUBMITTED.value)) >= 2
        if self.status == "scoring":
            return not any(self.outstanding(who) for who in range(3))
        return self.status in FORWARD

    @precondition(lambda self: self.status in FORWARD and self.fact("ready", self.ready_to_move_on))
    @rule()
    def call_moves_on(self):
        """Steering: the secretariat moves the call one step forward once enough is done."""
        action = FORWARD[self.status]
        self.step(f"call {action}", lambda: change_event_status(self.event(), action, actor=self.user(self.admin),
                                                                now=self.now))

    # ------------------------------------------------------------------------------------------ scoring

    @precondition(lambda self: self.status in ("closed", "scoring", "deliberation"))
    @rule(who=st.integers(0, 2), conflicted=st.sets(st.integers(0, 9), max_size=3))
    def declare(self, who, conflicted):
        """A member declares conflicts with any of the bids (even one not listed, or after scores were shown)."""
        member = self.user(self.wcoc[who])
        event = self.event()
        listed = bids_before_reviewers(event)
        named = [b for b in listed if any(pick(self.bid_ids, i) == b.id for i in conflicted)] if self.bid_ids else []
        self.step("declare_conflicts", lambda: scoring.declare_conflicts(
            event, member, has_conflict=bool(named), conflicted=named, reason="I advised this bidder.",
            listed=listed, actor=member, now=self.now))

    def listed(self) -> set[int]:
        """The ids of the bids before the reviewers (what `bids_before_reviewers` lists), read as columns."""
        return set(db.session.scalars(select(Bid.id).where(Bid.event_id == self.event_id,
                                                           Bid.status.in_(REVIEWED_STATUSES))))

    def declaration(self, member_id: int) -> tuple[set[int], set[int]] | None:
        """(the bids covered, the bids named as conflicts) of a member's declaration, or None, read as columns."""
        row = db.session.execute(select(ConflictDeclaration.id, ConflictDeclaration.has_conflict,
                                        ConflictDeclaration.covered_bid_ids).where(
            ConflictDeclaration.event_id == self.event_id, ConflictDeclaration.member_id == member_id)).first()
        if row is None:
            return None
        link = conflict_declaration_bid.c
        named = set(db.session.scalars(select(link.bid_id).where(link.declaration_id == row.id))) \
            if row.has_conflict else set()
        return set(json.loads(row.covered_bid_ids)), named

    def declaration_stale(self, who: int) -> bool:
        decl = self.declaration(self.wcoc[who])
        return decl is None or not self.listed() <= decl[0]

    @precondition(lambda self: self.status in ("closed", "scoring", "deliberation") and self.fact(
        "stale", lambda: any(self.declaration_stale(w) for w in range(3))))
    @rule(who=st.integers(0, 2), conflict=st.one_of(st.none(), st.integers(0, 9)))
    def declare_every_listed_bid(self, who, conflict):
        """Steering: a member (`who`, or the next one) whose declaration does not cover every listed bid declares
        for all of them, with no conflict or one (`conflict`); their old conflicts are kept (what a careful member
        does)."""
        who = next((w % 3 for w in range(who, who + 3) if self.declaration_stale(w % 3)), who)
        if not self.declaration_stale(who):
            return
        member, event = self.user(self.wcoc[who]), self.event()
        listed = bids_before_reviewers(event)
        decl = declaration_of(event, member)
        named = [b for b in listed if decl is not None and b.id in decl.conflicted_bid_ids]
        if conflict is not None and listed:
            named.append(pick(listed, conflict))
        named = list({b.id: b for b in named}.values())
        self.step("declare_conflicts", lambda: scoring.declare_conflicts(
            event, member, has_conflict=bool(named), conflicted=named,
            reason="I advised this bidder." if named else "", listed=listed, actor=member, now=self.now))

    @precondition(lambda self: self.locked_declarations and self.status in ("closed", "scoring", "deliberation"))
    @rule(who=st.integers(0, 2), i=st.integers(0, 9))
    def change_declaration_after_reading(self, who, i):
        """A member who was shown others' scores names, or withdraws, a conflict with a bid their declaration
        covered (issue 11: "the declaration can then be changed back"): refused, checked by the invariant."""
        member_id = pick(sorted(self.locked_declarations), who)
        member, event = self.user(member_id), self.event()
        listed = bids_before_reviewers(event)
        covered = [b for b in listed if b.id in self.locked_declarations[member_id]]
        if not covered:
            return
        flip = pick(covered, i)
        named = {b.id for b in covered if self.locked_declarations[member_id][b.id]} ^ {flip.id}
        conflicted = [b for b in listed if b.id in named]
        self.step("declare_conflicts (after scores shown)", lambda: scoring.declare_conflicts(
            event, member, has_conflict=bool(conflicted), conflicted=conflicted, reason="I remembered a conflict.",
            listed=listed, actor=member, now=self.now))

    @precondition(lambda self: self.status == "scoring")
    @precondition(lambda self: self.bid_ids)
    @rule(who=st.integers(0, 2), i=st.integers(0, 9), action=st.sampled_from(["save", "submit", "submit", "reopen"]),
          score=st.sampled_from(["1", "2.5", "4"]))
    def scorecard(self, who, i, action, score):
        """A WCOC member saves, submits or reopens their scorecard on any bid."""
        member, bid = self.user(self.wcoc[who]), self.bid(i)
        card = db.session.scalars(select(Scorecard).filter_by(bid_id=bid.id, member_id=member.id)).first()
        if action == "reopen" and card is None:
            return
        self.card_step(member, bid, card, action, score)

    def card_step(self, member, bid, card, action, score):
        keys = [c.key for c in self.reg.criteria]
        first_submit = action == "submit" and (card is None or not card.ever_submitted)
        key, name = (member.id, bid.id), member.name
        ok, _ = self.step(f"{action}_scorecard", lambda: scoring.reopen_scorecard(
            card, actor=member, now=self.now) if action == "reopen" else scoring.save_scorecard(
            bid, member, scores=dict.fromkeys(keys, Decimal(score)), comments=dict.fromkeys(keys, "Seen."),
            revision=card.revision if card else 0, submit=action == "submit", actor=member, now=self.now))
        if ok and first_submit and key in self.read_before_own:
            self.violations.append(f"member {name} submitted a first scorecard on bid {key[1]} after reading "
                                   f"the others' scores on it ({self.read_before_own[key]})")

    def outstanding(self, who: int) -> list[int]:
        """The bids the member may score (declaration current, not recused, in the contest, past the gate) and
        has never submitted a scorecard on, as the test sees them (`may_score`)."""
        if self.status != "scoring":
            return []
        member = self.user(self.wcoc[who])
        due, _ = self.due_bids(member)
        return [b for b in due if not ((c := self.own_card(b, member)) and c.ever_submitted)]

    def own_card(self, bid_id: int, member: User) -> Scorecard | None:
        return db.session.scalars(select(Scorecard).filter_by(bid_id=bid_id, member_id=member.id)).first()

    def due_bids(self, member: User) -> tuple[list[int], set[int]]:
        """The test's own account of independence: (the bids `member` is to score, the bids they are recused
        from), from the rows: a bid before the reviewers, still in the contest, whose last version is compliant
        or admitted, is due from every member who does not own it, is not of its host federation and did not
        declare a conflict with it."""
        decl = self.declaration(member.id)
        declared = decl[1] if decl else set()
        compliant = {}   # bid -> whether its last submitted version is compliant
        for bid_id, _, ok in db.session.execute(select(BidVersion.bid_id, BidVersion.number, BidVersion.compliant)
                                                .join(Bid, BidVersion.bid_id == Bid.id)
                                                .where(Bid.event_id == self.event_id).order_by(BidVersion.number)):
            compliant[bid_id] = ok
        due, recused = [], set()
        for bid_id, owner, host, status, admitted in db.session.execute(
                select(Bid.id, Bid.owner_id, Bid.host_federation, Bid.status, Bid.admitted_reason)
                .where(Bid.event_id == self.event_id, Bid.status.in_(REVIEWED_STATUSES)).order_by(Bid.id)):
            if owner == member.id or host == member.federation or bid_id in declared:
                recused.add(bid_id)
            elif BidStatus(status).in_contest and (compliant.get(bid_id) or admitted is not None):
                due.append(bid_id)
        return due, recused

    @precondition(lambda self: self.status == "scoring" and self.fact("due", lambda: any(
        self.outstanding(w) for w in range(3))))
    @rule(who=st.integers(0, 2), score=st.sampled_from(["1", "2.5", "3", "4", "5"]))
    def score_due(self, who, score):
        """Steering: a member (`who`, or the next one with a scorecard due) submits a scorecard on the first bid
        still due from them."""
        who = next((w % 3 for w in range(who, who + 3) if self.outstanding(w % 3)), who)
        outstanding = self.outstanding(who)
        if not outstanding:
            return
        member, bid = self.user(self.wcoc[who]), db.session.get(Bid, outstanding[0])
        self.card_step(member, bid, self.own_card(bid.id, member), "submit", score)

    @precondition(lambda self: self.status in ("closed", "scoring", "deliberation", "decided"))
    @rule(who=st.integers(0, 2))
    def read_scores(self, who):
        """A member opens the ranking (page and API), the CSV export and their scorecards, as those views gate
        them: nothing while `ranking_closed_to` says why; otherwise the first showing is recorded
        (`record_scores_shown`, which locks their declaration), then what `build_ranking(data, viewer)`, the CSV
        and `others_on` show them. The test checks it against its own account of independence."""
        member = self.user(self.wcoc[who])
        member_id, name = member.id, member.name
        data = load_scoring(self.event())
        if data.ranking_closed_to(member):
            db.session.remove()
            COVERAGE["read_scores: closed"] += 1
            return
        decl = data.scores_shown_first_time(member)
        if decl is not None:
            confirmed_at = decl.confirmed_at
            ok, _ = self.step("record_scores_shown", lambda: scoring.record_scores_shown(
                self.event(), self.user(member_id), declared_at=confirmed_at, now=self.now))
            if not ok:
                return
        member, event = self.user(member_id), self.event()
        shown, ranked_ids = _shown_to(load_scoring(event), member)
        COVERAGE["read_scores: shown others' scores" if shown else "read_scores: nothing to show"] += 1
        due, recused = self.due_bids(member)
        missing = [b for b in due if not ((c := self.own_card(b, member)) and c.ever_submitted)]
        own = self.declaration(member_id)
        first_shown = db.session.scalar(select(ConflictDeclaration.scores_first_shown_at).where(
            ConflictDeclaration.event_id == self.event_id, ConflictDeclaration.member_id == member_id))
        listed = self.listed()
        where = f"read_scores of member {name} with the call '{event.status}'"
        for bid_id in sorted(ranked_ids & recused):
            self.violations.append(f"{where}: the ranking shows bid {bid_id}, which they are recused from")
        for bid_id, other in sorted(shown):
            if bid_id in recused:
                self.violations.append(f"{where}: shown member {other}'s scores on bid {bid_id}, which they are "
                                       "recused from")
            if event.status in SCORING_OVER:
                # Once scoring is closed no score can change: the blind phase is over (recusals still hide bids).
                continue
            self.violations += _blind_phase_violations(where, bid_id, other, missing=missing, due=due, own=own,
                                                       listed=listed, first_shown=first_shown)
            own_card = self.own_card(bid_id, member)
            if own_card is None or not own_card.ever_submitted:
                self.read_before_own.setdefault((member_id, bid_id), where)
        if shown and own is not None and member_id not in self.locked_declarations:
            self.locked_declarations[member_id] = {b: b in own[1] for b in own[0]}
        db.session.remove()

    # ------------------------------------------------------------------------------------------ the board

    @precondition(lambda self: self.status in ("deliberation", "decided"))
    @rule(who=st.integers(0, 2), i=st.integers(0, 9), abstain=st.booleans())
    def cast_vote(self, who, i, abstain):
        """A board member (or the President) votes for any bid, or abstains."""
        member = self.user([*self.board, self.president][who])
        bid = None if abstain or not self.bid_ids else self.bid(i)
        self.step("cast_vote", lambda: board.cast_vote(self.event(), member, bid, now=self.now))

    def votes_undecided(self) -> bool:
        contest = [b.id for b in board_queries.bids_before_board(self.event())]
        counts = self.vote_counts(contest)
        top = max(counts.values(), default=0)
        return top == 0 or list(counts.values()).count(top) > 1

    @precondition(lambda self: self.status == "deliberation" and self.fact("undecided", self.votes_undecided))
    @rule(i=st.integers(0, 9))
    def board_agrees(self, i):
        """Steering: while the votes favour no bid, every board member and the President vote for the same bid
        before the Board (the member of its host federation is refused)."""
        contest = board_queries.bids_before_board(self.event())
        if not contest:
            return
        bid_id = pick(contest, i).id
        for uid in [*self.board, self.president]:
            member, bid = self.user(uid), db.session.get(Bid, bid_id)
            self.step("cast_vote", lambda member=member, bid=bid: board.cast_vote(self.event(), member, bid,
                                                                                  now=self.now))

    @precondition(lambda self: self.status == "decided" or (self.status == "deliberation" and self.packs_made))
    @precondition(lambda self: self.bid_ids)
    @rule(i=st.integers(0, 9), method=st.sampled_from(["board_vote", "president"]),
          by=st.sampled_from(["admin", "president"]), when=st.sampled_from(["today", "1999", "future"]),
          correct=st.one_of(st.none(), st.integers(0, 9)))
    def record_decision(self, i, method, by, when, correct):
        """Anyone of the secretariat or the President records any decision or correction, on any date."""
        actor = self.user(self.president if by == "president" else self.admin)
        selected = self.bid(i)
        decided_on = {"today": self.now.date(), "1999": date(1999, 1, 1),
                      "future": self.now.date() + timedelta(days=30)}[when]
        corrects = None
        if correct is not None and self.decision_ids:
            corrects = db.session.get(Decision, pick(self.decision_ids, correct))
        consultations = ([(self.user(self.wcoc[0]), "Lviv leads the ranking.", self.now.date())]
                         if method == "president" else [])
        self.decision_step("correct_decision" if corrects else "record_decision", lambda: board.record_decision(
            self.event(), method=method, selected=selected, rationale="The Board's reasons.",
            decided_on=decided_on, consultations=consultations, actor=actor, now=self.now,
            no_meeting_reason="The Board could not meet." if method == "president" else "",
            corrects=corrects, correction_reason="Mended." if corrects else ""))

    def decision_step(self, what: str, work) -> bool:
        """Record a decision (or correction) and, once it is committed, its minutes. When a correction selects
        another bid, the contracts with the old winner must refuse new payments (checked by the invariant; a
        payment on each is also tried here, as a secretary would)."""
        old_winner = self.winner()
        ok, _ = self.step(what, work)
        if not ok:
            return False
        decision_id = self.newest(Decision)
        self.decision_ids.append(decision_id)
        self.step("store_minutes", lambda: board.store_minutes(
            db.session.get(Decision, decision_id), actor=self.user(self.admin), now=self.now,
            upload_dir=self.upload_dir))
        winner = db.session.get(Decision, decision_id).selected_bid_id
        if old_winner is not None and winner != old_winner:
            COVERAGE["correction changing the winner"] += 1
            open_milestones = [(c.id, next(m.id for m in c.milestones if m.outstanding >= 1))
                               for c in db.session.scalars(select(Contract).where(Contract.bid_id == old_winner))
                               if any(m.outstanding >= 1 for m in c.milestones)]
            db.session.remove()
            for contract_id, mid in open_milestones:
                paid, _ = self.step("pay the old winner's contract", lambda mid=mid: contract_payments.record_payment(
                    db.session.get(Milestone, mid), amount=Decimal("1.00"), received_on=self.now.date(),
                    reference="SWIFT", note="", idempotency_key=f"old-{self.steps}",
                    actor=self.user(self.admin), now=self.now))
                if paid:
                    self.violations.append(f"{what}: decision {decision_id} selects bid {winner}, yet the old "
                                           f"winner's contract {contract_id} took a payment")
        db.session.remove()
        return True

    @precondition(lambda self: self.status == "deliberation")
    @rule(i=st.integers(0, 9), by_vote=st.booleans())
    def decide(self, i, by_vote):
        """Steering: the secretariat makes the board pack (ensure_pack, committed), then the decision is recorded:
        by board vote for the bid the votes favour (the test's own count; bid `i` when they favour none, to be
        refused), or by the President under Art. 15.5 for bid `i`. Once the Board has voted, the President may not
        decide alone (Art. 15.5: the Board met): the Board agrees on a bid first if its votes favour none, and decides
        by vote (the President's attempt after a vote is left to `record_decision`, which is refused)."""
        ok, _ = self.step("ensure_pack", lambda: board.ensure_pack(self.event(), actor=self.user(self.admin),
                                                                   now=self.now, upload_dir=self.upload_dir))
        self.packs_made += ok
        if db.session.scalar(select(Vote.id).where(Vote.event_id == self.event_id).limit(1)) is not None:
            by_vote = True
            if self.votes_undecided():
                self.board_agrees(i)
        contest = board_queries.bids_before_board(self.event())
        if not contest:
            return
        selected_id = pick(contest, i).id
        if by_vote:
            counts = self.vote_counts([b.id for b in contest])
            top = max(counts.values(), default=0)
            leaders = [b for b, n in counts.items() if n == top and n > 0]
            selected_id = leaders[0] if len(leaders) == 1 else selected_id
        self.decision_step("record_decision", lambda: board.record_decision(
            self.event(), method="board_vote" if by_vote else "president", selected=db.session.get(Bid, selected_id),
            rationale="The Board's reasons.", decided_on=self.now.date(),
            consultations=[] if by_vote else [(self.user(self.wcoc[0]), "The ranking is close.", self.now.date())],
            no_meeting_reason="" if by_vote else "The Board could not meet.",
            actor=self.user(self.admin if by_vote else self.president), now=self.now))

    @precondition(lambda self: self.status == "decided" and self.fact("in force", self.in_force) is not None)
    @rule(i=st.integers(0, 9), other=st.booleans())
    def correct(self, i, other):
        """Steering: once the winner has a contract in force, the President corrects the decision, selecting
        another decided bid (`other`) or the same one."""
        current = board_queries.current_decision(self.event())
        decided = [b.id for b in board_queries.bids_decided(self.event())]
        if current is None or not decided:
            return
        others = [b for b in decided if b != current.selected_bid_id]
        selected_id = pick(others, i) if other and others else current.selected_bid_id
        current_id = current.id
        self.decision_step("correct_decision", lambda: board.record_decision(
            self.event(), method="president", selected=db.session.get(Bid, selected_id),
            rationale="The Board's reasons.", decided_on=self.now.date(),
            consultations=[(self.user(self.wcoc[0]), "The guarantee of the winner lapsed.", self.now.date())],
            no_meeting_reason="The Board could not meet before the guarantee lapsed.", actor=self.user(self.president),
            now=self.now, corrects=db.session.get(Decision, current_id),
            correction_reason="The winner's guarantee lapsed."))

    def vote_counts(self, contest: list[int]) -> dict[int, int]:
        """The test's own count of the votes over `contest`: a member of a contesting bid's host federation is not
        counted."""
        hosts = {b.host_federation for b in db.session.scalars(select(Bid).where(Bid.id.in_(contest)))}
        counts = dict.fromkeys(contest, 0)
        for vote in db.session.scalars(select(Vote).where(Vote.event_id == self.event_id)):
            if vote.bid_id in counts and vote.member.federation not in hosts:
                counts[vote.bid_id] += 1
        return counts

    # ------------------------------------------------------------------------------------------ contracts

    @precondition(lambda self: self.status == "decided")
    @rule(i=st.integers(0, 9), issue=st.booleans())
    def contract_acts(self, i, issue):
        """The secretariat generates any bid's contract, or issues any contract (with the proposed due dates)."""
        admin = self.user(self.admin)
        if not issue:
            bid = self.bid(i)
            ok, _ = self.step("create_contract", lambda: contracts.create_contract(bid, actor=admin, now=self.now))
            if ok:
                self.contract_ids.append(self.newest(Contract))
        elif self.contract_ids:
            self.issue(pick(self.contract_ids, i))

    def issue(self, contract_id: int) -> None:
        contract, admin = db.session.get(Contract, contract_id), self.user(self.admin)
        self.step("issue_contract", lambda: contracts.issue_contract(
            contract, due_dates=proposed_dates(contract), actor=admin, now=self.now, upload_dir=self.upload_dir,
            render=fake_render))

    def winner(self) -> int | None:
        decision = board_queries.current_decision(self.event()) if self.event_id else None
        return decision.selected_bid_id if decision else None

    @precondition(lambda self: self.status == "decided")
    @rule()
    def contract_with_the_winner(self):
        """Steering: the secretariat makes the contract with the bid of the decision in force, or issues its
        draft."""
        winner, admin = self.winner(), self.user(self.admin)
        if winner is None:
            return
        draft = contract_queries.open_draft(winner)
        if draft is not None:
            self.issue(draft.id)
        elif contract_queries.in_force(winner) is None:
            bid = db.session.get(Bid, winner)
            ok, _ = self.step("create_contract", lambda: contracts.create_contract(bid, actor=admin, now=self.now))
            if ok:
                self.contract_ids.append(self.newest(Contract))
                self.issue(self.contract_ids[-1])
        db.session.remove()

    def in_force(self) -> Contract | None:
        winner = self.winner()
        return contract_queries.in_force(winner) if winner else None

    @precondition(lambda self: self.status == "decided" and self.fact("in force", self.in_force) is not None)
    @rule()
    def correct_the_contract(self):
        """Steering: the secretariat prepares a correction of the contract in force and issues it (the payments
        received are carried over)."""
        contract, admin = self.in_force(), self.user(self.admin)
        ok, _ = self.step("prepare_contract_correction", lambda: contracts.prepare_correction(
            contract, reason="The hotel changed.", actor=admin, now=self.now))
        if ok:
            self.contract_ids.append(self.newest(Contract))
            self.issue(self.contract_ids[-1])

    @precondition(lambda self: self.contract_ids)
    @rule(i=st.integers(0, 9), m=st.integers(0, 20), share=st.sampled_from(["0.5", "1", "1.5"]))
    def record_payment(self, i, m, share):
        """The secretariat records a payment on any milestone of any contract."""
        contract = db.session.get(Contract, pick(self.contract_ids, i))
        if contract.milestones:
            self.pay(pick(contract.milestones, m), share)

    def pay(self, milestone: Milestone, share: str) -> None:
        base = milestone.outstanding if milestone.outstanding > 0 else milestone.amount
        amount = max((base * Decimal(share)).quantize(Decimal("0.01")), Decimal("0.01"))
        ok, _ = self.step("record_payment", lambda: contract_payments.record_payment(
            milestone, amount=amount, received_on=self.now.date(), reference="SWIFT", note="",
            idempotency_key=f"pay-{self.steps}", actor=self.user(self.admin), now=self.now))
        if ok:
            self.payment_ids.append(self.newest(Payment))

    @precondition(lambda self: self.status == "decided" and self.fact("in force", self.in_force) is not None)
    @rule(m=st.integers(0, 20), shares=st.lists(st.sampled_from(["0.5", "1", "1", "1.5"]), min_size=1, max_size=3))
    def pay_the_winner(self, m, shares):
        """Steering: the payments of a bank statement on milestones of the contract in force (each part, all, or
        more than is outstanding)."""
        for n, share in enumerate(shares):
            contract = self.in_force()
            if contract is None or not contract.milestones:
                return
            self.pay(pick(contract.milestones, m + n), share)

    def live_payments(self) -> list[int]:
        """Payments not reversed on a contract that takes reversals (in force, or closed by a correction)."""
        return list(db.session.scalars(select(Payment.id).join(Milestone, Payment.milestone_id == Milestone.id)
                                       .join(Contract, Milestone.contract_id == Contract.id).where(
            Payment.kind != "reversal", ~Payment.reversed_by.has(),
            Contract.status.in_(["issued", "signed", "closed"])).order_by(Payment.id)))

    @precondition(lambda self: self.status == "decided" and self.fact("live payments", self.live_payments))
    @rule(i=st.integers(0, 9))
    def refund(self, i):
        """Steering: the secretariat reverses a payment that stands (on the contract in force, or a refund on a
        contract closed by a correction)."""
        self.reverse_payment_id(pick(self.live_payments(), i))

    @precondition(lambda self: self.payment_ids)
    @rule(i=st.integers(0, 9))
    def reverse_payment(self, i):
        """The secretariat reverses any payment (refused twice, refused on a superseded version; a refund on a
        contract closed by a correction)."""
        self.reverse_payment_id(pick(self.payment_ids, i))

    def reverse_payment_id(self, payment_id: int) -> None:
        payment = db.session.get(Payment, payment_id)
        closed = payment.milestone.contract.status == "closed"
        ok, _ = self.step("reverse_payment", lambda: contract_payments.reverse_payment(
            payment, reason="Entered twice.", idempotency_key=f"rev-{self.steps}", actor=self.user(self.admin),
            now=self.now))
        if ok and closed:
            COVERAGE["reverse_payment on a closed contract (refund)"] += 1

    # ------------------------------------------------------------------------------------------ invariants

    def live_decisions(self) -> list[Decision]:
        decisions = db.session.scalars(select(Decision).where(Decision.event_id == self.event_id)).all()
        corrected = {d.corrects_id for d in decisions if d.corrects_id}
        return [d for d in decisions if d.id not in corrected]

    @invariant()
    def the_flow_holds(self):
        """Every invariant after every step (one line per step in a failing example)."""
        self.no_violation_recorded()
        self.at_most_one_decision_in_force()
        self.selected_bid_is_the_decisions()
        self.board_vote_decision_won_the_vote()
        self.only_the_decisions_contract_accepts_payments()
        self.payments_never_exceed_a_milestone()
        self.declarations_locked_once_scores_shown()
        self.no_stake_in_scores_or_votes()
        self.audit_chain_verifies()
        self.evidence_verifies()
        self.note_how_far()

    def no_violation_recorded(self):
        assert not self.violations, "\n".join(self.violations)

    def at_most_one_decision_in_force(self):
        live = self.live_decisions()
        db.session.remove()
        assert len(live) <= 1, f"{len(live)} decisions in force: {[d.id for d in live]}"

    def selected_bid_is_the_decisions(self):
        if self.event_id is None:
            return
        decision = board_queries.current_decision(self.event())
        statuses = dict(db.session.execute(select(Bid.id, Bid.status).where(Bid.event_id == self.event_id)).all())
        selected = sorted(b for b, s in statuses.items() if s == BidStatus.SELECTED.value)
        decided = sorted(b for b, s in statuses.items()
                         if s in (BidStatus.SELECTED.value, BidStatus.NOT_SELECTED.value))
        expected = [decision.selected_bid_id] if decision else []
        db.session.remove()
        assert selected == expected, f"bids selected: {selected}; the decision in force selects {expected}"
        assert decision or not decided, f"bids {decided} decided on with no decision in force"

    def board_vote_decision_won_the_vote(self):
        decision = board_queries.current_decision(self.event()) if self.event_id else None
        if decision is None or decision.method != "board_vote":
            db.session.remove()
            return
        contest = list(db.session.scalars(select(Bid.id).where(Bid.event_id == self.event_id, Bid.status.in_(
            [BidStatus.SELECTED.value, BidStatus.NOT_SELECTED.value]))))
        counts = self.vote_counts(contest)
        top = max(counts.values(), default=0)
        chosen = decision.selected_bid_id
        db.session.remove()
        assert top > 0 and counts.get(chosen) == top and list(counts.values()).count(top) == 1, (
            f"decision {decision.id} 'by board vote' selects bid {chosen}; the votes of members not recused "
            f"were {counts}")

    def only_the_decisions_contract_accepts_payments(self):
        if self.event_id is None:
            return
        decision = board_queries.current_decision(self.event())
        winner = decision.selected_bid_id if decision else None
        accepting = []
        for contract in db.session.scalars(select(Contract)):
            if contract.bid_id == winner:
                continue
            for milestone in contract.milestones:
                if milestone.outstanding <= 0:
                    continue
                probe = db.session.begin_nested()
                try:
                    contract_payments.record_payment(milestone, amount=Decimal("0.01"), received_on=self.now.date(),
                                                     reference="probe", note="", idempotency_key="probe",
                                                     actor=self.user(self.admin), now=self.now)
                    accepting.append(f"{contract.reference} (bid {contract.bid_id}, {contract.status})")
                except REFUSALS:
                    pass
                finally:
                    probe.rollback()
                break
        db.session.rollback()
        db.session.remove()
        assert not accepting, f"contracts accepting payments though not the decision in force's (bid {winner}): " \
                              f"{accepting}"

    def payments_never_exceed_a_milestone(self):
        over = []
        for milestone in db.session.scalars(select(Milestone)):
            paid = sum((p.amount for p in milestone.payments), Decimal("0.00"))
            if paid > milestone.amount or paid < 0:
                over.append(f"{milestone.key} of contract {milestone.contract_id}: {paid} paid of {milestone.amount}")
        db.session.remove()
        assert not over, over

    def declarations_locked_once_scores_shown(self):
        """Once a member was shown others' scores, no conflict on a bid their declaration then covered (and still
        listed) was added or withdrawn."""
        if not self.locked_declarations:
            return
        listed = self.listed()
        changed = []
        for member_id, before in self.locked_declarations.items():
            now = self.declaration(member_id)[1]
            changed += [f"member {member_id}, bid {b}: {was} -> {not was}" for b, was in sorted(before.items())
                        if b in listed and (b in now) != was]
        db.session.remove()
        assert not changed, f"declarations changed after scores were shown: {changed}"

    def no_stake_in_scores_or_votes(self):
        """Whoever owns or entered a bid of the call has no submitted scorecard and no vote in it."""
        if self.event_id is None:
            return
        staked = set(db.session.scalars(select(Bid.owner_id).where(Bid.event_id == self.event_id)))
        staked |= set(db.session.scalars(select(Bid.entered_by_id).where(Bid.event_id == self.event_id,
                                                                          Bid.entered_by_id.is_not(None))))
        scorers = set(db.session.scalars(select(Scorecard.member_id).where(Scorecard.version >= 1)))
        voters = set(db.session.scalars(select(Vote.member_id).where(Vote.event_id == self.event_id)))
        db.session.remove()
        assert not staked & (scorers | voters), f"users {sorted(staked & (scorers | voters))} score or vote " \
                                                "in a call where they own or entered a bid"

    def audit_chain_verifies(self):
        """The keyed chain verifies, and still reaches the head it had after the step before (nothing deleted)."""
        report = verify_chain(expect=self.head)
        db.session.remove()
        assert report.ok, report.reason
        self.head = report.head

    def evidence_verifies(self):
        """Every evidence row and stored file is as the audit entry that last wrote it recorded (the digests), and
        none was written without one."""
        report = verify_evidence(self.upload_dir)
        db.session.remove()
        assert report.ok and not report.unbound, "\n".join(report.problems + report.unbound)

    def note_how_far(self):
        """Which stages of the flow this example's call has reached (REACHED, asserted by the test)."""
        if self.event_id is None:
            return
        reached = REACHED[self.stage]
        for stage, query in REACH_QUERIES.items():
            if stage not in reached and db.session.scalar(query(self.event_id).limit(1)) is not None:
                reached.add(stage)
        db.session.remove()


@pytest.fixture(scope="module", autouse=True)
def _print_coverage():
    COVERAGE.clear()
    yield
    print("\nstateful flow: what the steps did across the run (pytest -s shows this)")
    for stage, reached in REACHED.items():
        print(f"  from '{stage}': reached {sorted(reached)}")
    for what, n in sorted(COVERAGE.items()):
        print(f"  {n:5d}  {what}")


@pytest.mark.parametrize("stage", STAGES)
def test_the_whole_flow_keeps_its_invariants(app, monkeypatch, stage):
    """From each stage of the flow, random steps keep every invariant (see FlowMachine), and the fixed budget gets
    as far into the flow as it did when the budget was set (a stage that stops being reached fails this)."""
    monkeypatch.setattr(evidence.pdf, "html_to_pdf", fast_pdf)
    machine = type(f"FlowFrom{stage.title()}", (FlowMachine,), {"app": app, "stage": stage})
    examples, steps = BUDGET[stage]
    REACHED[stage] = set()
    run_state_machine_as_test(machine, settings=settings(SETTINGS, max_examples=examples,
                                                         stateful_step_count=steps))
    missing = [s for s in MUST_REACH[stage] if s not in REACHED[stage]]
    assert not missing, f"from the '{stage}' stage, no run reached {missing} (reached: {sorted(REACHED[stage])})"
