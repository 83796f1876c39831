"""Where each rule of a call comes from and where Gambit applies it: the table behind the call's articles page.

Pure: built from the `Regulation` alone. Every article shown comes from the call's file (its [citations] and the
`*article` fields of its tables); this module only says, by the key or field that holds the article, where in
Gambit the rule is applied. A key or field this module does not describe is still listed ("not described").
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal

from events.regulation import Citation, Regulation, SourceKind

# Where Gambit applies the rule held by a [citations] key or an article field (by its path in the call file).
APPLIED_AT: dict[str, str] = {
    "citations.players": "Public page of the call; home-match rules follow the players' countries",
    "citations.ioc": "Bid form (applicant) and its compliance check",
    "citations.other_expenses": "Bid form (commitments); obligations table, contract §4, payment milestones",
    "citations.applicant": "Registration, bid form (applicant) and its compliance checks",
    "citations.consultation": "Secretariat records the host federation's answer on a sponsor's bid; bid page",
    "citations.particulars": "The bid form's sections (the contact person and e-mail too), the compliance report, "
                             "the dossier",
    "citations.venue": "Bid form (dates and venue) and its compliance checks; contract",
    "citations.fide_obligations": "Bid form (commitments) and its compliance check",
    "citations.organisational_costs": "Bid form (commitments) and its compliance check",
    "citations.acceptance": "Bid form (commitments) and its compliance check",
    "citations.guarantee": "Bid form (guarantee): whether one is offered, its bank and document",
    "citations.signature": "Bid form (signature), the signed letter upload; contract parties",
    "citations.rejection": "Secretariat rejects a submitted bid with a reason; the bidder is emailed",
    "citations.selection": "Board: the decision record (vote, or the President in consultation with the WCOC)",
    "citations.unforeseen": "Board: the FIDE President's final decision, with its ground (not covered, or an "
                            "unforeseen event) and reason, on a sponsor's bid whose consultation has no answer",
    "citations.supervisor": "Home-match finding and its consequences on the bid page",
    "covered.article": "Amending the call: the call's list of covered items; an amendment by an authority that "
                       "decides only what the regulations do not cover (the President) is refused when it touches one",
    "schedule.article": "Public page's schedule, bid's dates check, contract §2, result of the match",
    "schedule.window_article": "Bid's opening and closing dates check; contract dates",
    "schedule.round_time_article": "Schedule shown on the public page, the bid and the contract",
    "schedule.closing_article": "Bid's closing-ceremony check",
    "prize_fund.article": "Obligations table; prize shares; contract §3",
    "prize_fund.bid_article": "Bid form (money): prize fund present, in cents, at least the minimum, net",
    "fide_contribution.article": "Obligations table; contract; the contribution's minimum",
    "fide_contribution.bid_article": "Bid form (money): the contribution's minimum and net of taxes",
    "prize_split.article": "Prize shares for each outcome; contract §3; the result and prize balances",
    "prize_split.home_article": "Home-match finding; prize shares in a home match",
    "prize_split.advance_article": "Advances before the match; balances due after it (disbursements)",
    "obligations.commercial_rights_article": "Obligations table and payment milestones",
    "obligations.wcoc_budget_article": "Obligations table and payment milestones",
    "obligations.signal_blocker_article": "Obligations table (at cost, up to the cap, if FIDE requires it)",
    "obligations.home_compensation_article": "Obligations table in a home match; direct payment milestone",
    "obligations.travel_article": "Obligations table; direct payment milestones to each team",
    "obligations.stipends_article": "Obligations table; disbursements to the Principals",
    "hotel.article": "Bid form (hotel) and its compliance checks",
    "inspection.article": "Bid form (inspection) and its compliance checks",
    "inspection.also_article": "Bid form (inspection): the same invitation",
    "guarantee.article": "Bid form (guarantee): whether one is offered, its bank and document",
    "payments.article": "Payment schedule with a guarantee; payments recorded against it",
    "payments.contract_article": "The contract; dates the contract sets when no guarantee is offered",
    "fide_bank.article": "FIDE's bank account on the public page and in the contract",
    "scoring.article": "The criteria the WCOC scores and the Board decides on",
    "criteria": "Scorecards, the ranking, the dossier and the board pack",
    "schedule_rules.published_article": "Public page: the schedule as published; the bid's dates check",
    "schedule_rules.closing_end_article": "Bid's closing-ceremony check beside the schedule's (the stricter decides)",
    "pre_match.article": "Days the organizer hosts before game 1, dated from it: the public page, the bid's "
                         "schedule, the dossier and the contract (never a condition of the window of dates)",
    "result.article": "Match result: the earliest game that can decide the regular games; prize balances",
    "result.replacement_article": "Public page: how a player who refuses to play is replaced",
    "deductions.article": "Match result page: deductions from a player's prize balance, with their reason",
    "in_kind.article": "Obligations in kind: the bid page before submitting, the public page, the dossier, the "
                       "contract's annex",
    "undertakings.article": "What the organizer undertakes: the bid page before submitting, the public page, the "
                            "dossier, the contract's annex",
    "consultation.article": "A sponsor's bid only: selected once the host federation's answer is recorded and, "
                            "after a refusal or inability, FIDE accepts the proposal; bid page, Board, dossier, "
                            "pack, API",
    "amendment_authorities.article": "Loading a changed call file: who decided the amendment; the public page's "
                                     "amendments",
}

BEARS_ON = ("bidding", "selection", "contract", "payment")


@dataclass(frozen=True)
class ArticleRow:
    article: str
    path: str
    applied_at: str


@dataclass(frozen=True)
class SourcedRow:
    citation: Citation
    says: str
    values: tuple[tuple[str, str], ...]


def _sort_key(article: str):
    return [int(p) if p.isdigit() else p for p in re.split(r"[.()]", article) if p]


def article_rows(reg: Regulation) -> list[ArticleRow]:
    """Every article the call file cites, with the key or field holding it and where Gambit applies it, in the
    order of the articles. Raises nothing."""
    rows = [ArticleRow(art, f"citations.{key}", APPLIED_AT.get(f"citations.{key}", "not described"))
            for key, art in reg.citations.items()]
    for table in dataclasses.fields(reg):
        value = getattr(reg, table.name)
        if table.name in ("procedure", "regulations_text", "event", "criteria", "articles"):
            continue
        if isinstance(value, tuple):  # a table of entries ([[in_kind]], [[pre_match]], ...): each entry's article
            for i, entry in enumerate(value):
                if not dataclasses.is_dataclass(entry):
                    continue
                for f in dataclasses.fields(entry):
                    if f.name.endswith("article") and getattr(entry, f.name):
                        rows.append(ArticleRow(getattr(entry, f.name),
                                               f"{table.name}.{getattr(entry, 'key', i)}.{f.name}",
                                               APPLIED_AT.get(f"{table.name}.{f.name}", "not described")))
            continue
        if not dataclasses.is_dataclass(value):
            continue
        for f in dataclasses.fields(value):
            if f.name.endswith("article") and getattr(value, f.name):
                path = f"{table.name}.{f.name}"
                rows.append(ArticleRow(getattr(value, f.name), path, APPLIED_AT.get(path, "not described")))
    for c in reg.criteria:
        rows.append(ArticleRow(c.article, f"criteria.{c.key}", f"{c.label}: {APPLIED_AT['criteria']}"))
    return sorted(rows, key=lambda r: (_sort_key(r.article), r.path))


def _show(value) -> str:
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M UTC")
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, date | Decimal | int | str):
        return str(value)
    if isinstance(value, list | tuple):
        return ", ".join(_show(v) for v in value) if all(not isinstance(v, dict) for v in value) else (
            f"{len(value)} entries")
    if isinstance(value, dict):
        return f"{len(value)} entries"
    return str(value)


def field_value(reg: Regulation, path: str) -> str:
    """The value of a field of the call file ("event.bid_deadline") as written there, for display. Raises
    KeyError for a path the file does not have."""
    node = json.loads(reg.snapshot)
    for part in path.split("."):
        node = node[part]
    if path == "event.bid_deadline":
        node = datetime.fromisoformat(node)
    return _show(node)


def sourced_rows(reg: Regulation, kind: SourceKind) -> list[SourcedRow]:
    """The rules of the bidding procedure (or the sanity checks), each with what it says and the values of
    the call file's fields it reads. Raises nothing."""
    table = reg.procedure.rules if kind is SourceKind.PROCEDURE else reg.sanity_checks
    return [SourcedRow(reg.citation(key), rule.says, tuple((p, field_value(reg, p)) for p in rule.fields))
            for key, rule in table.items()]


# ---------------------------------------------------------------------------------- every article of the text
# The call file's [[articles]] table says, for each article of the regulations, what Gambit does with it. Which
# articles the text has is read from the text itself, so the page (and a test) can tell an article left out.

STATUS_LABELS = {
    "applied": "Applied by Gambit",
    "procedure": "Left to the bidding procedure",
    "sanity": "A sanity check",
    "not_applicable": "Does not bear on the call",
}

# An item starts a line ("3.4.1 The draw", "1. Organization", "3.7.1.a If", "- a) President"), or follows the end of
# a sentence on the same line ("... move one. 3.5.2 The games", "... 2015. e) Commitment", "... issues, b) equal").
_NUMBERED = re.compile(r"(?:^|(?<=[.:] )(?=\d+\.\d))(\d+(?:\.\d+)*)(?:\.([a-z]))?\.?[ \t]+(?=\S)", re.M)
_LETTERED = re.compile(r"(?:^(?:- )?|(?<=[.,;] ))([a-z])\)[ \t]", re.M)
# A parent item whose own words are fewer than this, and no lead-in to a list (":"), is a title ("3.5 Time control.").
_TITLE_WORDS = 8


@dataclass(frozen=True)
class TextArticle:
    """An item of the regulations' text: its number as the call file writes it ("3.4.1", "15.2(c)"), its own
    words (up to the next item), and whether it is only the title of the items under it."""

    article: str
    text: str
    is_title: bool


def text_articles(text: str) -> list[TextArticle]:
    """Every numbered and lettered item of the regulations' text, in order; a lettered item belongs to the numbered
    one before it ("15.2" then "a)" is "15.2(a)"; "3.7.1.a" is "3.7.1(a)"). Raises nothing."""
    starts: list[tuple[int, int, str, bool]] = []
    for m in _NUMBERED.finditer(text):
        starts.append((m.start(), m.end(), m.group(1) + (f"({m.group(2)})" if m.group(2) else ""), True))
    for m in _LETTERED.finditer(text):
        starts.append((m.start(), m.end(), m.group(1), False))
    starts.sort()
    items: list[tuple[str, str]] = []
    parent = ""
    for i, (_, end, name, numbered) in enumerate(starts):
        if not numbered:
            name = f"{parent}({name})"
        elif "(" not in name:
            parent = name
        stop = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        items.append((name, " ".join(text[end:stop].split())))
    names = [name for name, _ in items]
    out = []
    for name, own in items:
        has_items = any(other.startswith((f"{name}.", f"{name}(")) for other in names)
        out.append(TextArticle(name, own, has_items and not own.endswith(":") and len(own.split()) < _TITLE_WORDS))
    return out


def articles_to_cover(text: str) -> list[str]:
    """The articles of the text the [[articles]] table must list: every item but a mere title. Raises nothing."""
    return [a.article for a in text_articles(text) if not a.is_title]


def cited_articles(reg: Regulation) -> dict[str, list[str]]:
    """{article: the keys and fields of the call file that cite it}, from [citations] and every table's `article`
    fields (the [[articles]] table itself left out). Raises nothing."""
    out: dict[str, list[str]] = {}
    for row in article_rows(reg):
        out.setdefault(row.article, []).append(row.path)
    return out


def _article_order(article: str) -> tuple[tuple[int, int | str], ...]:
    """Sorts "3.7.1(a)" before "3.7.2" and "4" before "4(a)", numbers as numbers and letters after them."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"[.()]", article) if p)


@dataclass(frozen=True)
class StatusRow:
    article: str
    status: str
    label: str
    where: str
    reason: str
    reading: str
    cited_as: tuple[str, ...]

    @property
    def anchor(self) -> str:
        """An id for the article's reading ("reading-15-2-a")."""
        return "reading-" + "-".join(p for p in re.split(r"[.()]", self.article) if p)


@dataclass(frozen=True)
class ArticleTable:
    rows: list[StatusRow]                   # every article of the call file's table, in the order of the articles
    counts: list[tuple[str, str, int]]      # (status, label, how many), every status, in a fixed order
    left_out: list[str]                     # articles of the text the table does not list
    cited_not_applied: list[str]            # articles the call file cites that the table omits or marks not_applicable
    unknown: list[str]                      # articles of the table the text does not have

    def shown(self, status: str | None) -> list[StatusRow]:
        """The rows of one status, or every row for None or a status the table does not know. Raises nothing."""
        return [r for r in self.rows if r.status == status] if status in STATUS_LABELS else self.rows


def article_table(reg: Regulation) -> ArticleTable:
    """Every article of the call file's [[articles]] table with its status, where Gambit applies it (or why not),
    its reading and the keys of the call file that cite it; the counts per status; and what the table leaves out of
    the text or of the file's citations (when the regulation carries its text). Raises nothing."""
    cited = cited_articles(reg)
    rows = sorted((StatusRow(a.article, a.status, STATUS_LABELS[a.status], a.where, a.reason, a.reading,
                             tuple(cited.get(a.article, ()))) for a in reg.articles),
                  key=lambda r: _article_order(r.article))
    counts = [(s, label, sum(1 for r in rows if r.status == s)) for s, label in STATUS_LABELS.items()]
    listed = {r.article: r.status for r in rows}
    in_text = {a.article for a in text_articles(reg.text)} if reg.text else set()
    left_out = [a for a in articles_to_cover(reg.text) if a not in listed] if reg.text and reg.articles else []
    cited_not_applied = sorted((a for a in cited if listed.get(a, "not_applicable") == "not_applicable"),
                               key=_article_order) if reg.articles else []
    unknown = [r.article for r in rows if r.article not in in_text] if in_text else []
    return ArticleTable(rows, counts, left_out, cited_not_applied, unknown)
