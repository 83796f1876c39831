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
    "citations.particulars": "The bid form's sections, the compliance report, the dossier",
    "citations.venue": "Bid form (dates and venue) and its compliance checks; contract",
    "citations.fide_obligations": "Bid form (commitments) and its compliance check",
    "citations.organisational_costs": "Bid form (commitments) and its compliance check",
    "citations.acceptance": "Bid form (commitments) and its compliance check",
    "citations.guarantee": "Bid form (guarantee): whether one is offered, its bank and document",
    "citations.signature": "Bid form (signature), the signed letter upload; contract parties",
    "citations.rejection": "Secretariat rejects a submitted bid with a reason; the bidder is emailed",
    "citations.selection": "Board: the decision record (vote, or the President in consultation with the WCOC)",
    "citations.supervisor": "Home-match finding and its consequences on the bid page",
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
    "guarantee.article": "Bid form (guarantee); the guarantee's warnings while money is owed",
    "payments.article": "Payment schedule with a guarantee; payments recorded against it",
    "payments.contract_article": "The contract; dates the contract sets when no guarantee is offered",
    "fide_bank.article": "FIDE's bank account on the public page and in the contract",
    "scoring.article": "The criteria the WCOC scores and the Board decides on",
    "criteria": "Scorecards, the ranking, the dossier and the board pack",
    "schedule_rules.published_article": "Public page: the schedule as published; the bid's dates check",
    "schedule_rules.closing_end_article": "Bid's closing-ceremony check beside the schedule's (the stricter decides)",
    "schedule_rules.pre_match_window_article": "Bid's dates check: the days before game 1 fall in the window too",
    "pre_match.article": "Bid's dates check: the days before game 1; the schedule shown with the bid",
    "result.article": "Match result: the earliest game that can decide the regular games; prize balances",
    "result.replacement_article": "Public page: how a player who refuses to play is replaced",
    "deductions.article": "Match result page: deductions from a player's prize balance, with their reason",
    "in_kind.article": "Obligations in kind: the bid page before submitting, the public page, the dossier, the "
                       "contract's annex",
    "undertakings.article": "What the organizer undertakes: the bid page before submitting, the public page, the "
                            "dossier, the contract's annex",
    "consultation.article": "Board: a sponsor's bid is selected only once the host federation was consulted (or "
                            "the President set it aside with a reason); dossier and board pack",
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
        if table.name in ("procedure", "regulations_text", "event", "criteria"):
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
