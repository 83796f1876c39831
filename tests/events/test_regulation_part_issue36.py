"""Issue 36, the regulation part: the organizer's duties the articles page called "not bearing on the call" (3.8.1,
3.5.2, 12.3) and the ones it left out (3.1 and 3.2's reasonable endeavours, 10.3's anthems) are obligations listed
with their article; the choices Gambit makes without an article saying them are readings on the articles page; the
closing ceremony is shown as it is applied (one reading); and a check that is not an article's says what it is."""

from __future__ import annotations

import html
import re
from datetime import timedelta

import pytest

from bids.models import Bid
from core.db import db
from events.models import Event
from tests.bids.web import fill_bid, start_bid

PAGE = "/events/fwwcm-2015"


def _text(response) -> str:
    """The page's text as a reader sees it: tags gone, runs of spaces one, no space before a closing mark."""
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", response.get_data(as_text=True))))
    return re.sub(r" ([),.:])", r"\1", text)


@pytest.mark.parametrize(("section", "line"), [
    ("undertakings", "Art. 3.1, The players' requests about their accommodation: The players may inspect the "
                     "accommodation arranged for them at the venue three days before the first game and make "
                     "reasonable requests about it, which the organizer uses all reasonable endeavours to "
                     "accommodate."),
    ("undertakings", "Art. 3.2, The players' requests about the playing hall: The organizer uses all reasonable "
                     "endeavours to satisfy the players' reasonable requests in relation to the playing hall"),
    ("undertakings", "Art. 10.3, Anthems at the closing ceremony: The anthem of the winner's country, the FIDE Anthem "
                     "and the anthem of the host country are played at the closing ceremony."),
    ("in-kind", "Art. 3.5.2, Electronic clocks and boards: The games are played with electronic clocks and boards "
                "approved by FIDE"),
    ("in-kind", "Art. 3.8.1, Toilets and rest lounge on the stage: Toilet facilities both players use during the "
                "games, and one rest lounge area for both players, on or at the stage"),
    ("in-kind", "Art. 12.3, The FIDE logo and the event's title in the event's media:"),
])
def test_the_public_page_lists_the_organizers_duties_with_their_article(client, event, section, line):
    page = client.get(PAGE).get_data(as_text=True)
    listed = page.split(f'id="{section}"', 1)[1].split("</section>", 1)[0]
    assert line in re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", listed)))


def test_the_articles_page_counts_the_duties_as_applied_and_declares_the_readings(client, event):
    text = _text(client.get(f"{PAGE}/articles"))
    assert "Applied by Gambit 83" in text and "Does not bear on the call 53" in text
    assert "How Gambit reads the ambiguous articles (19)" in text
    for article in ("3.5.2", "3.8.1", "12.3", "12.3.1", "12.3.2"):
        row = text.split(f" {article} Applied by Gambit ", 1)
        assert len(row) == 2, article
    readings = text.split("How Gambit reads the ambiguous articles", 1)[1]
    for article, words in (
            ("5.1", "'On the day of the venue inspection' is read as the day the players inspect the playing hall"),
            ("13.4", "'Before the start of the FWWCM' is read as by the day before the opening ceremony"),
            ("11.1.2", "paid directly to each player, due with a bank guarantee on the last date of Art. 15.6.2"),
            ("14.4", "paid directly to the opponent of the home player, due with a bank guarantee on the last date "
                     "of Art. 15.6.2"),
            ("14.5", "paid to FIDE, which pays each Principal on a date the contract sets"),
            ("15.6.2", "A deadline that has already passed on the day the contract is issued is replaced by a date "
                       "the contract sets")):
        reading = readings.split(f"Art. {article} Applied by Gambit ", 1)[1][:600]
        assert words in reading, article


def test_the_public_page_gives_the_closing_day_the_checks_apply(client, event):
    """Art. 2.2 allows the day after the match is decided "or one day thereafter", Art. 10.3 "not later than one
    day after the end of the event": the page said "1 or 2 day(s)" while a bid closing 2 days after was refused."""
    text = _text(client.get(PAGE))
    assert ("and the closing ceremony is 1 day after the last day (Art. 2.2 read with Art. 10.3: how Gambit reads "
            "them), so the opening ceremony can be on") in text
    assert "1 or 2 day(s)" not in text


@pytest.fixture
def good(app, practice):
    from core.db import utcnow
    from tests.bids.factories import valid_bid
    with app.app_context():
        return valid_bid(db.session.get(Event, practice).regulation, signed_on=utcnow().date())


def _rows(page: str) -> set[tuple[str, str]]:
    """(source, requirement) of each row of the compliance table that does not pass (fails or warns)."""
    return {(cite, message) for _, cite, message in re.findall(
        r"<tr class=\"outcome-row-([^\"]*)\">\s*<td[^>]*>([^<]*)</td>\s*<td[^>]*>([^<]*)</td>", page)}


def test_the_form_checks_of_a_bid_cite_the_bidding_procedure_not_an_article(client, app, login_as, good):
    """The hotel's category as 1 to 5 stars (the database keeps no other) and a signing date not in the future are
    the form the call asks, not what Art. 15.2(g) or (k) says: each row says it is the bidding procedure."""
    from core.db import utcnow

    login_as("bidder")
    bid_id = start_bid(client)
    fill_bid(client, bid_id, good)
    with app.app_context():
        bid = db.session.get(Bid, bid_id)
        bid.hotel_stars, bid.signed_on = None, utcnow().date() + timedelta(days=3)
        db.session.commit()
    page = client.get(f"/bids/{bid_id}").get_data(as_text=True)
    rows = _rows(page)
    assert ("Bidding procedure: hotel category",
            "the bid must give the category of the official hotel, a whole number of stars from 1 to 5.") in rows
    assert ("Bidding procedure: date of signing",
            "the bid must give the date it was signed, which cannot be in the future.") in rows
    assert not {r for r in rows
                if r[0].startswith("Art.") and ("stars from 1 to 5" in r[1] or "date it was signed" in r[1])}
