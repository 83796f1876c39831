"""The ranking arithmetic is kept per worker for the same inputs, and a changed score is never served stale."""

import pytest

from core.db import db
from events.models import Event
from scoring.queries import build_ranking, load_scoring


def test_same_inputs_reuse_the_arithmetic_and_a_new_score_recomputes(app, event, sf):
    lviv = sf.bid(event, city="Lviv", host="UKR")
    tbilisi = sf.bid(event, city="Tbilisi", host="GEO")
    sf.status(event, "scoring")
    members = [sf.member(federation="FRA"), sf.member(federation="SWE")]
    for m in members:
        sf.declare(event, m)
        sf.score(lviv, m, "4")
        sf.score(tbilisi, m, "3")
    with app.app_context():
        first = build_ranking(load_scoring(db.session.get(Event, event)))
        second = build_ranking(load_scoring(db.session.get(Event, event)))
        assert second.ranking is first.ranking  # the same immutable result, not computed again
    third_member = sf.member(federation="ITA")
    sf.declare(event, third_member)
    sf.score(tbilisi, third_member, "5", comments={k: "excellent" for k in "abcdefghij"})
    with app.app_context():
        third = build_ranking(load_scoring(db.session.get(Event, event)))
        assert third.ranking is not first.ranking
        totals = {b.bid_id: b.total for b in third.ranking.bids}
        assert str(totals[tbilisi]) == "3.67"


def test_a_chart_is_drawn_once_per_ranking_and_redrawn_when_a_score_changes(app, event, sf):
    lviv = sf.bid(event, city="Lviv", host="UKR")
    sf.status(event, "scoring")
    member = sf.member(federation="FRA")
    sf.declare(event, member)
    sf.score(lviv, member, "4")
    drawn = []

    def draw(name):
        drawn.append(name)
        return f"<svg>{name}</svg>"

    with app.app_context():
        first = build_ranking(load_scoring(db.session.get(Event, event)))
        assert first.kept("chart", lviv, lambda: draw("first")) == "<svg>first</svg>"
        again = build_ranking(load_scoring(db.session.get(Event, event)))
        assert again.kept("chart", lviv, lambda: draw("again")) == "<svg>first</svg>"
    second = sf.member(federation="SWE")
    sf.declare(event, second)
    sf.score(lviv, second, "2")
    with app.app_context():
        changed = build_ranking(load_scoring(db.session.get(Event, event)))
        assert changed.kept("chart", lviv, lambda: draw("changed")) == "<svg>changed</svg>"
    assert drawn == ["first", "changed"]


def test_a_kept_bid_card_shows_what_changed_beside_the_scores(app, client, event, sf, login_as):
    """A bid's card on the ranking page is rendered once per ranking result (scoring/_ranking_card.html), but what
    the result does not hold is in its key: a member who has not scored yet declaring a conflict with the bid (the
    scores, the weights and the names are the same, so the result is found in the cache), or the secretariat's
    admission of the bid, shows at once."""
    lviv = sf.bid(event, city="Lviv", host="UKR")
    sf.status(event, "scoring")
    anna, bruno = sf.member(federation="FRA", name="Anna"), sf.member(federation="SWE", name="Bruno")
    sf.declare(event, anna)
    sf.declare(event, bruno)
    sf.score(lviv, anna, "4")
    login_as("admin")
    url = "/events/fwwcm-2015/scoring/ranking"
    first = client.get(url).get_data(as_text=True)
    assert "<p>1 of 2 members scored.</p>" in first
    with app.app_context():
        before = build_ranking(load_scoring(db.session.get(Event, event)))
    sf.declare(event, bruno, conflicted=(lviv,), reason="Adviser to the organiser")
    with app.app_context():
        after = build_ranking(load_scoring(db.session.get(Event, event)))
        assert after.ranking is before.ranking  # the same result, from the cache: only the card's key tells
    page = client.get(url).get_data(as_text=True)
    assert "<p>1 of 1 members scored.</p>" in page and "<p>1 of 2 members scored.</p>" not in page
    with app.app_context():
        from bids.models import Bid

        db.session.get(Bid, lviv).admitted_reason = "Its letter arrived by post on time."
        db.session.commit()
    page = client.get(url).get_data(as_text=True)
    assert "<p>Failed the compliance gate; admitted to scoring: Its letter arrived by post on time.</p>" in page


def _report(app, event):
    """(the ranking, its data) built in a fresh application context, as a page does."""
    with app.app_context():
        data = load_scoring(db.session.get(Event, event))
        report = build_ranking(data)
        seen = {"totals": {b.bid_id: (str(b.total), b.scorecards) for b in report.ranking.bids},
                "recusals": [r.as_dict() for r in report.recusals],
                "short": [(bid.id, why) for bid, why in report.short_of_scorecards],
                "scorecards_read": "cards" in vars(data)}
        return report, seen


def test_a_ranking_found_in_the_cache_reads_no_scorecard_and_shows_the_same(app, event, sf):
    """The call's slot is found from one aggregate of the scorecards per bid: the page then reads no scorecard row,
    and shows the same ranking, recusals and shortfalls as when they were worked out from every scorecard."""
    lviv = sf.bid(event, city="Lviv", host="UKR")
    tbilisi = sf.bid(event, city="Tbilisi", host="GEO")
    sf.status(event, "scoring")
    anna, bruno = sf.member(federation="FRA", name="Anna"), sf.member(federation="GEO", name="Bruno")
    carla = sf.member(federation="SWE", name="Carla")
    for m in (anna, bruno, carla):
        sf.declare(event, m)
    sf.score(lviv, anna, "4")
    sf.score(tbilisi, anna, "3")
    sf.score(lviv, bruno, "2")
    first, computed = _report(app, event)
    assert computed["scorecards_read"]  # worked out from the scorecards the first time
    again, found = _report(app, event)
    assert again.ranking is first.ranking and not found["scorecards_read"]
    assert found == {**computed, "scorecards_read": False}
    assert found["recusals"][0]["member"] == "Bruno" and found["recusals"][0]["bid_id"] == tbilisi
    assert found["totals"] == {lviv: ("3.00", 2), tbilisi: ("3.00", 1)}


def _lviv_scored_by_anna_and_bruno(event, sf) -> tuple[int, int, int, int]:
    """One bid in scoring, scored 4 by Anna and 2 by Bruno: (its id, Anna's, Bruno's, Anna's scorecard's)."""
    lviv = sf.bid(event, city="Lviv", host="UKR")
    sf.status(event, "scoring")
    anna, bruno = sf.member(federation="FRA", name="Anna"), sf.member(federation="SWE", name="Bruno")
    for m in (anna, bruno):
        sf.declare(event, m)
    card = sf.score(lviv, anna, "4")
    sf.score(lviv, bruno, "2")
    return lviv, anna, bruno, card


def test_every_kind_of_scorecard_write_gives_the_ranking_anew_even_at_the_same_instant(app, event, sf):
    """A reopening, a draft saved, a new submission and a member's federation change each change what the ranking
    counts; the factory writes them all at one instant, so only the scorecards' revisions tell them apart."""
    from accounts.models import User
    from scoring.models import Scorecard
    from scoring.services import reopen_scorecard
    from tests.scoring.factories_scoring import SCORING_DAY

    lviv, anna, bruno, card = _lviv_scored_by_anna_and_bruno(event, sf)
    assert _report(app, event)[1]["totals"] == {lviv: ("3.00", 2)}
    with app.app_context():
        reopen_scorecard(db.session.get(Scorecard, card), actor=db.session.get(User, anna), now=SCORING_DAY)
        db.session.commit()
    assert _report(app, event)[1]["totals"] == {lviv: ("2.00", 1)}  # a draft does not count
    with app.app_context():
        before = load_scoring(db.session.get(Event, event)).card_figures
    sf.score(lviv, anna, "5", submit=False)  # a draft: the ranking is the same, but the figures of the bid moved
    with app.app_context():
        assert load_scoring(db.session.get(Event, event)).card_figures[lviv] != before[lviv]
    assert _report(app, event)[1]["totals"] == {lviv: ("2.00", 1)}
    sf.score(lviv, anna, "5")
    assert _report(app, event)[1]["totals"] == {lviv: ("3.50", 2)}
    with app.app_context():
        db.session.get(User, bruno).federation = "UKR"  # now of the host federation: recused
        db.session.commit()
    report, seen = _report(app, event)
    assert seen["totals"] == {lviv: ("5.00", 1)}
    assert [r["member"] for r in seen["recusals"]] == ["Bruno"]


def test_who_is_due_and_what_counts_follow_the_members_and_the_titles(app, event, sf):
    """A member's WCOC role taken away, a new member with no scorecard yet and a bid's new title each change the call's
    key: "N of M members scored" and the names follow at once, the arithmetic found again where it is the same."""
    from accounts.models import UserRole
    from bids.models import Bid

    lviv = sf.bid(event, city="Lviv", host="UKR")
    sf.status(event, "scoring")
    anna, bruno = sf.member(federation="FRA", name="Anna"), sf.member(federation="SWE", name="Bruno")
    for m in (anna, bruno):
        sf.declare(event, m)
    sf.score(lviv, anna, "4")
    first, seen = _report(app, event)
    assert seen["short"] == [(lviv, "1 of 2 members scored")]
    with app.app_context():
        db.session.execute(db.delete(UserRole).where(UserRole.user_id == bruno))
        db.session.commit()
    again, seen = _report(app, event)
    assert seen["short"] == [] and seen["totals"] == {lviv: ("4.00", 1)}
    carla = sf.member(federation="ITA", name="Carla")
    sf.declare(event, carla)
    assert _report(app, event)[1]["short"] == [(lviv, "1 of 2 members scored")]
    with app.app_context():
        db.session.get(Bid, lviv).applicant_name = "Renamed Federation"
        db.session.commit()
    renamed, _ = _report(app, event)
    assert renamed.bid(lviv).title.startswith("Renamed Federation")
    assert renamed.ranking.bids[0].bid_id == lviv and renamed.ranking is not first.ranking


def test_a_scorecard_saved_between_the_two_reads_is_never_kept_stale(app, event, sf):
    """A WCOC member's page reads their own scorecards first (who may see the scores), the figures and the others'
    later: a resubmission in another tab between the two must not leave a ranking kept under the new figures but
    computed from the old scorecard."""
    from decimal import Decimal

    from accounts.models import User
    from bids.models import Bid
    from scoring.models import Scorecard
    from scoring.services import reopen_scorecard, save_scorecard
    from tests.scoring.factories_scoring import SCORING_DAY

    lviv, anna, bruno, card = _lviv_scored_by_anna_and_bruno(event, sf)
    assert _report(app, event)[1]["totals"] == {lviv: ("3.00", 2)}  # computed and kept as things stand
    with app.app_context():
        data = load_scoring(db.session.get(Event, event))
        viewer = db.session.get(User, anna)
        assert data.ranking_closed_to(viewer) is None  # her own scorecards read (all submitted): as they were
        # Meanwhile, in another tab: reopened and submitted again with another score.
        scorecard = db.session.get(Scorecard, card)
        reopen_scorecard(scorecard, actor=viewer, now=SCORING_DAY)
        bid = db.session.get(Bid, lviv)
        keys = [c.key for c in bid.event.regulation.criteria]
        save_scorecard(bid, viewer, scores={k: Decimal("5") for k in keys}, comments={k: "again" for k in keys},
                       revision=scorecard.revision, submit=True, actor=viewer, now=SCORING_DAY)
        db.session.commit()
        assert build_ranking(data, viewer).ranking.bids[0].total == Decimal("3.50")
    assert _report(app, event)[1]["totals"] == {lviv: ("3.50", 2)}
    # The same with every scorecard read before the change (a caller that read them for something else first): the
    # ranking built on what was read is that of what was read, and nothing is kept under the figures of the new.
    with app.app_context():
        data = load_scoring(db.session.get(Event, event))
        assert len(data.cards) == 2
        viewer = db.session.get(User, bruno)
        scorecard = db.session.scalars(db.select(Scorecard).filter_by(member_id=bruno)).one()
        reopen_scorecard(scorecard, actor=viewer, now=SCORING_DAY)
        db.session.commit()
        assert build_ranking(data).ranking.bids[0].total == Decimal("3.50")
    assert _report(app, event)[1]["totals"] == {lviv: ("5.00", 1)}


def _scores_seen(app, event, bid_id: int, member_id: int) -> set[str]:
    """The scores of one member's scorecard on one bid as a scoring page reads them (ScoringData.load_scores)."""
    with app.app_context():
        from bids.models import Bid

        data = load_scoring(db.session.get(Event, event))
        data.load_scores(db.session.get(Bid, bid_id))
        card, = [c for (b, m), c in data.cards.items() if (b, m) == (bid_id, member_id)]
        return {f"{s.normalize():f}" for s in card.score_map().values()}


@pytest.mark.parametrize("few", [500, 0], ids=["by-ids", "by-call"])
def test_the_scores_kept_are_those_saved_last_even_at_the_same_instant(app, event, sf, monkeypatch, few):
    """A scorecard's scores are kept per process under its id, revision, version and times (kept_scores): two
    drafts saved at one instant differ only by their revision, and each is read as saved. The scores not kept are
    read by their scorecards' ids, or by the call's when there are more than FEW_SCORECARDS of them."""
    from accounts.models import User
    from scoring import queries

    monkeypatch.setattr(queries, "FEW_SCORECARDS", few)
    from scoring.models import Scorecard
    from scoring.services import reopen_scorecard
    from tests.scoring.factories_scoring import SCORING_DAY

    lviv, anna, bruno, card = _lviv_scored_by_anna_and_bruno(event, sf)
    assert _report(app, event)[1]["totals"] == {lviv: ("3.00", 2)}  # every scorecard's scores read and kept
    assert _scores_seen(app, event, lviv, anna) == {"4"}
    with app.app_context():
        reopen_scorecard(db.session.get(Scorecard, card), actor=db.session.get(User, anna), now=SCORING_DAY)
        db.session.commit()
    for draft in ("5", "1"):
        sf.score(lviv, anna, draft, submit=False)
        assert _scores_seen(app, event, lviv, anna) == {draft}
    sf.score(lviv, anna, "1")
    assert _report(app, event)[1]["totals"] == {lviv: ("1.50", 2)}


def test_a_ranking_after_one_change_reads_the_other_scorecards_scores_kept(app, event, sf):
    """Wiring: after one scorecard changed, the ranking reads that scorecard's scores and takes the others' from
    what was kept. Shown by a kept entry that says otherwise than the database (Bruno's scores put as 0 under his
    scorecard's key): the next ranking counts it."""
    from dataclasses import replace
    from decimal import Decimal

    from accounts.models import User
    from scoring.models import Scorecard
    from scoring.queries import kept_scores
    from scoring.services import reopen_scorecard
    from tests.scoring.factories_scoring import SCORING_DAY

    def reopen(member_id: int) -> None:
        with app.app_context():
            scorecard = db.session.scalars(db.select(Scorecard).filter_by(member_id=member_id)).one()
            reopen_scorecard(scorecard, actor=db.session.get(User, member_id), now=SCORING_DAY)
            db.session.commit()

    lviv, anna, bruno, card = _lviv_scored_by_anna_and_bruno(event, sf)
    assert _report(app, event)[1]["totals"] == {lviv: ("3.00", 2)}
    with app.app_context():
        data = load_scoring(db.session.get(Event, event))
        his, = [c for (b, m), c in data.cards.items() if m == bruno]
        keys = [c.key for c in data.reg.criteria]
        kept_scores.put(replace(his, plain_scores={k: (Decimal("0"), "kept") for k in keys}))
    reopen(anna)  # Anna's scorecard changes: reopened and submitted again, hers are read anew, Bruno's taken
    sf.score(lviv, anna, "4")  # from what is kept
    assert _report(app, event)[1]["totals"] == {lviv: ("2.00", 2)}
    reopen(bruno)  # his scorecard changes too: his scores are read again, as the database holds them
    sf.score(lviv, bruno, "2")
    assert _report(app, event)[1]["totals"] == {lviv: ("3.00", 2)}


def test_one_entry_per_scorecard_is_kept_the_newest_read():
    """A scorecard read at a newer revision replaces what was kept of it (the older can never be asked for again, and
    a card's row read before a save with its scores read after must not stay kept); the least recently used go
    first beyond the size."""
    from datetime import UTC, datetime
    from decimal import Decimal

    from scoring.queries import CardRow, KeptScores

    when = datetime(2015, 6, 1, tzinfo=UTC)

    def card(card_id: int, revision: int, score: str | None = None) -> CardRow:
        scores = None if score is None else {"a": (Decimal(score), "")}
        return CardRow(card_id, 1, 1, "submitted", revision, 1, when, when, scores)

    kept = KeptScores(size=2)
    kept.put(card(1, 1, "3"))
    kept.put(card(1, 2, "4"))
    assert len(kept) == 1 and kept.get(card(1, 1)) is None and kept.get(card(1, 2)) == {"a": (Decimal("4"), "")}
    kept.put(card(2, 1, "1"))
    kept.get(card(1, 2))  # used: card 2 is now the least recently used
    kept.put(card(3, 1, "2"))
    assert len(kept) == 2 and kept.get(card(2, 1)) is None and kept.get(card(3, 1)) is not None
    kept.put(card(2, 5, "5"))  # card 2 again, after it went: kept anew, card 1 goes
    assert kept.get(card(1, 2)) is None and kept.get(card(2, 5)) == {"a": (Decimal("5"), "")}
    kept.put(card(4, 1))  # scores not read: nothing kept
    assert kept.get(card(4, 1)) is None and len(kept) == 2


def test_the_recusals_follow_the_bids_declared_and_the_bids_owners_and_hosts(app, event, sf):
    """The call's key holds which bids each declaration names (the same reason, other bids), and each bid's owner and
    host federation: a change of any of them, with no scorecard changed, gives the recusals and the totals anew."""
    from bids.models import Bid

    lviv = sf.bid(event, city="Lviv", host="UKR")
    tbilisi = sf.bid(event, city="Tbilisi", host="GEO")
    sf.status(event, "scoring")
    anna, bruno = sf.member(federation="FRA", name="Anna"), sf.member(federation="SWE", name="Bruno")
    for m, score in ((anna, "4"), (bruno, "2")):
        sf.declare(event, m)
        sf.score(lviv, m, score)
        sf.score(tbilisi, m, score)
    assert _report(app, event)[1]["totals"] == {lviv: ("3.00", 2), tbilisi: ("3.00", 2)}
    sf.declare(event, bruno, conflicted=(lviv,), reason="Consults for a bidder.")
    seen = _report(app, event)[1]
    assert [(r["member"], r["bid_id"]) for r in seen["recusals"]] == [("Bruno", lviv)]
    assert seen["totals"] == {lviv: ("4.00", 1), tbilisi: ("3.00", 2)}
    sf.declare(event, bruno, conflicted=(tbilisi,), reason="Consults for a bidder.")
    seen = _report(app, event)[1]
    assert [(r["member"], r["bid_id"]) for r in seen["recusals"]] == [("Bruno", tbilisi)]
    assert seen["totals"] == {lviv: ("3.00", 2), tbilisi: ("4.00", 1)}
    with app.app_context():
        db.session.get(Bid, lviv).host_federation = "FRA"  # Anna's federation now hosts it
        db.session.commit()
    seen = _report(app, event)[1]
    assert sorted((r["member"], r["bid_id"]) for r in seen["recusals"]) == [("Anna", lviv), ("Bruno", tbilisi)]
    assert seen["totals"] == {lviv: ("2.00", 1), tbilisi: ("4.00", 1)}
    with app.app_context():
        db.session.get(Bid, tbilisi).owner_id = anna  # Anna's own bid now
        db.session.commit()
    report, seen = _report(app, event)
    assert sorted((r["member"], r["bid_id"]) for r in seen["recusals"]) == [
        ("Anna", lviv), ("Anna", tbilisi), ("Bruno", tbilisi)]
    assert seen["totals"] == {lviv: ("2.00", 1), tbilisi: ("None", 0)}
    assert report.ranking.notes == (f"Without a total, listed last and unranked: {report.bid(tbilisi).title}.",)


def test_a_scorecard_page_reads_the_scores_of_its_bid_alone(app, event, sf):
    """`load_scores(bid)`, for one bid's scorecard page: that bid's scorecards are read, the others' are not."""
    from bids.models import Bid

    lviv = sf.bid(event, city="Lviv", host="UKR")
    tbilisi = sf.bid(event, city="Tbilisi", host="GEO")
    sf.status(event, "scoring")
    anna = sf.member(federation="FRA", name="Anna")
    sf.declare(event, anna)
    sf.score(lviv, anna, "4")
    sf.score(tbilisi, anna, "3")
    _report(app, event)  # every scorecard's scores read once and kept
    with app.app_context():
        data = load_scoring(db.session.get(Event, event))
        data.load_scores(db.session.get(Bid, lviv))
        read = {bid_id: card.plain_scores is not None for (bid_id, _), card in data.cards.items()}
        assert read == {lviv: True, tbilisi: False}
