"""The compliance checks of a bid: the findings that say whether it may be submitted.

Nothing here touches Flask, SQLAlchemy or a session. Every figure, date and article number comes from the
call's `Regulation` (its fields, or `reg.citation(key)`), and each finding says which kind of rule it is: the
regulations' article, the call's bidding procedure, or a sanity check (a warning, never a refusal).

`check_bid` returns one `Finding` for every check of Art. 15.1, 12.2 and 15.2 a–k (plus the Art. 2.2 schedule
and an informational Art. 13.3 home-match finding), whatever the bid holds, so the compliance report is the
same checklist for every bid and a finding's `code` is a stable id ("15.2c.minimum") that does not change when a
regulation renumbers its articles. A finding's `message` states the requirement (it reads the same whether the
bid passes or fails); `Finding.as_text()` adds "Art. …:" and "(you entered …)". The notes on the signatures of
the uploaded letter and guarantee say, likewise, whether they let the bid be submitted.

The bid's data is in bids.data, the form's sections in bids.sections, the JSON shape in bids.shape and the
lifecycle in bids.lifecycle.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from functools import lru_cache
from typing import TypeGuard

from bids.data import APPLICANT_TYPES, NO_GUARANTEE, BidData, RoomRate
from core.findings import Finding, Outcome
from core.money import CENTS, format_day, format_eur, format_share
from core.validators import country_name, is_country_code, is_email
from events.regulation import (
    Citation,
    Player,
    Regulation,
    SourceKind,
)
from finance.money import share_of
from finance.rules import is_home_match, minimum_fide_contribution, opponent_of

# Every article comes from the call's file: the Regulation's fields (reg.schedule.window_article, ...) or its
# [citations] by key (reg.citation("venue")), so a renumbered call is a data change.

_COVER_LABELS = {"prize_fund": "the prize fund", "fide_contribution": "the contribution to FIDE"}


def required_guarantee_amount(reg: Regulation, bid: BidData) -> Decimal | None:
    """What a bank guarantee must at least cover (`reg.guarantee.must_cover`); None while an amount is missing."""
    total = Decimal("0.00")
    for item in reg.guarantee.must_cover:
        value = bid.prize_fund_eur if item == "prize_fund" else bid.fide_contribution_eur
        if not _well_formed(value):
            return None
        total += value
    return total


# --------------------------------------------------------------------------------------- small helpers


def _is_amount(value: object) -> TypeGuard[Decimal]:
    return isinstance(value, Decimal) and value.is_finite()


def _has_cents_only(value: Decimal) -> bool:
    return value >= 0 and value == value.quantize(CENTS)


def _well_formed(value: object) -> TypeGuard[Decimal]:
    """An amount in whole cents, not negative."""
    return _is_amount(value) and _has_cents_only(value)


def _given(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and bool(value.strip())


def _is_whole(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _or_list(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " or " + items[-1]


def _and_list(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _dates_phrase(days: list[date]) -> str:
    """"on 11, 12 or 13 October 2015"; a longer run of days reads "on any day from … to …"."""
    if len(days) > 4:
        return f"on any day from {format_day(days[0])} to {format_day(days[-1])}"
    if len({(d.year, d.month) for d in days}) == 1:
        return "on " + _or_list([format_day(d, "d") for d in days]) + format_day(days[0], " MMMM y")
    return "on " + _or_list([format_day(d) for d in days])


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _text_value(value) -> str:
    return value.strip() if isinstance(value, str) else ("" if value is None else str(value))


def _money_value(value) -> str:
    if not _is_amount(value):
        return "" if value is None else str(value)
    if value != value.quantize(CENTS):
        return f"€{value}"  # format_eur would round away the very digits that are wrong
    return format_eur(value)


@lru_cache(maxsize=1024)
def _article(article: str) -> Citation:
    """An article of the regulations as a Citation: the same few articles are cited by every check of every bid."""
    return Citation("", SourceKind.REGULATION, article)


def _cite(reg: Regulation, key: str, before: str | Citation) -> str | Citation:
    """The citation `key` of the call file; `before`, what the rule cited until the file named it, for a version of
    the call stored before (a bid judged again under it must still be judged). Raises nothing."""
    try:
        return reg.citation(key)
    except KeyError:
        return before


def _finding(code: str, source: str | Citation, field_name: str, ok: bool | None, message: str,
             value: str = "") -> Finding:
    """ok: True -> PASS, False -> FAIL (WARNING for a sanity check: never a refusal), None -> NOT_APPLICABLE.
    `source` is an article from the regulation's fields ("15.2(c)") or a Citation from reg.citation(key)."""
    cite = source if isinstance(source, Citation) else _article(source)
    failed = Outcome.WARNING if cite.kind is SourceKind.SANITY_CHECK else Outcome.FAIL
    outcome = Outcome.NOT_APPLICABLE if ok is None else Outcome.PASS if ok else failed
    return Finding(code, cite.article, field_name, outcome, message, value, cite.label, cite.kind.value)


def _document(code: str, source: str | Citation, field_name: str, attached: bool, bid: BidData,
              message: str) -> Finding:
    if attached:
        outcome = Outcome.PASS
    else:
        outcome = Outcome.FAIL if bid.documents_known else Outcome.PENDING
    cite = source if isinstance(source, Citation) else _article(source)
    return Finding(code, cite.article, field_name, outcome, message, "", cite.label, cite.kind.value)


def is_fide_code(value) -> bool:
    """A FIDE federation code: three capital letters ("UKR")."""
    return isinstance(value, str) and len(value) == 3 and value.isascii() and value.isalpha() and value.isupper()


# ------------------------------------------------------------------------------------------- the checks


def _check_applicant(reg: Regulation, bid: BidData) -> list[Finding]:
    example = reg.players[0]
    applicant = reg.citation("applicant")
    out = [
        _finding("15.1.applicant_type", applicant, "applicant_type", bid.applicant_type in APPLICANT_TYPES,
                 "the applicant must be a member federation of FIDE or a sponsor.", _text_value(bid.applicant_type)),
        _finding("15.1.host_federation", applicant, "host_federation", is_fide_code(bid.host_federation),
                 "the bid must name the federation of the host country by its three-letter FIDE code, "
                 f"for example {example.federation}.", _text_value(bid.host_federation)),
    ]
    # Who to write to about the bid is the call's bidding procedure: the particulars of Art. 15.2 (a) to (k) name no
    # contact person. Whether the address is well formed is Gambit's sanity check (the regulations set no format):
    # a warning to check it, never a refusal.
    particulars = _cite(reg, "contact", reg.citation("particulars"))
    email_given = _given(bid.contact_email)
    out += [
        _finding("15.2.contact_name", particulars, "contact_name", _given(bid.contact_name),
                 "the bid must name a contact person."),
        _finding("15.2.contact_email", particulars, "contact_email", email_given,
                 "the bid must give the contact person's e-mail address."),
        _finding("email_format.contact_email", reg.citation("email_format"), "contact_email",
                 is_email(bid.contact_email) if email_given else None,
                 "the contact person's e-mail address does not read like name@example.org: please check it "
                 "(a warning, not a requirement of the regulations).", _text_value(bid.contact_email)),
    ]
    # Art. 12.2 and 15.1: "No proposed sponsor shall be in conflict with the regulations of the IOC." A sponsor
    # bidding declares it of itself and of any sponsor it brings in; a federation may propose sponsors too, and
    # the bid has no list of sponsors from which we could tell that it proposes none. So every applicant
    # declares: that is simpler to explain and never lets an undeclared sponsor through.
    out.append(_finding(
        "12.2.ioc", reg.citation("ioc"), "ioc_conflict_free", bid.ioc_conflict_free is True,
        "the applicant must declare that neither it nor any sponsor it proposes is in conflict with the "
        "regulations of the International Olympic Committee."))
    return out


def _check_closing_end(reg: Regulation, bid: BidData) -> list[Finding]:
    """The closing rule of the ceremonies article beside the schedule's (where the two disagree, the file's note
    says which decides and why). Its article comes from the file; none when the file has no such rule. The days
    before game 1 are not checked here: they are dated from game 1 and shown with the bid (`Regulation.programme`)."""
    sr = reg.schedule_rules
    opening, closing = bid.opening_date, bid.closing_date
    if sr is None:
        return []
    rule = (f"the closing ceremony takes place not later than "
            f"{_plural(sr.closing_latest_days_after_end, 'day', 'days')} after the end of the event")
    if not (isinstance(opening, date) and isinstance(closing, date) and closing > opening):
        return [_finding("closing.end_of_event", sr.closing_end_article, "closing_date", None, rule + ".")]
    last_day = opening + timedelta(days=reg.last_scheduled_day_offset)
    days_after = (closing - last_day).days
    allowed_by_schedule = (closing - opening).days in reg.closing_offsets()
    ok = 1 <= days_after <= sr.closing_latest_days_after_end
    message = (f"{rule} (the last day of the schedule, {format_day(last_day)}), so by "
               f"{format_day(last_day + timedelta(days=sr.closing_latest_days_after_end))}")
    if allowed_by_schedule and not ok:
        message += f". {sr.closing_conflict_note}"
    return [_finding("closing.end_of_event", sr.closing_end_article, "closing_date", ok,
                     message + ("" if message.endswith(".") else "."),
                     f"{format_day(closing)}, {_plural(days_after, 'day', 'days')} after the last day")]


def _check_dates(reg: Regulation, bid: BidData) -> list[Finding]:
    s = reg.schedule
    art = s.window_article
    opening, closing = bid.opening_date, bid.closing_date
    opening_ok = isinstance(opening, date) and opening in reg.possible_opening_dates()
    closing_known = isinstance(closing, date)
    in_order = closing > opening if isinstance(opening, date) and isinstance(closing, date) else None
    out = [
        _finding("15.2a.opening_date", art, "opening_date", opening_ok,
                 f"the opening ceremony must be {_dates_phrase(reg.possible_opening_dates())}, so that the "
                 f"programme of Art. {s.article} and the closing ceremony fit between "
                 f"{format_day(s.window_start)} and {format_day(s.window_end)}.",
                 format_day(opening) if isinstance(opening, date) else ""),
        _finding("15.2a.closing_date", art, "closing_date",
                 isinstance(closing, date) and s.window_start <= closing <= s.window_end,
                 f"the closing ceremony must be between {format_day(s.window_start)} and "
                 f"{format_day(s.window_end)}.",
                 format_day(closing) if closing_known else ""),
        _finding("15.2a.order", art, "closing_date", in_order,
                 "the closing ceremony must come after the opening ceremony.",
                 format_day(closing) if closing_known else ""),
    ]
    offsets = reg.closing_offsets()
    message = (f"the closing ceremony must be {_or_list([str(n) for n in offsets])} days after the opening "
               f"ceremony, so that the {len(s.days)}-day programme"
               + (f" of Art. {s.article}" if s.article != s.closing_article else "")
               + (" (tie-breaks included)" if "tiebreak" in s.days else "") + " fits before it")
    value = ""
    ok = None
    if in_order and isinstance(opening, date) and isinstance(closing, date):  # in order: both are dates
        days = (closing - opening).days
        ok = days in offsets
        message += ("; with your opening date that is "
                    + _dates_phrase([opening + timedelta(days=n) for n in offsets]).removeprefix("on "))
        value = f"{format_day(closing)}, {_plural(days, 'day', 'days')} after the opening ceremony"
    out.append(_finding("2.2.closing", s.closing_article, "closing_date", ok, message + ".", value))
    return out


def _check_venue(reg: Regulation, bid: BidData) -> list[Finding]:
    example = reg.players[-1].country
    return [
        _finding("15.2b.venue_name", reg.citation("venue"), "venue_name", _given(bid.venue_name),
                 "the bid must name the proposed venue."),
        _finding("15.2b.venue_city", reg.citation("venue"), "venue_city", _given(bid.venue_city),
                 "the bid must give the city of the proposed venue."),
        _finding("15.2b.venue_country", reg.citation("venue"), "venue_country", is_country_code(bid.venue_country),
                 "the bid must give the country of the proposed venue: choose it from the list of countries (a "
                 f"file or the API gives its two-letter code, for example {example} for {country_name(example)}).",
                 _text_value(bid.venue_country)),
    ]


def _check_prize_fund(reg: Regulation, bid: BidData) -> list[Finding]:
    pf = reg.prize_fund
    art = pf.bid_article
    prize = bid.prize_fund_eur
    given = _is_amount(prize)
    value = _money_value(prize)
    net = " net of local taxes" if pf.net_of_taxes_required else ""
    return [
        _finding("15.2c.present", art, "prize_fund_eur", given,
                 "the bid must propose a prize fund for the players."),
        _finding("15.2c.cents", _cite(reg, "amount_format", art), "prize_fund_eur",
                 _has_cents_only(prize) if _is_amount(prize) else None,
                 "the prize fund must be an amount in euros with at most two decimals.", value),
        _finding("15.2c.minimum", art, "prize_fund_eur", prize >= pf.minimum if _well_formed(prize) else None,
                 f"the prize fund must be at least {format_eur(pf.minimum)}{net}.", value),
        # Not a rule: Art. 15.2(c) sets a minimum only. A figure above the sanity bound is a warning to check it.
        _finding("15.2c.maximum", reg.citation("prize_fund_maximum"), "prize_fund_eur",
                 prize <= pf.maximum if _well_formed(prize) else None,
                 f"a prize fund above {format_eur(pf.maximum)} is unusual: please check the figure "
                 "(a warning, not a requirement of the regulations).", value),
        _finding("15.2c.net_of_taxes", art, "amounts_net_of_taxes",
                 bid.amounts_net_of_taxes is True if pf.net_of_taxes_required else None,
                 "the prize fund must be offered net of any applicable local taxes."),
    ]


def _check_fide_contribution(reg: Regulation, bid: BidData) -> list[Finding]:
    fc = reg.fide_contribution
    art = fc.bid_article
    prize, contribution = bid.prize_fund_eur, bid.fide_contribution_eur
    given = _is_amount(contribution)
    value = _money_value(contribution)
    share = format_share(fc.min_share_of_prize_fund)
    message = f"the contribution to FIDE must be at least {share} of the prize fund"
    ok = None
    if _well_formed(prize):
        required = minimum_fide_contribution(reg, prize)  # rounded half up to the cent, as finance/ says
        message += f", {format_eur(required)} for a prize fund of {format_eur(prize)}"
        if _well_formed(contribution):
            ok = contribution >= required
    message += f", over and above it and net of local taxes (Art. {fc.article})."
    return [
        _finding("15.2d.present", art, "fide_contribution_eur", given,
                 "the bid must state the contribution to FIDE."),
        _finding("15.2d.cents", _cite(reg, "amount_format", art), "fide_contribution_eur",
                 _has_cents_only(contribution) if _is_amount(contribution) else None,
                 "the contribution to FIDE must be an amount in euros with at most two decimals.", value),
        _finding("15.2d.minimum", art, "fide_contribution_eur", ok, message, value),
        # Art. 13.2 asks the contribution net of taxes whatever the prize fund's setting says; the bid answers
        # both with the one statement `amounts_net_of_taxes`, so a "no" fails 15.2(c) and 15.2(d) alike.
        _finding("15.2d.net_of_taxes", art, "amounts_net_of_taxes", bid.amounts_net_of_taxes is True,
                 "the contribution to FIDE must be paid net of any applicable local taxes."),
    ]


def _check_commitments(reg: Regulation, bid: BidData) -> list[Finding]:
    return [
        _finding("15.2e.commitment", reg.citation("fide_obligations"), "commits_fide_obligations",
                 bid.commits_fide_obligations is True,
                 "the applicant must commit to cover all financial obligations to FIDE of "
                 f"Art. {reg.article('other_expenses')}."),
        _finding("15.2f.commitment", reg.citation("organisational_costs"), "commits_organisational_costs",
                 bid.commits_organisational_costs is True,
                 "the applicant must commit to cover all organisational costs of the match."),
    ]


def _check_acceptance(reg: Regulation, bid: BidData) -> list[Finding]:
    return [
        _finding("15.2h.acceptance", reg.citation("acceptance"), "accepts_regulations", bid.accepts_regulations is True,
                 "the applicant must accept the regulations of the match without any reservations."),
    ]


def _room_rate_problems(rates) -> list[str]:
    problems = []
    for i, rate in enumerate(rates, start=1):
        if not isinstance(rate, RoomRate):
            problems.append(f"rate {i}: not a room rate")
            continue
        name = rate.room_type.strip() if _given(rate.room_type) else f"rate {i}"
        if not _given(rate.room_type):
            problems.append(f"rate {i} has no room type")
        price = rate.eur_per_night
        if not _is_amount(price):
            problems.append(f"{name} has no price")
        elif price <= 0 or not _has_cents_only(price):
            problems.append(f"{name} at {_money_value(price)}")
    return problems


def _check_hotel(reg: Regulation, bid: BidData) -> list[Finding]:
    h = reg.hotel
    art = h.article
    stars = bid.hotel_stars
    category_ok = _is_whole(stars) and 1 <= stars <= 5
    stars_value = _plural(stars, "star", "stars") if _is_whole(stars) else _text_value(stars)
    rates = tuple(bid.room_rates or ())
    problems = _room_rate_problems(rates)
    return [
        _finding("15.2g.stars", _cite(reg, "hotel_category", art), "hotel_stars", category_ok,
                 "the bid must give the category of the official hotel, a whole number of stars from 1 to 5.",
                 stars_value),
        _finding("15.2g.minimum", art, "hotel_stars",
                 stars >= h.min_stars if _is_whole(stars) and category_ok else None,
                 f"the official hotel must have at least {_plural(h.min_stars, 'star', 'stars')}.", stars_value),
        # "and name if possible": asked for, never required.
        _finding("15.2g.hotel_name", art, "hotel_name", True if _given(bid.hotel_name) else None,
                 "the bid should name the official hotel, if possible.", _text_value(bid.hotel_name)),
        _finding("15.2g.room_rates", art, "room_rates", bool(rates) and not problems,
                 "the bid must offer special room rates for visitors, meals included: at least one, each with a "
                 "room type and a price per night above zero, in euros and cents.",
                 "; ".join(problems)),
    ]


def _check_inspection(reg: Regulation, bid: BidData) -> list[Finding]:
    i = reg.inspection
    n = bid.wcoc_inspectors_invited
    members = _plural(i.min_inspectors, "member", "members")
    return [
        _finding("15.2i.inspectors", i.article, "wcoc_inspectors_invited", _is_whole(n) and n >= i.min_inspectors,
                 f"the bid must invite at least {members} of the WCOC to inspect the proposed venue and the other "
                 f"conditions, as Art. {i.also_article} also requires.", _text_value(n)),
        _finding("15.2i.expenses", i.article, "inspection_expenses_covered", bid.inspection_expenses_covered is True,
                 f"the bidder must pay all expenses of the inspection: the travel and hotel expenses, and, as "
                 f"Art. {i.also_article} requires, every other expense."),
    ]


def _check_guarantee(reg: Regulation, bid: BidData) -> list[Finding]:
    g = reg.guarantee
    art = g.article
    offered = bid.guarantee_offered
    bg = bid.bank_guarantee if offered and bid.bank_guarantee is not None else NO_GUARANTEE
    out = [
        _finding("15.2j.offered", art, "bank_guarantee", True if offered else None,
                 f"a bank guarantee is optional; with one, the payment deadlines of Art. {reg.payments.article} "
                 "apply."),
        _finding("15.2j.bank", art, "bank_guarantee.bank", _given(bg.bank) if offered else None,
                 "a bank guarantee must name the bank that gives it.", _text_value(bg.bank)),
    ]
    if offered:
        out.append(_document("15.2j.document", art, "has_guarantee_document", bid.has_guarantee_document, bid,
                             "the bank guarantee must be attached."))
    else:
        out.append(_finding("15.2j.document", art, "has_guarantee_document", None,
                            "the bank guarantee must be attached."))

    amount = bg.amount_eur
    amount_given = _well_formed(amount)
    required = required_guarantee_amount(reg, bid)
    covers = [_COVER_LABELS[c] for c in g.must_cover]
    if covers:
        message = f"a bank guarantee must cover at least {_and_list(covers)}"
        if required is not None:
            message += f", {format_eur(required)}"
        message += "."
    else:
        message = "a bank guarantee must state its amount in euros."
    ok = None
    if offered and not amount_given:
        ok = False
    # While what it must cover is missing, 15.2(c)/(d) say so. (Offered, a guarantee here has a well-formed amount.)
    elif offered and required is not None and _well_formed(amount):
        ok = amount >= required
    # Art. 15.2(j) asks only for "any bank guarantees as described in the bidding procedure": what it must
    # cover and how long it stays valid are the procedure's terms, cited as such.
    terms = reg.citation("guarantee_terms")
    out.append(_finding("15.2j.amount", terms, "bank_guarantee.amount_eur", ok, message, _money_value(amount)))

    last = reg.last_payment_deadline
    valid_until = bg.valid_until if isinstance(bg.valid_until, date) else None
    if g.valid_past_last_deadline and last is not None:
        message = (f"a bank guarantee must remain valid after {format_day(last)}, the last payment deadline of "
                   f"Art. {reg.payments.article}.")
        ok = (valid_until is not None and valid_until > last) if offered else None
    else:
        message = "a bank guarantee should state until when it is valid."
        ok = (True if valid_until is not None else None) if offered else None
    out.append(_finding("15.2j.valid_until", terms, "bank_guarantee.valid_until", ok, message,
                        format_day(valid_until) if valid_until else ""))
    return out


def _signed(bid: BidData) -> date | None:
    return bid.signed_on if isinstance(bid.signed_on, date) else None


def judgement_turns_on(bid: BidData) -> tuple[date, ...]:
    """The days on which `check_bid`'s findings for `bid` may differ from the day before: the only rule that reads
    `today` is the signing date's (a date in the future is refused until that day comes). A report judged before
    such a day no longer holds from it on (bids.judged). Raises nothing."""
    signed = _signed(bid)
    return (signed,) if signed is not None else ()


def _check_signature(reg: Regulation, bid: BidData, today: date) -> list[Finding]:
    sig = reg.citation("signature")
    signed = _signed(bid)
    return [
        _finding("15.2k.applicant_name", sig, "applicant_name", _given(bid.applicant_name),
                 "the bid must give the applicant's name."),
        _finding("15.2k.signatory_name", sig, "signatory_name", _given(bid.signatory_name),
                 "the bid must give the name of the person who signs it."),
        _finding("15.2k.signatory_position", sig, "signatory_position", _given(bid.signatory_position),
                 "the bid must give the position of the person who signs it."),
        _finding("15.2k.signed_on", _cite(reg, "signing_date", sig), "signed_on",
                 signed is not None and signed <= today,
                 "the bid must give the date it was signed, which cannot be in the future.",
                 format_day(signed) if signed else ""),
        _document("15.2k.signed_letter", sig, "has_signed_letter", bid.has_signed_letter, bid,
                  "the signed and authenticated letter of application must be attached."),
    ]


def home_match(reg: Regulation, bid: BidData) -> Player | None:
    """The player in whose country the proposed venue lies (Art. 13.3, 14.4, 7.4.4), or None."""
    if not is_country_code(bid.venue_country):
        return None
    return is_home_match(reg, bid.venue_country)


def _home_share(reg: Regulation, bid: BidData) -> str:
    """"5% of the prize fund (€10,000.00)"; without the figure while the prize fund is missing."""
    sp = reg.prize_split
    text = f"{format_share(sp.home_opponent_share)} of the prize fund"
    if _well_formed(bid.prize_fund_eur):
        text += f" ({format_eur(share_of(bid.prize_fund_eur, sp.home_opponent_share))})"
    return text


def home_match_consequences(reg: Regulation, bid: BidData) -> list[str]:
    """What a home match means, one sentence each with its article; [] when the venue is neutral or unknown."""
    home = home_match(reg, bid)
    if home is None:
        return []
    sp, ob = reg.prize_split, reg.obligations
    opponent = opponent_of(reg, home).name
    return [
        f"Art. {sp.home_article}: {opponent} first receives {_home_share(reg, bid)}; the balance is shared "
        f"under Art. {sp.article}.",
        f"Art. {ob.home_compensation_article}: the organizer pays {opponent} {format_eur(ob.home_compensation)} "
        "as compensation for transportation and hospitality for inspection visits.",
        f"Art. {reg.article('supervisor')}: {opponent} may suggest which member of the FIDE Presidential Board is "
        "to be FIDE Supervisor.",
    ]


def _home_match_finding(reg: Regulation, bid: BidData) -> Finding:
    """Informational: PASS when the venue is in a player's country (with what follows), n/a otherwise."""
    sp, ob = reg.prize_split, reg.obligations
    home = home_match(reg, bid)
    if home is None:
        rules = f"the home-match rules of Art. {sp.home_article} and {ob.home_compensation_article}"
        message = (f"the venue is not in the country of either player, so {rules} do not apply."
                   if is_country_code(bid.venue_country) else
                   f"{rules} apply when the venue is in the country of a player; the venue's country is not "
                   "known yet.")
        return _finding("13.3.home_match", sp.home_article, "venue_country", None, message,
                        _text_value(bid.venue_country))
    opponent = opponent_of(reg, home).name
    message = (f"the venue is in {country_name(home.country)}, the country of {home.name}, so {opponent} first "
               f"receives {_home_share(reg, bid)} before the balance is shared under Art. {sp.article}, is paid "
               f"{format_eur(ob.home_compensation)} for inspection visits (Art. {ob.home_compensation_article}) "
               f"and may suggest the FIDE Supervisor (Art. {reg.article('supervisor')}).")
    return _finding("13.3.home_match", sp.home_article, "venue_country", True, message,
                    _text_value(bid.venue_country))


def check_bid(reg: Regulation, bid: BidData, *, today: date) -> list[Finding]:
    """Every compliance finding of a bid against its call's regulation, in the order of the articles.

    One finding per check of Art. 15.1, 12.2, 15.2 a–k and 2.2, each PASS, FAIL, NOT_APPLICABLE (a check that
    depends on something missing, or an optional item not offered) or PENDING (a document the JSON import
    cannot carry), then the informational Art. 13.3 home-match finding. `today` judges the signing date.
    Raises nothing for a partial or malformed bid: that is what the findings are for.
    """
    return [
        *_check_applicant(reg, bid),
        *_check_dates(reg, bid),
        *_check_closing_end(reg, bid),
        *_check_venue(reg, bid),
        *_check_prize_fund(reg, bid),
        *_check_fide_contribution(reg, bid),
        *_check_commitments(reg, bid),
        *_check_hotel(reg, bid),
        *_check_acceptance(reg, bid),
        *_check_inspection(reg, bid),
        *_check_guarantee(reg, bid),
        *_check_signature(reg, bid, today),
        _home_match_finding(reg, bid),
    ]


def failures(findings: Iterable[Finding]) -> list[Finding]:
    """The findings that failed, in order."""
    return [f for f in findings if f.outcome is Outcome.FAIL]


def pending(findings: Iterable[Finding]) -> list[Finding]:
    """The findings still waiting for a document, in order."""
    return [f for f in findings if f.outcome is Outcome.PENDING]


def is_compliant(findings: Iterable[Finding]) -> bool:
    """True when nothing failed and no document is pending: the bid can be submitted."""
    return not any(f.blocks_submission for f in findings)


def findings_by_field(findings: Iterable[Finding]) -> dict[str, list[Finding]]:
    """The failed findings, and the sanity checks' warnings, keyed by form field, for showing each message beside
    its field (a warning asks to check the figure; it never blocks)."""
    out: dict[str, list[Finding]] = {}
    for f in findings:
        if f.outcome in (Outcome.FAIL, Outcome.WARNING):
            out.setdefault(f.field, []).append(f)
    return out


# ------------------------------------------------------------------------------------------- signatures

# Whose digital signature is read on upload: the letter of application and the bank guarantee.
SIGNED_KINDS = ("signed_letter", "guarantee")
PROCEDURE_LABEL = "the call's bidding procedure"


@dataclass(frozen=True)
class SignatureNote:
    """What the signatures of one uploaded document amount to, in words, and whether the call's bidding
    procedure lets the bid be submitted with it."""

    kind: str
    label: str
    article: str
    words: str
    good: bool
    blocks: bool

    def as_text(self) -> str:
        text = f"{self.label} (Art. {self.article}): {self.words}."
        if not self.good:
            text += (f" Under {PROCEDURE_LABEL}, " + ("the bid cannot be submitted until a letter with a good "
                     "signature is attached." if self.blocks else "this is reported to the reviewers; it does not "
                     "stop the submission."))
        return text


def signature_notes(reg: Regulation, documents: Mapping[str, tuple[str, str, str, bool]]) -> list[SignatureNote]:
    """One note per attached document whose signature is read (SIGNED_KINDS), from `documents`: kind ->
    (label, article, words, good). A letter that is not well signed blocks the submission only where the call's
    bidding procedure says "block" (`reg.signatures.unsigned_letter`); a guarantee's signature is reported only."""
    out = []
    for kind in SIGNED_KINDS:
        if kind not in documents:
            continue
        label, article, words, good = documents[kind]
        blocks = not good and kind == "signed_letter" and reg.signatures.unsigned_letter == "block"
        out.append(SignatureNote(kind, label, article, words, good, blocks))
    return out
