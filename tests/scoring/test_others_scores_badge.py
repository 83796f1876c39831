"""Beside a scorecard, the other members' scores: the "recused: not counted" badge stands in the row of a member
recused from the bid, and in no other row. Read from the rendered table."""

from __future__ import annotations

from tests.rendered import table_rows
from tests.scoring.test_views_scoring import KEYS, as_user, scorecard_url

BADGE = "recused: not counted"


def test_the_recused_badge_stands_beside_the_recused_members_scores_only(app, client, sf, event):
    lviv = sf.bid(event, city="Lviv", host="UKR")
    sochi = sf.bid(event, city="Sochi", host="RUS")
    anna = sf.member(federation="GER", name="Anna")
    bruno = sf.member(federation="FRA", name="Bruno")
    carla = sf.member(federation="ESP", name="Carla")
    sf.status(event, "scoring")
    for member in (anna, bruno, carla):
        sf.declare(event, member)
        sf.score(lviv, member, "3")
        sf.score(sochi, member, "2")
    # Carla declares a conflict with Lviv after scoring it, before she was shown anyone's scores: her scorecard on
    # Lviv stays on file and no longer counts.
    sf.declare(event, carla, conflicted=(lviv,), reason="Former employee of the organiser")

    as_user(client, app, anna)
    page = client.get(scorecard_url(lviv)).get_data(as_text=True)
    others = {row[0]: row for row in table_rows(page) if row and row[0].startswith(("Bruno", "Carla"))}
    assert set(others) == {"Bruno", f"Carla {BADGE}"}
    assert len(others["Bruno"]) == len(others[f"Carla {BADGE}"]) == 1 + len(KEYS)  # the scores beside each name
    assert page.count(BADGE) == 1

    page = client.get(scorecard_url(sochi)).get_data(as_text=True)  # on Sochi, nobody is recused
    assert BADGE not in page
    assert {row[0] for row in table_rows(page) if row and row[0].startswith(("Bruno", "Carla"))} == {"Bruno", "Carla"}
