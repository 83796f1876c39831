"""The scoring services: scorecards and their versions, the optimistic lock, conflicts, admission and weights."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from sqlalchemy import select, text, update

from accounts.models import User
from bids.models import Bid
from core.db import db
from events.models import Event
from evidence.audit import AuditEntry
from scoring import services
from scoring.models import ConflictDeclaration, Scorecard, ScorecardVersion, WeightsVersion
from scoring.queries import build_ranking, load_scoring
from tests.scoring.factories_scoring import SCORING_DAY

KEYS = "abcdefghij"


def _all(value: str) -> dict[str, Decimal]:
    return {k: Decimal(value) for k in KEYS}


@pytest.fixture
def scene(sf, event):
    """Two compliant bids (UKR, RUS), two WCOC members (GER, FRA) who declared no conflict; the call in scoring."""
    a = sf.bid(event, city="Lviv", host="UKR")
    b = sf.bid(event, city="Sochi", host="RUS")
    m1 = sf.member(federation="GER", name="Anna")
    m2 = sf.member(federation="FRA", name="Bruno")
    sf.status(event, "scoring")
    sf.declare(event, m1)
    sf.declare(event, m2)
    return {"event": event, "a": a, "b": b, "m1": m1, "m2": m2}


def _save(bid_id, member_id, scores, comments=None, *, submit=False, revision=None):
    bid = db.session.get(Bid, bid_id)
    member = db.session.get(User, member_id)
    if revision is None:
        card = db.session.scalars(select(Scorecard).filter_by(bid_id=bid_id, member_id=member_id)).first()
        revision = card.revision if card else 0
    return services.save_scorecard(bid, member, scores=scores, comments=comments or {}, revision=revision,
                                   submit=submit, actor=member, now=SCORING_DAY)


def _ranking(event_id):
    return build_ranking(load_scoring(db.session.get(Event, event_id)))


# ------------------------------------------------------------------------------------ scorecard checks


@pytest.mark.parametrize("score, anchor", [("0", "Unacceptable"), ("1", "Poor"), ("5", "Excellent")])
def test_submitting_a_score_of_0_1_or_5_without_a_comment_is_refused_with_the_article(app, scene, score, anchor):
    with app.app_context():
        scores = {**_all("3"), "c": Decimal(score)}
        with pytest.raises(services.ScorecardProblems) as exc:
            _save(scene["a"], scene["m1"], scores, submit=True)
        assert exc.value.problems == {"c": f"Bidding procedure: evaluation method (criterion 15.5(c)): a score of {score} ({anchor}) needs a comment saying why."}  # noqa: E501


def test_a_draft_saves_without_comments_and_without_every_score(app, scene):
    with app.app_context():
        card = _save(scene["a"], scene["m1"], {"a": Decimal("5"), "b": None})
        db.session.commit()
        assert card.state.value == "draft" and card.version == 0 and card.versions == []
        assert card.score_map()["a"] == Decimal("5") and card.score_map()["b"] is None


def test_a_score_off_the_scale_is_refused_even_in_a_draft(app, scene):
    with app.app_context():
        with pytest.raises(services.ScorecardProblems) as exc:
            _save(scene["a"], scene["m1"], {"a": Decimal("3.3")})
        assert exc.value.problems == {"a": "Bidding procedure: evaluation method (criterion 15.5(a)): a score runs from 0 to 5 in steps of 0.5 (you entered 3.3)."}  # noqa: E501


@pytest.mark.parametrize("status", ["open", "closed", "deliberation", "decided"])
def test_scorecards_change_only_while_the_call_is_in_scoring(app, sf, scene, status):
    sf.status(scene["event"], status)
    with app.app_context():
        with pytest.raises(services.ScoringError) as exc:
            _save(scene["a"], scene["m1"], _all("3"))
        label = db.session.get(Event, scene["event"]).state.label
        assert str(exc.value) == (f"Bidding procedure: evaluation method: scorecards can be changed only while the call is in scoring "  # noqa: E501
                                  f"(it is now '{label}').")
        assert db.session.scalars(select(Scorecard)).all() == []


# --------------------------------------------------------------------------------- submit and reopen


def test_reopening_a_submitted_scorecard_keeps_version_1_and_the_next_submission_is_version_2(app, sf, scene):
    sf.score(scene["a"], scene["m1"], "3")
    with app.app_context():
        card = db.session.scalars(select(Scorecard)).one()
        services.reopen_scorecard(card, actor=db.session.get(User, scene["m1"]), now=SCORING_DAY)
        db.session.commit()
        assert card.state.value == "draft" and card.version == 1
        # A reopened scorecard does not count until it is submitted again.
        assert _ranking(scene["event"]).ranking.bid(scene["a"]).scorecards == 0
    sf.score(scene["a"], scene["m1"], "4")
    with app.app_context():
        card = db.session.scalars(select(Scorecard)).one()
        versions = db.session.scalars(select(ScorecardVersion).order_by(ScorecardVersion.number)).all()
        assert card.version == 2 and card.is_submitted
        assert [v.number for v in versions] == [1, 2]
        assert versions[0].scores_dict["a"] == {"score": "3", "comment": "comment on (a)"}
        assert versions[1].scores_dict["a"]["score"] == "4"
        assert versions[1].bid_version_id == db.session.get(Bid, scene["a"]).last_version.id
        actions = db.session.scalars(select(AuditEntry.action).where(AuditEntry.object_type == "Scorecard")
                                     .order_by(AuditEntry.id)).all()
        assert actions == ["scoring.scorecard_submitted", "scoring.scorecard_reopened",
                           "scoring.scorecard_submitted"]


@pytest.mark.parametrize("status", ["deliberation", "decided"])
def test_reopening_is_refused_once_scoring_has_closed(app, sf, scene, status):
    sf.score(scene["a"], scene["m1"], "3")
    sf.status(scene["event"], status)
    with app.app_context():
        card = db.session.scalars(select(Scorecard)).one()
        with pytest.raises(services.ScoringError, match="scoring is closed .* can no longer be reopened"):
            services.reopen_scorecard(card, actor=db.session.get(User, scene["m1"]), now=SCORING_DAY)
        assert db.session.get(Scorecard, card.id).is_submitted


def test_only_its_author_can_reopen_a_scorecard(app, sf, scene):
    sf.score(scene["a"], scene["m1"], "3")
    with app.app_context():
        card = db.session.scalars(select(Scorecard)).one()
        with pytest.raises(services.ScoringError, match="Only its author"):
            services.reopen_scorecard(card, actor=db.session.get(User, scene["m2"]), now=SCORING_DAY)


def test_a_submitted_scorecard_cannot_be_saved_over_without_reopening(app, sf, scene):
    sf.score(scene["a"], scene["m1"], "3")
    with app.app_context():
        with pytest.raises(services.ScoringError, match="submitted; reopen it"):
            _save(scene["a"], scene["m1"], _all("4"))


# ---------------------------------------------------------------------------------- optimistic locking


def test_a_save_from_an_older_revision_is_refused_by_the_database(app, sf, scene):
    sf.score(scene["a"], scene["m1"], "3", submit=False)
    with app.app_context():
        card = db.session.scalars(select(Scorecard)).one()
        loaded = card.revision
        # Another tab saves: its UPDATE commits a new revision that this session's object does not know about.
        db.session.execute(update(Scorecard).where(Scorecard.id == card.id)
                           .values(revision=Scorecard.revision + 1).execution_options(synchronize_session=False))
        assert card.revision == loaded  # the identity map is stale: only the WHERE of the UPDATE can tell
        with pytest.raises(services.StaleScorecardError) as exc:
            _save(scene["a"], scene["m1"], _all("4"), revision=loaded)
        assert str(exc.value).startswith("This scorecard was saved from another tab or window after you opened "
                                         "this page, so your changes were not saved.")
        assert exc.value.current.revision == loaded + 1
        assert db.session.get(Scorecard, card.id).score_map()["a"] == Decimal("3")


def test_a_first_save_from_a_page_loaded_before_another_tab_created_the_scorecard_is_refused(app, sf, scene):
    sf.score(scene["a"], scene["m1"], "3", submit=False)
    with app.app_context():
        with pytest.raises(services.StaleScorecardError):
            _save(scene["a"], scene["m1"], _all("4"), revision=0)


def test_one_scorecard_per_member_per_bid(app, scene):
    with app.app_context():
        for _ in range(2):
            db.session.add(Scorecard(bid_id=scene["a"], member_id=scene["m1"], created_at=SCORING_DAY,
                                     updated_at=SCORING_DAY))
        with pytest.raises(Exception, match="(?i)unique"):
            db.session.flush()
        db.session.rollback()


def test_a_submitted_scorecard_needs_its_time_and_version_in_the_database(app, scene):
    with app.app_context():
        db.session.add(Scorecard(bid_id=scene["a"], member_id=scene["m1"], status="submitted", version=0,
                                 created_at=SCORING_DAY, updated_at=SCORING_DAY))
        with pytest.raises(Exception, match="(?i)check"):
            db.session.flush()
        db.session.rollback()


# ------------------------------------------------------------------------------------------- conflicts


def test_scoring_needs_a_declaration_that_covers_the_bid(app, sf, event):
    a = sf.bid(event)
    m = sf.member(federation="GER")
    sf.status(event, "scoring")
    with app.app_context():
        with pytest.raises(services.ScoringError, match="Declare your conflicts of interest"):
            _save(a, m, _all("3"))
    sf.declare(event, m)
    later = sf.bid(event, city="Kazan", host="RUS")  # a bid the declaration did not cover
    with app.app_context():
        with pytest.raises(services.ScoringError, match="does not cover this bid"):
            _save(later, m, _all("3"))


def test_a_member_of_the_host_federation_is_recused_whatever_they_declared(app, sf, scene):
    ukr = sf.member(federation="UKR", name="Oksana")
    sf.declare(scene["event"], ukr)  # "no conflict"
    with app.app_context():
        with pytest.raises(services.Recused, match=r"member of the host federation \(UKR\)"):
            _save(scene["a"], ukr, _all("3"))
        report = _ranking(scene["event"])
        assert [(r.member.name, r.bid.id, r.reason) for r in report.recusals] == [
            ("Oksana", scene["a"], "member of the host federation (UKR)")]


def test_a_declared_conflict_takes_the_members_submitted_scores_out_of_the_aggregate(app, sf, scene):
    sf.score(scene["a"], scene["m1"], "5", comments={k: "why" for k in KEYS})
    sf.score(scene["a"], scene["m2"], "2")
    with app.app_context():
        assert _ranking(scene["event"]).ranking.bid(scene["a"]).total == Decimal("3.50")
    sf.declare(scene["event"], scene["m1"], conflicted=(scene["a"],), reason="I advise the Lviv organisers")
    with app.app_context():
        report = _ranking(scene["event"])
        result = report.ranking.bid(scene["a"])
        assert result.total == Decimal("2.00") and result.scorecards == 1
        assert [(r.member.name, r.reason) for r in report.recusals] == [
            ("Anna", "declared a conflict of interest: I advise the Lviv organisers")]
        # The scorecard is kept; it just does not count.
        assert db.session.scalars(select(Scorecard).filter_by(member_id=scene["m1"])).one().is_submitted


def test_a_declaration_is_written_to_the_audit_log(app, sf, scene):
    sf.declare(scene["event"], scene["m2"], conflicted=(scene["b"],), reason="My brother runs the Sochi bid")
    with app.app_context():
        entry = db.session.scalars(select(AuditEntry).where(AuditEntry.action == "scoring.conflicts_declared")
                                   .order_by(AuditEntry.id.desc())).first()
        data = json.loads(entry.data)
        assert data["has_conflict"] is True and data["bids"] == [scene["b"]]
        assert data["reason"] == "My brother runs the Sochi bid"
        assert data["before"] == {"has_conflict": False, "bids": [], "reason": ""}
        decl = db.session.scalars(select(ConflictDeclaration).filter_by(member_id=scene["m2"])).one()
        assert decl.covered == {scene["a"], scene["b"]}


def test_declaring_a_conflict_needs_a_bid_and_a_reason(app, scene):
    with app.app_context():
        event = db.session.get(Event, scene["event"])
        member = db.session.get(User, scene["m1"])
        listed = list(db.session.scalars(select(Bid)))
        with pytest.raises(services.ScoringError) as exc:
            services.declare_conflicts(event, member, has_conflict=True, conflicted=[], reason="x", listed=listed,
                                       actor=member, now=SCORING_DAY)
        assert exc.value.field == "bids"
        with pytest.raises(services.ScoringError) as exc:
            services.declare_conflicts(event, member, has_conflict=True, conflicted=listed[:1], reason=" ",
                                       listed=listed, actor=member, now=SCORING_DAY)
        assert exc.value.field == "reason"


# ------------------------------------------------------------------------------------------- admission


def test_a_non_compliant_bid_is_not_ranked_until_admitted_with_a_reason(app, sf, scene):
    bad = sf.bid(scene["event"], city="Baku", host="AZE", compliant=False)
    with app.app_context():
        report = _ranking(scene["event"])
        assert bad not in [b.bid_id for b in report.ranking.bids]
        assert [(b.id, why) for b, why in report.data.excluded] == [
            (bad, "Bidding procedure: bids admitted to scoring: it did not meet the compliance checks and was not "
                  "admitted")]
        with pytest.raises(services.ScoringError, match="not scored"):
            _save(bad, scene["m1"], _all("3"))
        admin = db.session.get(User, scene["m1"])
        services.admit_bid(db.session.get(Bid, bad), "The guarantee arrived a day late by courier", actor=admin,
                           now=SCORING_DAY)
        db.session.commit()
        assert bad in [b.bid_id for b in _ranking(scene["event"]).ranking.bids]
        entry = db.session.scalars(select(AuditEntry).where(AuditEntry.action == "scoring.bid_admitted")).one()
        assert json.loads(entry.data)["reason"] == "The guarantee arrived a day late by courier"


def test_admitting_a_bid_needs_a_reason_and_a_failed_gate(app, sf, scene):
    bad = sf.bid(scene["event"], city="Baku", host="AZE", compliant=False)
    with app.app_context():
        admin = db.session.get(User, scene["m1"])
        with pytest.raises(services.ScoringError) as exc:
            services.admit_bid(db.session.get(Bid, bad), "  ", actor=admin, now=SCORING_DAY)
        assert exc.value.field == "reason"
        with pytest.raises(services.ScoringError, match="passed the compliance gate"):
            services.admit_bid(db.session.get(Bid, scene["a"]), "why not", actor=admin, now=SCORING_DAY)


def test_a_withdrawn_or_rejected_bid_is_neither_scored_nor_ranked(app, sf, scene):
    gone = sf.bid(scene["event"], city="Minsk", host="BLR", status="withdrawn")
    rejected = sf.bid(scene["event"], city="Riga", host="LAT", status="rejected")
    with app.app_context():
        ranked = [b.bid_id for b in _ranking(scene["event"]).ranking.bids]
        assert gone not in ranked and rejected not in ranked


# --------------------------------------------------------------------------------------------- weights


def _change(event_id, weights, reason="", based_on=None):
    event = db.session.get(Event, event_id)
    return services.change_weights(event, weights, reason=reason, actor=None, now=SCORING_DAY, based_on=based_on)


def test_before_scoring_opens_the_weights_change_without_a_reason_and_still_make_a_version(app, sf, event):
    with app.app_context():
        published = {c.key: c.weight for c in db.session.get(Event, event).regulation.criteria}
        version = _change(event, {**published, "a": Decimal("30")})
        db.session.commit()
        assert (version.number, version.reason, version.event_status) == (1, "", "open")
        assert version.weights_dict["a"] == Decimal("30")
        assert json.loads(version.weights)["a"] == "30"


def test_after_scoring_opens_a_change_of_weights_needs_a_reason_and_makes_a_new_version(app, sf, scene):
    with app.app_context():
        published = {c.key: c.weight for c in db.session.get(Event, scene["event"]).regulation.criteria}
        with pytest.raises(services.ScoringError) as exc:
            _change(scene["event"], {**published, "c": Decimal("25")})
        assert exc.value.field == "reason"
        assert str(exc.value) == ("Bidding procedure: weights of the criteria: scoring has opened (the call is 'Scoring by the WCOC'): say why "  # noqa: E501
                                  "the weights change; the reason is kept with the new version.")
        version = _change(scene["event"], {**published, "c": Decimal("25")}, reason="The Board asked for it")
        db.session.commit()
        assert version.number == 1 and version.reason == "The Board asked for it"
        entry = db.session.scalars(select(AuditEntry).where(AuditEntry.action == "scoring.weights_changed")).one()
        assert json.loads(entry.data)["reason"] == "The Board asked for it"
        report = _ranking(scene["event"])
        assert report.weights_version.number == 1
        assert report.weights_version_dict()["number"] == 1


def test_weights_that_are_already_in_force_or_changed_meanwhile_are_refused(app, event):
    with app.app_context():
        published = {c.key: c.weight for c in db.session.get(Event, event).regulation.criteria}
        with pytest.raises(services.ScoringError, match="in force already"):
            _change(event, published)
        _change(event, {**published, "a": Decimal("21")}, based_on=0)
        with pytest.raises(services.ScoringError, match="changed by someone else"):
            _change(event, {**published, "a": Decimal("22")}, based_on=0)
        assert db.session.scalars(select(WeightsVersion.number)).all() == [1]


def test_bad_weights_are_refused(app, event):
    with app.app_context():
        with pytest.raises(ValueError, match="add up to zero"):
            _change(event, dict.fromkeys(KEYS, Decimal(0)))


def test_weights_in_force_are_the_published_ones_until_changed(app, event):
    with app.app_context():
        ev = db.session.get(Event, event)
        before = services.weights_in_force(ev)
        assert [(w.article, w.label, w.weight) for w in before] == [(c.article, c.label, c.weight)
                                                                    for c in ev.regulation.criteria]
        _change(event, {**{c.key: c.weight for c in ev.regulation.criteria}, "a": Decimal("0")})
        after = services.weights_in_force(ev)
        assert after[0].weight == 0 and after[0].percent == Decimal("0.00")
        assert sum(w.percent for w in after) == Decimal("100.00")


def test_no_weights_change_once_the_decision_is_recorded(app, sf, event):
    sf.status(event, "decided")
    with app.app_context():
        with pytest.raises(services.ScoringError, match="decision is recorded"):
            _change(event, dict.fromkeys(KEYS, Decimal(1)), reason="late")


def test_the_ranking_uses_the_weights_version_in_force(app, sf, scene):
    # a scores 5 on (a) and 0 elsewhere, b the reverse: the weights decide.
    a_scores = {k: ("5" if k == "a" else "1") for k in KEYS}
    b_scores = {k: ("1" if k == "a" else "5") for k in KEYS}
    notes = {k: "why" for k in KEYS}
    for m in (scene["m1"], scene["m2"]):
        sf.score(scene["a"], m, a_scores, comments=notes)
        sf.score(scene["b"], m, b_scores, comments=notes)
    with app.app_context():
        assert _ranking(scene["event"]).ranking.leaders == (scene["b"],)
        _change(scene["event"], {k: Decimal(90 if k == "a" else 1) for k in KEYS}, reason="Prize fund first")
        report = _ranking(scene["event"])
        assert report.ranking.leaders == (scene["a"],)
        assert report.sensitivity.leaders == (scene["a"],)  # its stability is assessed under the same weights
        assert report.weights_label.startswith("weights version 1 (changed 10 June 2015: Prize fund first")


def test_the_raw_scores_are_stored_with_one_decimal(app, sf, scene):
    sf.score(scene["a"], scene["m1"], {**{k: "3" for k in KEYS}, "b": "2.5"})
    with app.app_context():
        rows = db.session.execute(text("SELECT criterion, score FROM scorecard_score ORDER BY criterion")).all()
        assert [(k, Decimal(str(v))) for k, v in rows][:2] == [("a", Decimal("3")), ("b", Decimal("2.5"))]


def test_other_pages_can_ask_whether_a_declaration_covers_every_bid(app, sf, scene):
    from scoring.queries import declaration_covers_every_bid

    fresh = sf.member(federation="ESP")
    with app.app_context():
        event = db.session.get(Event, scene["event"])
        assert declaration_covers_every_bid(event, db.session.get(User, scene["m1"]))
        assert not declaration_covers_every_bid(event, db.session.get(User, fresh))
    sf.bid(scene["event"], city="Kazan", host="RUS")
    with app.app_context():
        event = db.session.get(Event, scene["event"])
        assert not declaration_covers_every_bid(event, db.session.get(User, scene["m1"]))
