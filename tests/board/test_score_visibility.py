"""Output × role → what each person is shown of a bid's scores, totals and rank (scoring.visibility, the one rule).

Like the access matrix (tests/access_matrix.py), a table says what every role gets from every output that carries
scores or ranks, and one walk checks it all. A call is scored and decided once (its PDFs rendered once for the
walk); the walk then reads every output as every role, the PDFs read back with pypdf. The bid watched is Lviv:
WCOC members of its host federation (UKR) or who declared a conflict with it are recused from it.

In a cell: SHOWN, Lviv's figures are there; WITHHELD, they are not while another bid's are, and a record (the
decision's API and minutes) says why in the sentence of scoring.visibility; NONE, the output answers 200 and carries
no figure at all; REFUSED, 403 with that sentence; a number, that status and no figure. Any output that stops asking
the rule fails the walk for the recused rows.
"""

from __future__ import annotations

import io
import json
import re
from decimal import Decimal
from html import unescape

from pypdf import PdfReader
from sqlalchemy import select

from core.db import db
from tests.board.conftest import complete
from tests.conftest import login, utcnow

SLUG = "fwwcm-2015"
SHOWN, WITHHELD, NONE, REFUSED = "shown", "withheld", "none", "refused"

# Every criterion scored apart, so that Lviv's weighted total is a figure nothing else on a page is.
LVIV_SCORES = dict(zip("abcdefghij", ("4.5", "4", "3.5", "5", "4", "4.5", "3.5", "4", "4.5", "5"), strict=True))

ROLES = ("anon", "bidder", "rival", "wcoc", "wcoc_recused", "wcoc_declared", "board", "board_wcoc_recused",
         "admin", "token_wcoc_recused", "token_bidder", "token_board")
TOKENS = {"token_wcoc_recused": "wcoc_recused", "token_bidder": "bidder", "token_board": "board"}


def by_role(anon: object, bidders: object, **rest: object) -> dict[str, object]:
    """A row: `anon`, both bidders alike, then each other role (a token holder only where given: the API's)."""
    return {"anon": anon, "bidder": bidders, "rival": bidders, **rest}


PAGE_OF_THE_BOARD = dict(wcoc=403, wcoc_recused=403, wcoc_declared=403, board=SHOWN, board_wcoc_recused=REFUSED,
                         admin=SHOWN)
RANKING = dict(wcoc=SHOWN, wcoc_recused=WITHHELD, wcoc_declared=WITHHELD, board=SHOWN, board_wcoc_recused=WITHHELD,
               admin=SHOWN)
RECORD = dict(RANKING)  # the decision's record withholds what the ranking does, and says why

# output -> (url, role -> expected); a token holder's cell is None where the output is not the API's.
OUTPUTS: dict[str, tuple[str, dict[str, object]]] = {
    "ranking page": ("/events/{slug}/scoring/ranking", by_role(302, 403, **RANKING)),
    "ranking API": ("/api/v1/events/{slug}/ranking",
                    by_role(401, 403, **RANKING, token_wcoc_recused=WITHHELD, token_bidder=403, token_board=SHOWN)),
    "scores CSV": ("/events/{slug}/scoring/scores.csv", by_role(302, 403, **{**RANKING, "board": 403})),
    "Lviv's scorecard, the others' scores beside it": (
        "/events/{slug}/scoring/bids/{lviv}",
        by_role(302, 403, wcoc=SHOWN, wcoc_recused=403, wcoc_declared=403, board=403, board_wcoc_recused=403,
                admin=403)),
    "Lviv's dossier": ("/board/{slug}/bids/{lviv}/dossier.pdf", by_role(302, 403, **PAGE_OF_THE_BOARD)),
    "Lviv's stored dossier": ("/board/{slug}/dossiers/{lviv_dossier}.pdf", by_role(302, 403, **PAGE_OF_THE_BOARD)),
    "board pack": ("/board/{slug}/pack.pdf", by_role(302, 403, **PAGE_OF_THE_BOARD)),
    "stored board pack": ("/board/{slug}/dossiers/{pack}.pdf", by_role(302, 403, **PAGE_OF_THE_BOARD)),
    "decision page": ("/board/{slug}/decision",
                      by_role(302, 403, **dict.fromkeys(("wcoc", "wcoc_recused", "wcoc_declared", "board",
                                                          "board_wcoc_recused", "admin"), NONE))),
    "decision API": ("/api/v1/events/{slug}/decision",
                     by_role(401, 403, **RECORD, token_wcoc_recused=WITHHELD, token_bidder=403, token_board=SHOWN)),
    "decision minutes": ("/board/{slug}/decision/{decision}/minutes.pdf", by_role(302, 403, **RECORD)),
}
# Before scoring closes, a member whose own scorecards are not all in reads no score (independent first).
DURING_SCORING: dict[str, tuple[str, dict[str, object]]] = {
    "ranking page": ("/events/{slug}/scoring/ranking", {"wcoc": SHOWN, "wcoc_pending": NONE, "board": SHOWN}),
    "ranking API": ("/api/v1/events/{slug}/ranking", {"wcoc": SHOWN, "wcoc_pending": 403, "board": SHOWN}),
    "scores CSV": ("/events/{slug}/scoring/scores.csv", {"wcoc": SHOWN, "wcoc_pending": 302, "admin": SHOWN}),
    "Lviv's scorecard, the others' scores beside it": ("/events/{slug}/scoring/bids/{lviv}",
                                                       {"wcoc": SHOWN, "wcoc_pending": NONE}),
}


def text_of(response) -> str:
    """What a person reads in the answer: a PDF's extracted text, a page without its tags, JSON or CSV as sent;
    whitespace folded (a PDF wraps its lines anywhere)."""
    data = response.get_data()
    if data.startswith(b"%PDF"):
        text = "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)
    elif response.mimetype == "text/html":
        text = unescape(re.sub(r"<[^>]+>", " ", data.decode()))
    elif response.is_json:
        text = json.dumps(response.get_json(), ensure_ascii=False)
    else:
        text = data.decode()
    return " ".join(text.split())


class Call:
    """The call scored and decided through the pages, with a logged-in client (or a token) per role."""

    def __init__(self, app, event, sf, make):
        self.app, self.event, self.sf, self.make = app, event, sf, make
        self.emails = {role: f"{role}@visibility.example.org" for role in ROLES if role not in TOKENS}
        owner = make.user(email=self.emails["bidder"], roles=("bidder",), federation="UKR")
        rival = make.user(email=self.emails["rival"], roles=("bidder",), federation="GEO")
        self.lviv = sf.bid(event, city="Lviv", host="UKR", name="Ukrainian Chess Federation", owner_id=owner)
        self.tbilisi = sf.bid(event, city="Tbilisi", host="GEO", name="Georgian Chess Federation", owner_id=rival)
        self.madrid = sf.bid(event, city="Madrid", host="ESP", name="Spanish Chess Federation")
        for bid, country in ((self.lviv, "UA"), (self.tbilisi, "GE"), (self.madrid, "ES")):
            complete(app, bid, venue_country=country)
        sf.status(event, "scoring")
        self.anna = anna = make.user(email=self.emails["wcoc"], roles=("wcoc",), name="Anna Aalto", federation="FIN")
        bo = sf.member(name="Bo Berg", federation="SWE")
        carla = make.user(email=self.emails["wcoc_recused"], roles=("wcoc",), name="Carla Cruz", federation="UKR")
        eve = make.user(email=self.emails["wcoc_declared"], roles=("wcoc",), name="Eve Evans", federation="NOR")
        dmytro = make.user(email=self.emails["board_wcoc_recused"], roles=("board", "wcoc"), name="Dmytro Dudko",
                           federation="UKR")
        self.pending = make.user(email="pending@visibility.example.org", roles=("wcoc",), name="Pia Pending",
                                 federation="ITA")
        for member in (anna, bo, carla, dmytro, self.pending):
            sf.declare(event, member)
        sf.declare(event, eve, conflicted=(self.lviv,), reason="Former employee of the organiser")
        for member, name in ((anna, "Anna"), (bo, "Bo")):
            sf.score(self.lviv, member, LVIV_SCORES, comments={k: f"Lviv-note ({k}) by {name}" for k in "abcdefghij"})
        for member, name in ((anna, "Anna"), (bo, "Bo"), (carla, "Carla"), (eve, "Eve"), (dmytro, "Dmytro")):
            sf.score(self.tbilisi, member, "3", comments={k: f"Tbilisi-note ({k}) by {name}" for k in "abcdefghij"})
            sf.score(self.madrid, member, "2.5", comments={k: "" for k in "abcdefghij"})
        make.user(email=self.emails["board"], roles=("board",), name="Board Member", federation="FRA")
        make.user(email=self.emails["admin"], roles=("admin",), name="The Secretariat")
        self.totals = self._totals()

    def _totals(self) -> dict[int, Decimal]:
        from events.models import Event
        from scoring.queries import build_ranking, load_scoring

        with self.app.app_context():
            report = build_ranking(load_scoring(db.session.get(Event, self.event)))
            return {r.bid_id: r.total for r in report.ranking.bids}

    def first_shown(self, member: int):
        """When the member was first shown other members' scores in the call (None: never)."""
        from scoring.models import ConflictDeclaration

        with self.app.app_context():
            return db.session.scalars(select(ConflictDeclaration.scores_first_shown_at).where(
                ConflictDeclaration.event_id == self.event, ConflictDeclaration.member_id == member)).one()

    def lviv_title(self) -> str:
        from bids.models import Bid

        with self.app.app_context():
            return db.session.get(Bid, self.lviv).title

    def client(self, role: str):
        client = self.app.test_client()
        if role == "anon" or role in TOKENS:
            return client
        assert login(client, self.emails[role]).status_code == 302
        return client

    def token(self, role: str) -> str:
        from accounts.models import User
        from accounts.services import issue_api_token

        with self.app.app_context():
            user = db.session.scalars(select(User).where(User.email == self.emails[TOKENS[role]])).one()
            token = issue_api_token(user, actor=user, now=utcnow())
            db.session.commit()
            return token

    def decide(self) -> None:
        """The Board votes for Lviv and the secretariat records the decision (the pack and dossiers are made)."""
        board = self.client("board")
        assert board.post(f"/board/{SLUG}/vote", data={"choice": str(self.lviv)}).status_code == 302
        response = self.client("admin").post(f"/board/{SLUG}/decision", data={
            "method": "board_vote", "selected": str(self.lviv), "decided_on": utcnow().date().isoformat(),
            "rationale": ""})
        assert response.status_code == 302, response.get_data(as_text=True)[:2000]

    def ids(self) -> dict[str, int]:
        from board.models import Decision, Dossier

        with self.app.app_context():
            decision = db.session.scalars(select(Decision)).one()
            reviewed = {r["bid"]: r["identifier"] for r in decision.loads("reviewed")}
            found = {d.identifier: d.id for d in db.session.scalars(select(Dossier))}
            return {"decision": decision.id, "lviv_dossier": found[reviewed[self.lviv]], "pack": found[reviewed[None]]}


def received(smtp) -> list:
    """The messages the SMTP server received; where mail goes through an outbox, the fixture delivers it first."""
    deliver = getattr(smtp, "deliver", None)
    return deliver() if deliver is not None else smtp.messages


def markers(call: Call) -> tuple[list[str], list[str]]:
    """What gives Lviv's scores away (its total, another member's comment on it) and what shows another bid's."""
    lviv, tbilisi = call.totals[call.lviv], call.totals[call.tbilisi]
    assert lviv is not None and tbilisi is not None and lviv != tbilisi
    return [f"{lviv}", "Lviv-note (a) by Bo"], [f"{tbilisi}", "Tbilisi-note (a) by Bo"]


def check(output: str, role: str, expected: object, response, *, lviv: list[str], other: list[str],
          sentence: str | None) -> list[str]:
    """The cell's mismatches, each a sentence naming the output and the role."""
    where = f"{output} as {role}"
    status = response.status_code
    text = text_of(response)
    response.close()
    shows = [m for m in lviv if m in text]
    problems = []
    if expected == SHOWN:
        if status != 200 or not shows:
            problems.append(f"{where}: Lviv's figures should be shown (status {status}, found {shows})")
    elif expected == WITHHELD:
        if status != 200 or shows or not any(m in text for m in other):
            problems.append(f"{where}: Lviv withheld, the others shown (status {status}, Lviv's found: {shows})")
        if sentence is not None and sentence not in text:
            problems.append(f"{where}: the record should say why: {sentence!r}")
    elif expected == NONE:
        if status != 200 or shows:
            problems.append(f"{where}: 200 and no figure of Lviv (status {status}, found {shows})")
    elif expected == REFUSED:
        if status != 403 or shows or (sentence is not None and sentence not in text):
            problems.append(f"{where}: 403 saying {sentence!r} (status {status}, found {shows})")
    elif status != expected or shows:
        problems.append(f"{where}: {expected} expected, got {status} (Lviv's figures found: {shows})")
    return problems


def walk(call: Call, outputs, roles, ids: dict[str, int], sentences: dict[str, str]) -> list[str]:
    lviv, other = markers(call)
    problems = []
    for output, (url, row) in outputs.items():
        target = url.format(slug=SLUG, lviv=call.lviv, **ids)
        for role in roles:
            expected = row.get(role)
            if expected is None:
                continue
            if role in TOKENS:
                response = call.app.test_client().get(target, headers={"Authorization": f"Bearer {call.token(role)}"})
            else:
                response = call.client(role).get(target)
            record = output.startswith("decision") or output.endswith("dossier") or "pack" in output
            problems += check(output, role, expected, response, lviv=lviv, other=other,
                              sentence=sentences.get(TOKENS.get(role, role)) if record else None)
    return problems


def test_every_output_shows_each_role_what_the_rule_allows_of_the_scores(app, event, sf, make, smtp):
    call = Call(app, event, sf, make)
    # While scoring is open: a member with a scorecard still to submit reads no score, on any output.
    call.emails["wcoc_pending"] = "pending@visibility.example.org"
    problems = walk(call, DURING_SCORING, ("wcoc", "wcoc_pending", "board", "admin"), {}, {})
    assert call.first_shown(call.pending) is None, "nothing was shown to her: no first showing is recorded"
    assert call.first_shown(call.anna) is not None
    sf.status(event, "deliberation")
    call.decide()
    title = call.lviv_title()
    sentences = {
        role: f"{title} is withheld from you: you are recused from it ({why})."
        for role, why in (("wcoc_recused", "your federation, UKR, hosts it"),
                          ("board_wcoc_recused", "your federation, UKR, hosts it"),
                          ("wcoc_declared", "declaration of 10 June 2015"))}
    problems += walk(call, OUTPUTS, ROLES, call.ids(), sentences)
    # The emails of the decision carry no score: the bidders are told the outcome only.
    lviv, _ = markers(call)
    messages = received(smtp)
    assert len(messages) == 3
    for message in messages:
        body = message.get_content()
        problems += [f"the email to {message['To']} carries Lviv's {m}" for m in lviv if m in body]
    assert not problems, "\n".join(problems)
    # The record ranks the bids shown among themselves: Lviv led, so to a member recused from it Tbilisi is first
    # (a rank kept as stored would give Lviv's away).
    body = call.client("wcoc_recused").get(f"/api/v1/events/{SLUG}/decision").get_json()
    assert [(r["bid"], r["rank"]) for r in body["ranking"]["bids"]] == [(call.tbilisi, "1"), (call.madrid, "2")]
    assert body["withheld"] == [{"bid_id": call.lviv, "title": title, "reason": sentences["wcoc_recused"]}]
    whole = call.client("board").get(f"/api/v1/events/{SLUG}/decision").get_json()
    assert [(r["bid"], r["rank"]) for r in whole["ranking"]["bids"]] == [
        (call.lviv, "1"), (call.tbilisi, "2"), (call.madrid, "3")]
    assert whole["withheld"] == []
    # The ranking offers the scores CSV to exactly those it answers (scoring.views.CSV_READERS, asked by both).
    for role in ("wcoc", "board", "admin"):
        client = call.client(role)
        offered = "Download every score and comment (CSV)" in client.get(f"/events/{SLUG}/scoring/ranking").get_data(
            as_text=True)
        assert offered == (client.get(f"/events/{SLUG}/scoring/scores.csv").status_code == 200), role
