"""The whole flow of one call as a hypothesis state machine (issue 11, "Done means").

Random sequences of SERVICE calls (bids, events, scoring, board, contracts: never the views) by random actors
(bidders, the secretariat, WCOC members of several federations, board members, the President) drive the 2015
call from its file: drafts, paper bids, submissions, withdrawals, reopenings, late admission, the deadline
passing (a simulated clock), the call's transitions, declarations, scorecards, reading the scores, votes,
decisions, corrections, contracts, payments and reversals. A refusal (the domain's exception) is an answer;
anything else (IntegrityError, AttributeError, ...) fails the test. After every step the invariants of the
flow are checked (see the `@invariant` methods).

Each step is a request: the service runs, then the session commits (or rolls back on a refusal) and is
removed, so nothing is held across steps. Each example runs inside a savepoint of the test's rolled-back
transaction (tests/conftest.py `_rollback`), rolled back when the example ends.

Rule bodies are one service call each, so a changed signature is a one-line edit here.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
from datetime import date, timedelta
from decimal import Decimal

import hypothesis.strategies as st
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

import core.pdf
from accounts.models import User
from accounts.services import AccountError, create_user
from bids import services as bids
from bids.models import Bid, BidVersion
from bids.rules import BidStatus
from bids.rules import TransitionError as BidTransitionError
from board import services as board
from board.models import Decision, Vote
from board.rules import DecisionError
from contracts import services as contracts
from contracts.models import Contract, Milestone, Payment
from contracts.rules import ContractRuleError
from core.audit import AuditEntry, verify_chain
from core.db import db
from core.lifecycle import LifecycleError
from events.models import Event
from events.regulation import default_event_file, load_regulation_file
from events.rules import MANUAL_ACTIONS, EventStatus, actions_from
from events.rules import TransitionError as EventTransitionError
from events.services import change_event_status, load_event
from scoring import services as scoring
from scoring.models import ConflictDeclaration, Scorecard
from scoring.queries import bids_before_reviewers, build_ranking, load_scoring, recusal_for, scores_csv
from scoring.rules import ScoringRuleError
from tests.bids.factories import valid_bid
from tests.contracts.factories_contracts import proposed_dates

# The domain's refusals: an answer to the person who asked, never a failure of the test.
REFUSALS = (bids.BidError, BidTransitionError, scoring.ScoringError, ScoringRuleError, DecisionError,
            contracts.ContractError, ContractRuleError, EventTransitionError, LifecycleError, AccountError)

# Budget: a fixed number of examples and steps, under a minute on SQLite; the same sequences on PostgreSQL
# (derandomized: CI sees the same examples every run, and a failure is reproducible). Shrinking a failure to the
# shortest sequence can take minutes, so it is on only when asked: GAMBIT_STATEFUL_SHRINK=1 pytest <this file>.
PHASES = tuple(Phase) if os.environ.get("GAMBIT_STATEFUL_SHRINK") == "1" else (
    Phase.explicit, Phase.reuse, Phase.generate)
SETTINGS = settings(max_examples=20, stateful_step_count=60, deadline=None, derandomize=True, phases=PHASES,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

PASSWORD = "correct horse battery staple"
FORWARD = {"open": "close", "closed": "open_scoring", "scoring": "close_scoring"}
PDF_HEADER = b"%PDF-1.4\n"


def fast_pdf(html: str, *, timeout: float | None = None) -> bytes:
    """A one-page PDF standing in for WeasyPrint (the templates are still rendered; the PDF is not what this
    test is about, and WeasyPrint takes seconds per dossier)."""
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=595, height=842)
    writer.add_metadata({"/Subject": hashlib.sha256(html.encode()).hexdigest()})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def pick(ids: list, i: int):
    return ids[i % len(ids)]


class FlowMachine(RuleBasedStateMachine):
    app = None  # set by the test

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
        self.violations: list[str] = []
        self.steps = 0
        self.cards_submitted = 0

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

    def fingerprint(self) -> dict:
        """The state of every lifecycle row (not revisions or timestamps): what a change must be audited for."""
        s = db.session
        rows = {("event", e.id): e.status for e in s.scalars(select(Event))}
        rows |= {("bid", b.id): (b.status, b.version, b.admitted_reason, b.entered_by_id)
                 for b in s.scalars(select(Bid))}
        rows |= {("version", v.id): v.number for v in s.scalars(select(BidVersion))}
        rows |= {("decl", d.id): (d.has_conflict, d.covered_bid_ids, tuple(sorted(d.conflicted_bid_ids)))
                 for d in s.scalars(select(ConflictDeclaration))}
        rows |= {("card", c.id): (c.status, c.version) for c in s.scalars(select(Scorecard))}
        rows |= {("vote", v.id): v.bid_id for v in s.scalars(select(Vote))}
        rows |= {("decision", d.id): d.selected_bid_id for d in s.scalars(select(Decision))}
        rows |= {("contract", c.id): c.status for c in s.scalars(select(Contract))}
        rows |= {("milestone", m.id): m.amount for m in s.scalars(select(Milestone))}
        rows |= {("payment", p.id): p.amount for p in s.scalars(select(Payment))}
        return rows

    def audit_count(self) -> int:
        return db.session.scalar(select(func.count(AuditEntry.id)))

    def step(self, what: str, work):
        """Run one service call as a request: commit on success, roll back on a refusal. Checks that a refusal
        changed nothing and wrote nothing, and that a change was audited. Returns (ok, result)."""
        self.steps += 1
        before_audit, before = self.audit_count(), self.fingerprint()
        status_before = self.event().status
        db.session.commit()
        try:
            result = work()
            db.session.commit()
            ok = True
        except REFUSALS:
            db.session.rollback()
            ok, result = False, None
        db.session.remove()
        statistic(f"{what}: {'done' if ok else 'refused'}")
        after_audit, after = self.audit_count(), self.fingerprint()
        self.status = self.event().status
        if ok:
            changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
            assert not changed or after_audit > before_audit, (
                f"{what}: changed {sorted(changed)} without writing the audit log")
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
                AuditEntry.action.contains("late")))
            if v.submitted_at > self.deadline and not late:
                self.violations.append(f"{what}: bid {v.bid_id} version {v.number} submitted at "
                                       f"{v.submitted_at:%Y-%m-%d}, after the deadline, with no audited late admission")
            if status_before not in (EventStatus.OPEN.value, EventStatus.CLOSED.value):
                self.violations.append(f"{what}: bid {v.bid_id} version {v.number} submitted into a call that "
                                       f"was '{status_before}'")

    # ------------------------------------------------------------------------------------------ the cast

    def person(self, role: str, name: str, *, federation=None, is_president=False) -> int:
        roles = {"board+": ["board"]}.get(role, [role])
        user = create_user(email=f"{name.lower()}@example.org", password=PASSWORD, name=name, roles=roles,
                           actor=None, now=self.now, federation=federation, is_president=is_president,
                           applicant_type="federation" if role == "bidder" else None,
                           organisation=f"Federation {federation}" if role == "bidder" else "")
        db.session.flush()
        return user.id

    @initialize()
    def the_call_and_its_people(self):
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
        db.session.remove()
        # Three complete bids to start from: two typed in and submitted by their bidders, one paper bid keyed in
        # by the secretariat and left a draft; so that the budget of steps reaches the board and the contract.
        for who, paper in ((0, False), (1, False), (2, True)):
            self.create_bid(who, paper)
            self.fill_bid(who, compliant=True, by_admin=paper)
            if not paper:
                self.bidder_acts(who, "submit", "owner")

    # ------------------------------------------------------------------------------------------ bids

    @precondition(lambda self: len(self.bid_ids) < 4)
    @rule(who=st.integers(0, 2), paper=st.booleans())
    def create_bid(self, who, paper):
        """A draft, or a paper bid keyed in by the secretariat on the bidder's behalf."""
        owner, admin = self.user(self.bidders[who]), self.user(self.admin)
        ok, bid = self.step("create_bid", lambda: bids.create_bid(
            self.event(), owner=owner, actor=admin if paper else owner, now=self.now,
            entered_by=admin if paper else None))
        if ok:
            self.bid_ids.append(db.session.scalars(select(Bid.id).order_by(Bid.id.desc())).first())

    @precondition(lambda self: self.bid_ids and self.status == EventStatus.OPEN.value)
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
                bids.store_document(b, kind, filename=f"{kind}.pdf", content=PDF_HEADER + kind.encode(),
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
        """The secretariat submits a (paper) bid, admits a late one (issue 11: bids.services.admit_late_bid,
        once it exists), rejects one (Art. 15.3), or admits to scoring one that failed the gate."""
        bid, admin = self.bid(i), self.user(self.admin)
        admit_late = getattr(bids, "admit_late_bid", None)
        if action == "admit_late" and admit_late is None:
            return
        self.step(f"{action}_bid", {
            "submit": lambda: bids.submit_bid(bid, actor=admin, now=self.now),
            "admit_late": lambda: admit_late(bid, reason="Posted in time; arrived late.", actor=admin, now=self.now),
            "reject": lambda: bids.reject_bid(bid, reason="Art. 15.3: incomplete.", actor=admin, now=self.now),
            "admit_to_scoring": lambda: scoring.admit_bid(bid, "Admitted by the secretariat.", actor=admin,
                                                          now=self.now),
        }[action])

    @rule(days=st.sampled_from([1, 4, 10]))
    def time_passes(self, days):
        self.now += timedelta(days=days)

    @rule(choice=st.integers(0, 9), any_action=st.booleans())
    def call_action(self, choice, any_action):
        """The secretariat moves the call on (one of the actions its page offers, or any action at all)."""
        offered = actions_from(EventStatus(self.status)) if not any_action else list(MANUAL_ACTIONS)
        action = pick(offered or list(MANUAL_ACTIONS), choice)
        self.step(f"call {action}", lambda: change_event_status(self.event(), action, actor=self.user(self.admin),
                                                                now=self.now))

    @precondition(lambda self: self.status in FORWARD and (self.status != "scoring" or self.cards_submitted >= 3))
    @rule()
    def call_moves_on(self):
        """The secretariat moves the call one step forward (so that the budget reaches the end of the flow)."""
        action = FORWARD[self.status]
        self.step(f"call {action}", lambda: change_event_status(self.event(), action, actor=self.user(self.admin),
                                                                now=self.now))

    # ------------------------------------------------------------------------------------------ scoring

    @precondition(lambda self: self.status in ("closed", "scoring", "deliberation"))
    @rule(who=st.integers(0, 2), conflicted=st.sets(st.integers(0, 9), max_size=3))
    def declare(self, who, conflicted):
        member = self.user(self.wcoc[who])
        event = self.event()
        listed = bids_before_reviewers(event)
        named = [b for b in listed if any(pick(self.bid_ids, i) == b.id for i in conflicted)] if self.bid_ids else []
        self.step("declare_conflicts", lambda: scoring.declare_conflicts(
            event, member, has_conflict=bool(named), conflicted=named, reason="I advised this bidder.",
            listed=listed, actor=member, now=self.now))

    @precondition(lambda self: self.status == "scoring")
    @precondition(lambda self: self.bid_ids)
    @rule(who=st.integers(0, 2), i=st.integers(0, 9), action=st.sampled_from(["save", "submit", "submit", "reopen"]),
          score=st.sampled_from(["1", "2.5", "4"]))
    def scorecard(self, who, i, action, score):
        """A WCOC member saves, submits or reopens their scorecard on a bid."""
        member, bid = self.user(self.wcoc[who]), self.bid(i)
        keys = [c.key for c in self.reg.criteria]
        card = db.session.scalars(select(Scorecard).filter_by(bid_id=bid.id, member_id=member.id)).first()
        if action == "reopen" and card is None:
            return
        first_submit = action == "submit" and (card is None or not card.ever_submitted)
        key, name = (member.id, bid.id), member.name
        ok, _ = self.step(f"{action}_scorecard", lambda: scoring.reopen_scorecard(
            card, actor=member, now=self.now) if action == "reopen" else scoring.save_scorecard(
            bid, member, scores=dict.fromkeys(keys, Decimal(score)), comments=dict.fromkeys(keys, "Seen."),
            revision=card.revision if card else 0, submit=action == "submit", actor=member, now=self.now))
        self.cards_submitted += ok and action == "submit"
        if ok and first_submit and key in self.read_before_own:
            self.violations.append(f"member {name} submitted a first scorecard on bid {key[1]} after reading "
                                   f"the others' scores on it ({self.read_before_own[key]})")

    @precondition(lambda self: self.status in ("scoring", "deliberation"))
    @rule(who=st.integers(0, 2))
    def read_scores(self, who):
        """What the member's scoring pages, the ranking API and the CSV show them, as those views gate it."""
        member = self.user(self.wcoc[who])
        event = self.event()
        if event.state is EventStatus.DECIDED:
            return
        data = load_scoring(event)
        shown: set[tuple[int, int]] = set()   # (bid, other member)
        for bid in data.ranked:
            shown |= {(bid.id, other.id) for other, _, _ in data.others_on(bid, member)}
        if data.ranking_closed_to(member) is None:
            report = build_ranking(data)
            shown |= {(bid_id, m) for bid_id, by in report.counted.items() for m in by}
            by_name = {u.name: u.id for u in data.members.values()}
            for row in list(csv.DictReader(io.StringIO(scores_csv(data, member)))):
                shown.add((int(row["bid_id"]), by_name[row["member"]]))
        for bid_id, other in shown:
            if other == member.id:
                continue
            own = data.cards.get((bid_id, member.id))
            if own is None or not own.ever_submitted:
                where = f"read_scores of member {member.name} on bid {bid_id} with the call '{event.status}'"
                self.read_before_own.setdefault((member.id, bid_id), where)
                if event.state in (EventStatus.SCORING, EventStatus.CLOSED, EventStatus.OPEN):
                    recused = recusal_for(db.session.get(Bid, bid_id), member)
                    self.violations.append(f"{where}: shown member {other}'s scores without a submitted scorecard "
                                           f"of their own on it (recused: {recused})")
        db.session.remove()

    # ------------------------------------------------------------------------------------------ the board

    @precondition(lambda self: self.status in ("scoring", "deliberation", "decided"))
    @rule(who=st.integers(0, 2), i=st.integers(0, 9), abstain=st.booleans())
    def cast_vote(self, who, i, abstain):
        member = self.user([*self.board, self.president][who])
        bid = None if abstain or not self.bid_ids else self.bid(i)
        self.step("cast_vote", lambda: board.cast_vote(self.event(), member, bid, now=self.now))

    @precondition(lambda self: self.status in ("deliberation", "decided"))
    @precondition(lambda self: self.bid_ids)
    @rule(i=st.integers(0, 9), method=st.sampled_from(["board_vote", "president"]),
          by=st.sampled_from(["admin", "president"]), when=st.sampled_from(["today", "1999", "future"]),
          correct=st.one_of(st.none(), st.integers(0, 9)))
    def record_decision(self, i, method, by, when, correct):
        actor = self.user(self.president if by == "president" else self.admin)
        selected = self.bid(i)
        decided_on = {"today": self.now.date(), "1999": date(1999, 1, 1),
                      "future": self.now.date() + timedelta(days=30)}[when]
        corrects = None
        if correct is not None and self.decision_ids:
            corrects = db.session.get(Decision, pick(self.decision_ids, correct))
        consultations = [(self.user(self.wcoc[0]), "Lviv leads the ranking.")] if method == "president" else []
        ok, decision = self.step("record_decision", lambda: board.record_decision(
            self.event(), method=method, selected=selected, rationale="The Board's reasons.",
            decided_on=decided_on, consultations=consultations, actor=actor, now=self.now,
            upload_dir=self.upload_dir, corrects=corrects, correction_reason="Mended." if corrects else ""))
        if ok:
            self.decision_ids.append(db.session.scalars(select(Decision.id).order_by(Decision.id.desc())).first())

    # ------------------------------------------------------------------------------------------ contracts

    @precondition(lambda self: self.status == "decided")
    @rule(i=st.integers(0, 9), issue=st.booleans())
    def contract_acts(self, i, issue):
        """The secretariat generates a bid's contract, or issues a draft one (with the proposed due dates)."""
        admin = self.user(self.admin)
        if not issue:
            bid = self.bid(i)
            ok, _ = self.step("create_contract", lambda: contracts.create_contract(bid, actor=admin, now=self.now))
            if ok:
                self.contract_ids.append(db.session.scalars(select(Contract.id).order_by(Contract.id.desc())).first())
        elif self.contract_ids:
            contract = db.session.get(Contract, pick(self.contract_ids, i))
            self.step("issue_contract", lambda: contracts.issue_contract(
                contract, due_dates=proposed_dates(contract), actor=admin, now=self.now, upload_dir=self.upload_dir))

    @precondition(lambda self: self.contract_ids)
    @rule(i=st.integers(0, 9), m=st.integers(0, 20), share=st.sampled_from(["0.5", "1", "1.5"]))
    def record_payment(self, i, m, share):
        contract = db.session.get(Contract, pick(self.contract_ids, i))
        if not contract.milestones:
            return
        milestone = pick(contract.milestones, m)
        amount = (milestone.amount * Decimal(share)).quantize(Decimal("0.01"))
        ok, _ = self.step("record_payment", lambda: contracts.record_payment(
            milestone, amount=amount, received_on=self.now.date(), reference="SWIFT", note="",
            idempotency_key=f"pay-{self.steps}", actor=self.user(self.admin), now=self.now))
        if ok:
            self.payment_ids.append(db.session.scalars(select(Payment.id).order_by(Payment.id.desc())).first())

    @precondition(lambda self: self.payment_ids)
    @rule(i=st.integers(0, 9))
    def reverse_payment(self, i):
        payment = db.session.get(Payment, pick(self.payment_ids, i))
        self.step("reverse_payment", lambda: contracts.reverse_payment(
            payment, reason="Entered twice.", idempotency_key=f"rev-{self.steps}", actor=self.user(self.admin),
            now=self.now))

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
        self.audit_chain_verifies()

    def no_violation_recorded(self):
        assert not self.violations, "\n".join(self.violations)

    def at_most_one_decision_in_force(self):
        live = self.live_decisions()
        db.session.remove()
        assert len(live) <= 1, f"{len(live)} decisions in force: {[d.id for d in live]}"

    def selected_bid_is_the_decisions(self):
        if self.event_id is None:
            return
        decision = board.current_decision(self.event())
        statuses = {b.id: b.status for b in db.session.scalars(select(Bid).where(Bid.event_id == self.event_id))}
        selected = sorted(b for b, s in statuses.items() if s == BidStatus.SELECTED.value)
        decided = sorted(b for b, s in statuses.items()
                         if s in (BidStatus.SELECTED.value, BidStatus.NOT_SELECTED.value))
        expected = [decision.selected_bid_id] if decision else []
        db.session.remove()
        assert selected == expected, f"bids selected: {selected}; the decision in force selects {expected}"
        assert decision or not decided, f"bids {decided} decided on with no decision in force"

    def board_vote_decision_won_the_vote(self):
        decision = board.current_decision(self.event()) if self.event_id else None
        if decision is None or decision.method != "board_vote":
            db.session.remove()
            return
        contest = db.session.scalars(select(Bid).where(Bid.event_id == self.event_id, Bid.status.in_(
            [BidStatus.SELECTED.value, BidStatus.NOT_SELECTED.value]))).all()
        hosts = {b.host_federation for b in contest}
        counts = dict.fromkeys((b.id for b in contest), 0)
        for vote in db.session.scalars(select(Vote).where(Vote.event_id == self.event_id)):
            if vote.bid_id in counts and vote.member.federation not in hosts:
                counts[vote.bid_id] += 1
        top = max(counts.values(), default=0)
        chosen = decision.selected_bid_id
        db.session.remove()
        assert top > 0 and counts.get(chosen) == top, (
            f"decision {decision.id} 'by board vote' selects bid {chosen}; the votes of members not recused "
            f"were {counts}")

    def only_the_decisions_contract_accepts_payments(self):
        if self.event_id is None:
            return
        decision = board.current_decision(self.event())
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
                    contracts.record_payment(milestone, amount=Decimal("0.01"), received_on=self.now.date(),
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

    def audit_chain_verifies(self):
        report = verify_chain()
        db.session.remove()
        assert report.ok, report.reason


def test_the_whole_flow_keeps_its_invariants(app, monkeypatch):
    monkeypatch.setattr(core.pdf, "html_to_pdf", fast_pdf)
    FlowMachine.app = app
    run_state_machine_as_test(FlowMachine, settings=SETTINGS)

