"""The money of a call for bids, as pure arithmetic: Art. 11.1.2, 13, 14 and 15.6.2 for 2015.

Three questions, each answered from the event's `Regulation` and nothing else (no figure, share, date or
article number of the regulations is written in this module):

* `obligations`: what an organizer commits to pay, line by line, to whom, by when (Art. 11.1.2, 13, 14);
* `payment_schedule`: the instalments into FIDE's account when a bank guarantee is offered (Art. 15.6.2),
  or a plain statement that the contract must set them (Art. 15.6.1);
* `prize_shares`: what each player receives for an outcome of the match (Art. 13.1, 13.3, 13.4).

Amounts are `Decimal` in whole cents; the rounding policy is in `finance.money`. No Flask, no database:
the bid page, the dossier, the contract and the payment tracker all call these functions.

Who pays whom. The organizer pays everything. FIDE is the *payee* of the prize fund, of its own
contribution (13.2), of the commercial rights (14.1), of the WCOC budget (14.2) and of the stipends (14.5):
it holds them and pays out prizes and stipends, so a line also names its *beneficiary* (the players, a
principal). The travel contributions (11.1.2) and the home match compensation (14.4) go to the players
directly. The signal blocker (14.3) is equipment the organizer buys at cost, up to a cap: its payee is
the organizer's supplier, and it is never part of a payment to FIDE.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from typing import Literal

from core.money import amount_str, format_day, format_eur, format_share
from events.regulation import InKind, Instalment, Player, Regulation, Undertaking
from finance.money import as_amount, round_cents, share_of, split

DecidedIn = Literal["regular", "tiebreak"]
DECIDED_IN: tuple[DecidedIn, ...] = ("regular", "tiebreak")


def contract_article(reg: Regulation) -> str:
    """The article under which the contract sets the terms of payment ("15.6.1" for 2015). Raises nothing."""
    return reg.payments.contract_article


# --------------------------------------------------------------------------------------------- parties


class PartyKind(enum.StrEnum):
    ORGANIZER = "organizer"
    FIDE = "fide"
    PLAYER = "player"
    # Both players together: the beneficiaries of the prize fund, before the outcome is known.
    PLAYERS = "players"
    PRINCIPAL = "principal"
    # Whoever sells the organizer equipment paid at cost (the signal blocker of 14.3).
    SUPPLIER = "supplier"


@dataclass(frozen=True)
class Party:
    """Someone who pays or is paid. `federation` is the FIDE code of a player, "" for anyone else."""

    kind: PartyKind
    name: str
    federation: str = ""

    def __str__(self) -> str:
        return self.name


def organizer_party() -> Party:
    """The organizer (the bidder once chosen): the payer of every obligation. Raises nothing."""
    return Party(PartyKind.ORGANIZER, "The organizer")


def fide_party(reg: Regulation) -> Party:
    """FIDE, named as the regulation names the organiser of the championship. Raises nothing."""
    return Party(PartyKind.FIDE, reg.event.organiser)


def player_party(player: Player) -> Party:
    """A player as a payee or beneficiary. Raises nothing."""
    return Party(PartyKind.PLAYER, player.name, player.federation)


def players_party(reg: Regulation) -> Party:
    """Both players of the regulation together. Raises nothing."""
    return Party(PartyKind.PLAYERS, " and ".join(p.name for p in reg.players))


# ------------------------------------------------------------------------------------------- bid terms


def _country(value: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"venue_country must be text, got {type(value).__name__}")
    code = value.strip().upper()
    if len(code) != 2 or not code.isascii() or not code.isalpha():
        raise ValueError(f"venue_country must be an ISO 3166-1 alpha-2 code such as 'CN', got {value!r}")
    return code


def _flag(value: bool, name: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return value


@dataclass(frozen=True)
class BidTerms:
    """What a bid offers that the money depends on.

    Amounts are normalised to two decimals and the country code to capitals. Raises TypeError for a float
    amount, a non-text country or a non-bool flag; ValueError for a negative or sub-cent amount or a
    country that is not two letters. Whether the figures meet the regulations (prize fund minimum, FIDE
    share) is for the bid's compliance rules, not for this class: a draft's commitment is still shown.
    """

    prize_fund: Decimal
    fide_contribution: Decimal
    guarantee_offered: bool
    venue_country: str
    # Art. 14.3: "If required by FIDE": the call's recorded answer (events.models.Event.signal_blocker_required),
    # passed by every caller; no default, so nothing assumes FIDE requires it.
    signal_blocker_required: bool

    def __post_init__(self) -> None:
        object.__setattr__(self, "prize_fund", as_amount(self.prize_fund, "prize_fund"))
        object.__setattr__(self, "fide_contribution", as_amount(self.fide_contribution, "fide_contribution"))
        object.__setattr__(self, "guarantee_offered", _flag(self.guarantee_offered, "guarantee_offered"))
        object.__setattr__(self, "venue_country", _country(self.venue_country))
        object.__setattr__(
            self, "signal_blocker_required", _flag(self.signal_blocker_required, "signal_blocker_required"))


def minimum_fide_contribution(reg: Regulation, prize_fund: Decimal | int) -> Decimal:
    """The least contribution to FIDE a bid may offer for this prize fund (Art. 13.2, 15.2(d)).

    The regulation's share of the prize fund, rounded to the cent half up. Raises TypeError for a float,
    ValueError for a negative or sub-cent prize fund.
    """
    return share_of(prize_fund, reg.fide_contribution.min_share_of_prize_fund)


# ---------------------------------------------------------------------------------------------- players


def is_home_match(reg: Regulation, venue_country: str) -> Player | None:
    """The player at home when the match is played in `venue_country` (Art. 13.3, 14.4), else None.

    A match is a home match when the venue's country is the `country` of exactly one player; if both
    players come from that country neither is at a disadvantage and None is returned. Raises TypeError
    or ValueError when `venue_country` is not a two-letter code.
    """
    code = _country(venue_country)
    home = [p for p in reg.players if p.country == code]
    return home[0] if len(home) == 1 else None


def opponent_of(reg: Regulation, player: Player) -> Player:
    """The other player of the match. Raises ValueError if `player` is not one of the regulation's."""
    others = [p for p in reg.players if p != player]
    if player not in reg.players or len(others) != 1:
        raise ValueError(f"{player.name} is not one of the two players of {reg.event.short_title}")
    return others[0]


def player_by_federation(reg: Regulation, federation: str) -> Player:
    """The player of the regulation with this FIDE federation code ("CHN"), case-insensitive.

    Raises ValueError when no player, or more than one, has that code.
    """
    if not isinstance(federation, str):
        raise ValueError(f"a federation is a three-letter FIDE code, got {federation!r}")
    code = federation.strip().upper()
    found = [p for p in reg.players if p.federation == code]
    if len(found) != 1:
        known = ", ".join(f"{p.federation} ({p.name})" for p in reg.players)
        why = "no player" if not found else "more than one player"
        raise ValueError(f"{why} of {reg.event.short_title} plays for {federation!r}; the players are {known}")
    return found[0]


# ------------------------------------------------------------------------------------------ obligations


@dataclass(frozen=True)
class DuePart:
    """A part of an obligation line with its own deadline (the prize fund's 15.6.2 instalments)."""

    due: date
    amount: Decimal
    share: Decimal

    def as_dict(self) -> dict:
        """JSON-ready. Raises nothing."""
        return {"due": self.due.isoformat(), "amount": amount_str(self.amount), "share": str(self.share)}


@dataclass(frozen=True)
class ObligationLine:
    """One financial obligation of the organizer.

    `key` is stable for a regulation ("prize_fund", "stipend_3", "travel_1") so a contract can track the
    line; `article` cites the regulations; `payer` is always the organizer; `payee` receives the money and
    `beneficiary` is who it is finally for (a principal's stipend is paid to FIDE for the principal).
    When `is_cap` is true, `amount` is an upper bound ("up to"): the item is paid at cost. `due` is the
    date by which the whole line must be paid when the regulations fix one, else None; `due_rule` always
    says in words when it is due and under which article. `due_parts` lists the parts of the line due
    earlier, each by its own date (the prize fund paid in instalments: half by 30 June for 2015), () when the
    whole line is due at once.
    """

    key: str
    article: str
    description: str
    payer: Party
    payee: Party
    beneficiary: Party
    amount: Decimal
    is_cap: bool
    due: date | None
    due_rule: str
    due_parts: tuple[DuePart, ...] = ()

    @property
    def first_due(self) -> date | None:
        """The first date by which some of the line must be paid. Raises nothing."""
        return self.due_parts[0].due if self.due_parts else self.due

    @property
    def to_fide(self) -> bool:
        return self.payee.kind is PartyKind.FIDE

    @property
    def to_player(self) -> bool:
        return self.payee.kind is PartyKind.PLAYER

    def as_dict(self) -> dict:
        """JSON-ready: amounts as strings with two decimals, dates ISO. Raises nothing."""
        return {
            "key": self.key, "article": self.article, "description": self.description,
            "payer": _party_dict(self.payer), "payee": _party_dict(self.payee),
            "beneficiary": _party_dict(self.beneficiary), "amount": amount_str(self.amount),
            "is_cap": self.is_cap, "due": self.due.isoformat() if self.due else None, "due_rule": self.due_rule,
            "first_due": self.first_due.isoformat() if self.first_due else None,
            "due_parts": [p.as_dict() for p in self.due_parts],
        }


def _party_dict(p: Party) -> dict:
    return {"kind": p.kind.value, "name": p.name, "federation": p.federation or None}


def _total(lines: Iterable[ObligationLine]) -> Decimal:
    return sum((ln.amount for ln in lines), Decimal("0.00"))


@dataclass(frozen=True)
class Obligations:
    """Every obligation of the organizer for a bid, and the totals.

    Totals (all `Decimal`, two decimals): `total_to_fide`, the fixed amounts paid into FIDE's account
    (prize fund included: FIDE pays the prizes); `total_to_players`, the fixed amounts paid to players
    directly; `total_fixed`, every fixed amount; `total_caps`, the "up to" items at their cap;
    `total_up_to`, the most the organizer can owe in money (fixed amounts plus caps). `in_kind` are the
    obligations met in kind (rooms, travel, cars, trophy...), never priced: they come on top of every total,
    as `totals_note` says; `undertakings` the conditions the organizer accepts besides (never priced either).
    """

    lines: tuple[ObligationLine, ...]
    terms: BidTerms
    home_player: Player | None
    opponent: Player | None
    in_kind: tuple[InKind, ...] = ()
    undertakings: tuple[Undertaking, ...] = ()

    @property
    def totals_note(self) -> str:
        """What the totals include and what they leave out, in words. Raises nothing."""
        arts = sorted(dict.fromkeys(ln.article for ln in self.lines), key=_article_order)
        text = (f"The totals count the payments in money of the lines above (Art. {', '.join(arts)})"
                + (", the items paid at cost at their cap" if self.capped_lines else "") + ".")
        if self.in_kind:
            kinds = ", ".join(dict.fromkeys(i.article for i in self.in_kind))
            text += (f" They leave out the obligations in kind (Art. {kinds}): the organizer provides those on "
                     f"top of every total.")
        return text

    def line(self, key: str) -> ObligationLine:
        """The line with this key. Raises KeyError if there is none (e.g. "home_compensation" away)."""
        for ln in self.lines:
            if ln.key == key:
                return ln
        raise KeyError(key)

    def has(self, key: str) -> bool:
        """Whether a line with this key exists. Raises nothing."""
        return any(ln.key == key for ln in self.lines)

    @property
    def fixed_lines(self) -> tuple[ObligationLine, ...]:
        return tuple(ln for ln in self.lines if not ln.is_cap)

    @property
    def capped_lines(self) -> tuple[ObligationLine, ...]:
        return tuple(ln for ln in self.lines if ln.is_cap)

    @property
    def total_to_fide(self) -> Decimal:
        return _total(ln for ln in self.fixed_lines if ln.to_fide)

    @property
    def total_to_players(self) -> Decimal:
        return _total(ln for ln in self.fixed_lines if ln.to_player)

    @property
    def total_fixed(self) -> Decimal:
        return _total(self.fixed_lines)

    @property
    def total_caps(self) -> Decimal:
        return _total(self.capped_lines)

    @property
    def total_up_to(self) -> Decimal:
        return self.total_fixed + self.total_caps

    def as_dict(self) -> dict:
        """JSON-ready lines and totals. Raises nothing."""
        return {
            "lines": [ln.as_dict() for ln in self.lines],
            "home_player": self.home_player.federation if self.home_player else None,
            "total_to_fide": amount_str(self.total_to_fide),
            "total_to_players": amount_str(self.total_to_players),
            "total_fixed": amount_str(self.total_fixed),
            "total_caps": amount_str(self.total_caps),
            "total_up_to": amount_str(self.total_up_to),
            "totals_include": self.totals_note,
            "in_kind": [{"article": i.article, "title": i.title, "text": i.text} for i in self.in_kind],
            "undertakings": [{"article": u.article, "title": u.title, "text": u.text} for u in self.undertakings],
        }


def _article_order(article: str) -> tuple:
    """Sort "11.1.2" before "13.1" before "14.5" (numerically by part). Raises nothing."""
    parts = []
    for piece in article.replace("(", ".").replace(")", "").split("."):
        parts.append((0, int(piece), "") if piece.isdigit() else (1, 0, piece))
    return tuple(parts)


def _plan(reg: Regulation, terms: BidTerms) -> tuple[Instalment, ...]:
    """The instalments of 15.6.2 that apply to these terms (empty when the contract must set them)."""
    return reg.payments.with_guarantee if terms.guarantee_offered else reg.payments.without_guarantee


def obligations(reg: Regulation, terms: BidTerms) -> Obligations:
    """The organizer's financial obligations for a bid with these terms, one line per payment.

    Lines, in this order: prize fund (13.1), FIDE contribution as offered (13.2), commercial rights
    (14.1), WCOC budget (14.2), signal blocker "up to" its cap when FIDE requires it (14.3), the home
    match compensation to the opponent when the venue is a player's country (14.4), one stipend per
    principal (14.5), one travel contribution per player (11.1.2). Due dates come from the payment plan
    of 15.6.2 that applies (bank guarantee or not); payments to players fall under its "all other financial
    obligations" and get its last date; without a plan, `due` is None and `due_rule` sends to the contract.

    Raises TypeError if `terms` is not a BidTerms. The offered figures are not judged here (a FIDE
    contribution below the minimum share is shown as offered; compliance reports it).
    """
    if not isinstance(terms, BidTerms):
        raise TypeError(f"terms must be BidTerms, got {type(terms).__name__}")
    ob = reg.obligations
    organizer, fide = organizer_party(), fide_party(reg)
    plan = _plan(reg, terms)
    last = plan[-1] if plan else None
    pay_art = reg.payments.article
    no_date = (f"The regulations set no deadline for this payment; the contract sets it "
               f"(Art. {contract_article(reg)}).")
    if last is not None:
        by_last = (f"By {format_day(last.due)}, with the balance of the prize fund and all other financial "
                   f"obligations (Art. {pay_art}).")
        stages = ", ".join(f"{format_share(i.prize_fund_share)} by {format_day(i.due)}" for i in plan)
        prize_rule = f"In instalments into FIDE's account: {stages} (Art. {pay_art})."
        to_player = (f"By {format_day(last.due)}, with all other financial obligations (Art. {pay_art}); "
                     f"paid to the player directly, not into FIDE's account.")
    else:
        by_last = prize_rule = to_player = no_date
    due_last = last.due if last else None

    lines: list[ObligationLine] = []

    def add(key, article, description, payee, amount, *, beneficiary=None, is_cap=False, due=due_last,
            due_rule=by_last, due_parts=()):
        lines.append(ObligationLine(key=key, article=article, description=description, payer=organizer,
                                    payee=payee, beneficiary=beneficiary or payee, amount=round_cents(amount),
                                    is_cap=is_cap, due=due, due_rule=due_rule, due_parts=due_parts))

    net = ", net of any local taxes" if reg.prize_fund.net_of_taxes_required else ""
    # Art. 15.6.2: the prize fund is due in parts (half by 30 June for 2015), each part by its own date; the
    # same split as the payment schedule's, so the table and the schedule agree to the cent.
    prize_parts: tuple[DuePart, ...] = ()
    if len(plan) > 1:
        cut = split(round_cents(terms.prize_fund), [i.prize_fund_share for i in plan])
        prize_parts = tuple(DuePart(i.due, amount, i.prize_fund_share) for i, amount in zip(plan, cut, strict=True))
    add("prize_fund", reg.prize_fund.article, f"Prize fund for the players{net}; FIDE pays out the prizes",
        fide, terms.prize_fund, beneficiary=players_party(reg), due_rule=prize_rule, due_parts=prize_parts)
    add("fide_contribution", reg.fide_contribution.article,
        f"Contribution to FIDE over and above the prize fund{net} "
        f"(at least {format_share(reg.fide_contribution.min_share_of_prize_fund)} of the prize fund)",
        fide, terms.fide_contribution)
    add("commercial_rights", ob.commercial_rights_article,
        f"{format_share(ob.commercial_rights_share)} of the prize fund over and above it, "
        f"to receive the commercial rights (live broadcast not included)",
        fide, share_of(terms.prize_fund, ob.commercial_rights_share))
    add("wcoc_budget", ob.wcoc_budget_article,
        "Budget of the FIDE Commission for World Championships and Olympiads (inspections, meetings, "
        "supervisor's stipend)", fide, ob.wcoc_budget)
    if terms.signal_blocker_required:
        add("signal_blocker", ob.signal_blocker_article,
            f"Device blocking mobile signals around the playing area, if required by FIDE "
            f"(Art. {ob.signal_blocker_article}): FIDE requires it for this call; paid at cost",
            Party(PartyKind.SUPPLIER, "The organizer's supplier"), ob.signal_blocker_cap, is_cap=True, due=None,
            due_rule=(f"Paid at cost by the organizer, within its budget, up to the cap "
                      f"(Art. {ob.signal_blocker_article}); not paid to FIDE."))
    home = is_home_match(reg, terms.venue_country)
    opponent = opponent_of(reg, home) if home else None
    if home is not None and opponent is not None:
        add("home_compensation", ob.home_compensation_article,
            f"Compensation to {opponent.name} for transportation and hospitality for inspection visits "
            f"(the match is played in the country of {home.name})",
            player_party(opponent), ob.home_compensation, due_rule=to_player)
    for i, st in enumerate(ob.stipends, start=1):
        add(f"stipend_{i}", ob.stipends_article, f"Stipend of the {st.principal}, paid through FIDE", fide, st.amount,
            beneficiary=Party(PartyKind.PRINCIPAL, st.principal))
    for i, p in enumerate(reg.players, start=1):
        add(f"travel_{i}", ob.travel_article, f"Contribution towards the travel costs of {p.name}'s team",
            player_party(p), ob.travel_contribution_per_team, due_rule=to_player)
    return Obligations(lines=tuple(lines), terms=terms, home_player=home, opponent=opponent, in_kind=reg.in_kind,
                       undertakings=reg.undertakings)


# ------------------------------------------------------------------------------------- payment schedule


@dataclass(frozen=True)
class InstalmentPart:
    """The part of one obligation line an instalment pays (a whole line, or a share of the prize fund)."""

    line: ObligationLine
    amount: Decimal


@dataclass(frozen=True)
class ScheduledInstalment:
    """One payment into FIDE's account: `amount` is the sum of its `parts`, due by `due`."""

    number: int
    due: date
    article: str
    description: str
    amount: Decimal
    parts: tuple[InstalmentPart, ...]

    @property
    def lines(self) -> tuple[ObligationLine, ...]:
        return tuple(p.line for p in self.parts)

    def as_dict(self) -> dict:
        """JSON-ready. Raises nothing."""
        return {"number": self.number, "due": self.due.isoformat(), "article": self.article,
                "description": self.description, "amount": amount_str(self.amount),
                "parts": [{"key": p.line.key, "article": p.line.article, "amount": amount_str(p.amount)}
                          for p in self.parts]}


@dataclass(frozen=True)
class PaymentSchedule:
    """The payments into FIDE's account under Art. 15.6.2, or none when the contract must set them.

    `instalments` add up exactly to `obligations.total_to_fide`. `direct` are the lines paid to the
    players themselves, `at_cost` the "up to" lines paid at cost; neither is part of an instalment.
    `note` says in words what applies (always set). `has_terms` is false when the regulations set no
    deadlines for these terms.
    """

    article: str
    guarantee_offered: bool
    instalments: tuple[ScheduledInstalment, ...]
    direct: tuple[ObligationLine, ...]
    at_cost: tuple[ObligationLine, ...]
    note: str
    obligations: Obligations

    @property
    def has_terms(self) -> bool:
        return bool(self.instalments)

    @property
    def total(self) -> Decimal:
        return sum((i.amount for i in self.instalments), Decimal("0.00"))

    def as_dict(self) -> dict:
        """JSON-ready. Raises nothing."""
        return {"article": self.article, "guarantee_offered": self.guarantee_offered,
                "has_terms": self.has_terms, "note": self.note, "total": amount_str(self.total),
                "instalments": [i.as_dict() for i in self.instalments],
                "direct": [ln.key for ln in self.direct], "at_cost": [ln.key for ln in self.at_cost]}


def payment_schedule(reg: Regulation, terms: BidTerms) -> PaymentSchedule:
    """The instalments an organizer with these terms pays into FIDE's account (Art. 15.6.2).

    With a bank guarantee the regulation's `payments.with_guarantee` plan applies (for 2015: half of the
    prize fund by 30 June, the balance and every other obligation to FIDE by 31 August); without one,
    `payments.without_guarantee`, and if that is empty (as for 2015) the schedule has no instalments and
    its note says the contract must set the terms (Art. 15.6.1). The prize fund is cut into the plan's
    shares by `finance.money.split` (an odd cent goes to the earlier instalment on a tie); the instalment
    marked `rest_of_obligations` also takes every other fixed line payable to FIDE. Items "up to" a cap are
    paid at cost and lines payable to players are paid to them directly: both are listed apart.

    Raises TypeError if `terms` is not a BidTerms.
    """
    ob = obligations(reg, terms)
    plan = _plan(reg, terms)
    art = reg.payments.article
    at_cost = ob.capped_lines
    direct = tuple(ln for ln in ob.fixed_lines if not ln.to_fide)
    extras: list[str] = []
    if at_cost:
        items = "; ".join(f"{ln.description} (Art. {ln.article}), up to {format_eur(ln.amount)}" for ln in at_cost)
        extras.append(f"Paid at cost by the organizer and not part of any instalment: {items}.")
    if direct:
        arts = ", ".join(dict.fromkeys(ln.article for ln in direct))
        extras.append(f"Paid to the players directly, not into FIDE's account (Art. {arts}): "
                      f"{format_eur(_total(direct))} in all.")

    if not plan:
        if terms.guarantee_offered:
            why = "The regulations set no payment deadlines for this call"
        else:
            why = (f"Art. {art} sets payment deadlines only for an organizer who puts forward a bank guarantee; "
                   f"this bid offers none, so the regulations set no deadlines")
        note = f"{why}: the contract must set the terms of payment (Art. {contract_article(reg)})."
        return PaymentSchedule(article=art, guarantee_offered=terms.guarantee_offered, instalments=(),
                               direct=direct, at_cost=at_cost, note=" ".join([note, *extras]), obligations=ob)

    prize_line = ob.line("prize_fund")
    prize_parts = split(prize_line.amount, [i.prize_fund_share for i in plan])
    others = tuple(ln for ln in ob.fixed_lines if ln.to_fide and ln.key != prize_line.key)
    instalments = []
    for n, (inst, prize_part) in enumerate(zip(plan, prize_parts, strict=True), start=1):
        parts = [InstalmentPart(prize_line, prize_part)]
        if inst.rest_of_obligations:
            parts += [InstalmentPart(ln, ln.amount) for ln in others]
        instalments.append(ScheduledInstalment(
            number=n, due=inst.due, article=art, description=inst.description,
            amount=sum((p.amount for p in parts), Decimal("0.00")), parts=tuple(parts)))
    bank = reg.fide_bank
    kind = "with a bank guarantee" if terms.guarantee_offered else "without a bank guarantee"
    note = (f"Art. {art}, {kind}: these deadlines are to be strictly adhered to. Payments go into FIDE's "
            f"account: {bank.holder}, {bank.bank}, IBAN {bank.iban}, SWIFT {bank.swift}.")
    return PaymentSchedule(article=art, guarantee_offered=terms.guarantee_offered,
                           instalments=tuple(instalments), direct=direct, at_cost=at_cost,
                           note=" ".join([note, *extras]), obligations=ob)


# ------------------------------------------------------------------------------------------ prize shares


@dataclass(frozen=True)
class PrizeLine:
    """One step of a player's prize, with its article. `deducted` lines are subtracted (the advance)."""

    key: str
    article: str
    description: str
    amount: Decimal
    deducted: bool = False


@dataclass(frozen=True)
class PlayerPrize:
    """What one player receives: `total` = `home_compensation` + `share_amount`; `balance` = `total` -
    `advance`, due by `balance_due` (None until the completion date is known)."""

    player: Player
    won: bool
    home_compensation: Decimal
    share: Decimal
    share_amount: Decimal
    total: Decimal
    advance: Decimal
    balance: Decimal
    balance_due: date | None
    lines: tuple[PrizeLine, ...]


@dataclass(frozen=True)
class PrizeShares:
    """The prize fund divided for an outcome. `winner.total + loser.total == prize_fund`, always."""

    prize_fund: Decimal
    decided_in: str
    venue_country: str
    home_player: Player | None
    home_share: Decimal
    shared_balance: Decimal
    winner: PlayerPrize
    loser: PlayerPrize
    completed_on: date | None
    balance_due: date | None
    advance_rule: str
    balance_rule: str

    @property
    def players(self) -> tuple[PlayerPrize, PlayerPrize]:
        return (self.winner, self.loser)

    def for_player(self, federation: str) -> PlayerPrize:
        """The prize of the player with this FIDE code. Raises KeyError if neither player has it."""
        for pp in self.players:
            if pp.player.federation == federation.strip().upper():
                return pp
        raise KeyError(federation)


def prize_shares(reg: Regulation, *, prize_fund: Decimal | int, winner_federation: str, decided_in: DecidedIn,
                 venue_country: str, completed_on: date | None = None) -> PrizeShares:
    """Divide the prize fund between the players for an outcome of the match (Art. 13.1, 13.3, 13.4).

    In a home match (`is_home_match`) the opponent of the home player first receives the regulation's home
    share of the prize fund (rounded half up); the rest is split between winner and loser in the share for
    a win in the regular games or in the tie-breaks (the winner gets an odd cent on a tie; see
    `finance.money.split`). Each player's advance, paid before the start, is deducted; the balance is due
    the regulation's number of days after `completed_on`, or `balance_due` is None when it is not known.

    Raises TypeError for a float prize fund or a `completed_on` that is not a date; ValueError for a
    negative or sub-cent prize fund, a `winner_federation` that is not exactly one player's, a
    `decided_in` other than "regular" or "tiebreak", a venue country that is not two letters, or a prize
    fund so small that a player's prize would not cover the advance already paid.
    """
    fund = as_amount(prize_fund, "prize_fund")
    if decided_in not in DECIDED_IN:
        raise ValueError(f"decided_in must be one of {', '.join(DECIDED_IN)}, got {decided_in!r}")
    if completed_on is not None and not isinstance(completed_on, date):
        raise TypeError(f"completed_on must be a date, got {type(completed_on).__name__}")
    sp = reg.prize_split
    winner = player_by_federation(reg, winner_federation)
    loser = opponent_of(reg, winner)
    venue = _country(venue_country)
    home = is_home_match(reg, venue)
    away = opponent_of(reg, home) if home else None
    home_share = share_of(fund, sp.home_opponent_share) if away else Decimal("0.00")
    shared = fund - home_share
    rate = sp.regular_winner_share if decided_in == "regular" else sp.tiebreak_winner_share
    win_amount, lose_amount = split(shared, [rate, 1 - rate])
    days = sp.balance_due_days_after_completion
    due = completed_on + timedelta(days=days) if completed_on else None
    how = "the regular games" if decided_in == "regular" else "the tie-break games"

    def prize(player: Player, won: bool, share: Decimal, amount: Decimal) -> PlayerPrize:
        comp = home_share if player == away else Decimal("0.00")
        total = comp + amount
        advance = sp.advance_per_player
        if total < advance:
            raise ValueError(
                f"Art. {sp.advance_article}: {player.name}'s prize of {format_eur(total)} would not cover the "
                f"advance of {format_eur(advance)} paid before the start (prize fund {format_eur(fund)})")
        lines = []
        if comp:
            lines.append(PrizeLine("home_share", sp.home_article,
                                   f"{format_share(sp.home_opponent_share)} of the prize fund to the opponent "
                                   f"of the home player, before the split", comp))
        base = "the balance of the prize fund" if away else "the prize fund"
        role = "winner" if won else "loser"
        lines.append(PrizeLine("share", sp.article,
                               f"{format_share(share)} of {base} as the {role}, decided in {how}", amount))
        lines.append(PrizeLine("advance", sp.advance_article, "Advance paid before the start of the match",
                               advance, deducted=True))
        return PlayerPrize(player=player, won=won, home_compensation=comp, share=share, share_amount=amount,
                           total=total, advance=advance, balance=total - advance, balance_due=due,
                           lines=tuple(lines))

    return PrizeShares(
        prize_fund=fund, decided_in=decided_in, venue_country=venue, home_player=home,
        home_share=home_share, shared_balance=shared,
        winner=prize(winner, True, rate, win_amount), loser=prize(loser, False, 1 - rate, lose_amount),
        completed_on=completed_on, balance_due=due,
        advance_rule=(f"{format_eur(sp.advance_per_player)} to each player before the start of the match, "
                      f"deducted from the prize (Art. {sp.advance_article})."),
        balance_rule=(f"The balance within {days} days after the completion of the match"
                      + (f", by {format_day(due)}" if due else "") + f" (Art. {sp.advance_article})."),
    )
