"""Properties of the compliance rules: a bid meeting every minimum passes; any one violation fails exactly
the article it violates, and no other."""

from __future__ import annotations

import dataclasses
from datetime import date, timedelta
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bids import rules
from bids.data import APPLICANT_TYPES, BankGuarantee, BidData, RoomRate
from bids.rules import check_bid, failures, is_compliant, pending
from bids.shape import bid_from_json, bid_to_json
from core.findings import Outcome
from core.validators import is_country_code
from events.regulation import Regulation
from finance.rules import minimum_fide_contribution
from tests.bids.factories import guarantee_for, regulation, today_for, valid_bid

D = Decimal
CENT = D("0.01")
REG = regulation()
# Another call: a longer window, tougher minimums, one closing day only, a guarantee for the prize fund alone.
OTHER = dataclasses.replace(
    REG,
    schedule=dataclasses.replace(REG.schedule, window_start=date(2015, 9, 1), window_end=date(2015, 11, 30),
                                 closing_days_after_last_day=(1,)),
    prize_fund=dataclasses.replace(REG.prize_fund, minimum=D("350000.00"), net_of_taxes_required=False),
    fide_contribution=dataclasses.replace(REG.fide_contribution, min_share_of_prize_fund=D("0.175")),
    hotel=dataclasses.replace(REG.hotel, min_stars=5),
    inspection=dataclasses.replace(REG.inspection, min_inspectors=3),
    guarantee=dataclasses.replace(REG.guarantee, must_cover=("prize_fund",)),
)
REGS = [pytest.param(REG, id="fwwcm-2015"), pytest.param(OTHER, id="made-up")]

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def cents(lo: Decimal, hi: Decimal) -> st.SearchStrategy[Decimal]:
    return st.integers(int(lo * 100), int(hi * 100)).map(lambda n: D(n).scaleb(-2))


names = st.from_regex(r"[A-Za-z][A-Za-z .'-]{0,30}[A-Za-z]", fullmatch=True)
emails = st.from_regex(r"[a-z][a-z0-9_]{0,5}(\.[a-z0-9]{1,5}){0,2}@[a-z]{1,10}\.(org|com|ua|cn)", fullmatch=True)
blank = st.sampled_from([None, "", "   "])


def covering_guarantee(reg: Regulation, bid: BidData) -> BankGuarantee:
    """The bid's guarantee (or a new one) with its amount set to exactly what it must cover."""
    base = bid.bank_guarantee if bid.guarantee_offered else guarantee_for(reg, D(0), D(0))
    amount = rules.required_guarantee_amount(reg, bid)
    return dataclasses.replace(base, amount_eur=amount if amount is not None else base.amount_eur)


@st.composite
def valid_bids(draw, reg: Regulation) -> BidData:
    today = today_for(reg)
    end = reg.schedule.window_end
    # Every dated rule: the window (15.2(a)) and both closing rules (2.2, 10.3).
    opening = draw(st.sampled_from(reg.possible_opening_dates()))
    closing = opening + timedelta(days=draw(st.sampled_from(
        [n for n in reg.allowed_closing_offsets() if opening + timedelta(days=n) <= end])))
    prize = draw(cents(reg.prize_fund.minimum, reg.prize_fund.maximum))
    least = minimum_fide_contribution(reg, prize)
    fide = draw(cents(least, least + D("100000")))
    bid = valid_bid(
        reg,
        applicant_type=draw(st.sampled_from(APPLICANT_TYPES)),
        applicant_name=draw(names),
        host_federation=draw(st.from_regex(r"[A-Z]{3}", fullmatch=True)),
        contact_name=draw(names),
        contact_email=draw(emails),
        opening_date=opening,
        closing_date=closing,
        venue_name=draw(names),
        venue_city=draw(names),
        venue_country=draw(st.sampled_from(["UA", "CN", "RU", "GB", "FR", "IN", "US", "AE", "XK"])),
        prize_fund_eur=prize,
        fide_contribution_eur=fide,
        hotel_name=draw(st.none() | names),
        hotel_stars=draw(st.integers(reg.hotel.min_stars, 5)),
        room_rates=tuple(draw(st.lists(st.builds(RoomRate, names, cents(CENT, D("5000"))), min_size=1,
                                       max_size=4))),
        wcoc_inspectors_invited=draw(st.integers(reg.inspection.min_inspectors, 12)),
        signatory_name=draw(names),
        signatory_position=draw(names),
        signed_on=today - timedelta(days=draw(st.integers(0, 400))),
        has_guarantee_document=draw(st.booleans()),
    )
    if draw(st.booleans()):
        g = covering_guarantee(reg, bid)
        g = dataclasses.replace(
            g, amount_eur=g.amount_eur + draw(cents(D(0), D("1000000"))),
            valid_until=reg.last_payment_deadline + timedelta(days=draw(st.integers(1, 400))))
        bid = dataclasses.replace(bid, bank_guarantee=g, has_guarantee_document=True)
    else:
        bid = dataclasses.replace(bid, bank_guarantee=draw(st.sampled_from([None, BankGuarantee(offered=False)])))
    return bid


# ------------------------------------------------------------------------------------------ violations
# Each takes (draw, reg, bid) and returns (field overrides, the articles they must fail). A violation changes
# what it must to stay a single violation: a lower prize fund comes with the contribution and guarantee that
# fit it, so only the prize fund's article fails.


def _money(reg, bid, *, prize, fide=None):
    if fide is None:
        fide = minimum_fide_contribution(reg, prize) if prize is not None and prize >= 0 else bid.fide_contribution_eur
    changed = dataclasses.replace(bid, prize_fund_eur=prize, fide_contribution_eur=fide)
    if bid.guarantee_offered:
        changed = dataclasses.replace(changed, bank_guarantee=covering_guarantee(reg, changed))
    return {f: getattr(changed, f) for f in ("prize_fund_eur", "fide_contribution_eur", "bank_guarantee")}


def prize_below_minimum(draw, reg, bid):
    return _money(reg, bid, prize=draw(cents(D(0), reg.prize_fund.minimum - CENT))), {reg.prize_fund.bid_article}


def prize_above_maximum(draw, reg, bid):
    prize = draw(cents(reg.prize_fund.maximum + CENT, D("999999999999.99")))
    return _money(reg, bid, prize=prize), set()


def prize_missing(draw, reg, bid):
    return {"prize_fund_eur": None}, {reg.prize_fund.bid_article}


def _article_of(reg, key: str, article: str) -> str:
    """The article a check cites: the call file's citation `key` ("" when that is the bidding procedure's, not an
    article's), or `article` for a call file that names no such citation."""
    try:
        return reg.citation(key).article
    except KeyError:
        return article


def prize_with_fractions_of_a_cent(draw, reg, bid):
    extra = D(draw(st.integers(1, 9).filter(lambda n: n % 10))).scaleb(-3)
    # How an amount is written is the bidding procedure's form, not the article's (which sets the minimum).
    return {"prize_fund_eur": bid.prize_fund_eur + extra}, {_article_of(reg, "amount_format",
                                                                         reg.prize_fund.bid_article)}


def not_net_of_taxes(draw, reg, bid):
    articles = {reg.fide_contribution.bid_article}
    if reg.prize_fund.net_of_taxes_required:
        articles.add(reg.prize_fund.bid_article)  # one answer for both amounts: "no" fails both
    return {"amounts_net_of_taxes": draw(st.sampled_from([False, None]))}, articles


def fide_below_share(draw, reg, bid):
    least = minimum_fide_contribution(reg, bid.prize_fund_eur)
    fide = draw(cents(D(0), least - CENT))
    return _money(reg, bid, prize=bid.prize_fund_eur, fide=fide), {reg.fide_contribution.bid_article}


def fide_missing(draw, reg, bid):
    return {"fide_contribution_eur": None}, {reg.fide_contribution.bid_article}


def opening_outside_window(draw, reg, bid):
    possible = reg.possible_opening_dates()
    shift = draw(st.integers(-60, 60).filter(
        lambda n: reg.schedule.window_start + timedelta(days=n) not in possible))
    opening = reg.schedule.window_start + timedelta(days=shift)
    closing = opening + timedelta(days=draw(st.sampled_from(reg.closing_offsets())))
    return {"opening_date": opening, "closing_date": closing}, {reg.schedule.window_article} | _dated_rules(
        reg, opening, closing)


def _dated_rules(reg, opening, closing) -> set[str]:
    """The article of the ceremonies' closing rule (10.3 for 2015) when these dates also break it."""
    sr = reg.schedule_rules
    if sr is None:
        return set()
    after_last = (closing - opening).days - reg.last_scheduled_day_offset
    if closing > opening and not (1 <= after_last <= sr.closing_latest_days_after_end):
        return {sr.closing_end_article}
    return set()


def closing_off_schedule(draw, reg, bid):
    room = (reg.schedule.window_end - bid.opening_date).days
    days = draw(st.integers(1, room).filter(lambda n: n not in reg.closing_offsets()))
    closing = bid.opening_date + timedelta(days=days)
    return {"closing_date": closing}, {reg.schedule.closing_article} | _dated_rules(reg, bid.opening_date, closing)


def closing_not_after_opening(draw, reg, bid):
    closing = bid.opening_date - timedelta(days=draw(st.integers(0, 20)))
    return {"closing_date": closing}, {reg.schedule.window_article}


def a_date_missing(draw, reg, bid):
    return {draw(st.sampled_from(["opening_date", "closing_date"])): None}, {reg.schedule.window_article}


def hotel_category(draw, reg, bid):
    stars = draw(st.one_of(st.integers(-3, reg.hotel.min_stars - 1), st.integers(6, 50), st.sampled_from([None, True])))
    # A category of 1 to 5 stars below the minimum fails the article; anything that is not such a category fails
    # the form of the entry (the bidding procedure's), and the minimum is then not judged.
    a_category = isinstance(stars, int) and not isinstance(stars, bool) and 1 <= stars <= 5
    return {"hotel_stars": stars}, {reg.hotel.article if a_category
                                    else _article_of(reg, "hotel_category", reg.hotel.article)}


def room_rates(draw, reg, bid):
    bad = draw(st.one_of(
        st.builds(RoomRate, blank, cents(CENT, D("500"))),
        st.builds(RoomRate, names, st.one_of(st.none(), cents(D("-500"), D(0)), st.just(D("95.005")))),
    ))
    rates = draw(st.sampled_from([(), (*bid.room_rates, bad), (bad, *bid.room_rates)]))
    return {"room_rates": rates}, {reg.hotel.article}


def inspection(draw, reg, bid):
    change = draw(st.one_of(
        st.fixed_dictionaries({"wcoc_inspectors_invited": st.none()
                               | st.integers(-5, reg.inspection.min_inspectors - 1)}),
        st.fixed_dictionaries({"inspection_expenses_covered": st.sampled_from([False, None])}),
    ))
    return change, {reg.inspection.article}


def commitment(draw, reg, bid):
    field, article = draw(st.sampled_from([
        ("commits_fide_obligations", reg.article("fide_obligations")),
        ("commits_organisational_costs", reg.article("organisational_costs")),
        ("accepts_regulations", reg.article("acceptance")),
    ]))
    return {field: draw(st.sampled_from([False, None]))}, {article}


def ioc(draw, reg, bid):
    return {"ioc_conflict_free": draw(st.sampled_from([False, None]))}, {reg.article("ioc")}


def applicant(draw, reg, bid):
    change = draw(st.one_of(
        st.fixed_dictionaries({"applicant_type": st.none() | st.text(max_size=12).filter(
            lambda t: t not in APPLICANT_TYPES)}),
        st.fixed_dictionaries({"host_federation": st.none() | st.text(max_size=5).filter(
            lambda t: not rules.is_fide_code(t))}),
    ))
    return change, {reg.article("applicant")}


def contact(draw, reg, bid):
    """Who to write to is the call's bidding procedure: the particulars of Art. 15.2 (a) to (k) name no contact
    person (a malformed address is only a sanity check's warning)."""
    change = draw(st.one_of(
        st.fixed_dictionaries({"contact_name": blank}),
        st.fixed_dictionaries({"contact_email": blank}),
    ))
    return change, {_article_of(reg, "contact", reg.article("particulars"))}


def venue(draw, reg, bid):
    change = draw(st.one_of(
        st.fixed_dictionaries({"venue_name": blank}),
        st.fixed_dictionaries({"venue_city": blank}),
        st.fixed_dictionaries({"venue_country": st.none() | st.text(max_size=3).filter(
            lambda t: not is_country_code(t))}),
    ))
    return change, {reg.article("venue")}


def guarantee(draw, reg, bid):
    g = covering_guarantee(reg, bid)
    last = reg.last_payment_deadline
    kind = draw(st.sampled_from(["bank", "document", "amount", "no_amount", "valid_until"]))
    overrides = {"has_guarantee_document": True}
    if kind == "bank":
        g = dataclasses.replace(g, bank=draw(blank))
    elif kind == "document":
        overrides["has_guarantee_document"] = False
    elif kind == "amount":
        g = dataclasses.replace(g, amount_eur=draw(cents(D(0), g.amount_eur - CENT)))
    elif kind == "no_amount":
        g = dataclasses.replace(g, amount_eur=None)
    else:
        g = dataclasses.replace(g, valid_until=draw(st.none() | st.just(last - timedelta(days=draw(
            st.integers(0, 300))))))
    # Art. 15.2(j): "any bank guarantees as described in the bidding procedure": the bank and the document are
    # the article's; what the amount covers and how long it is valid are the procedure's (no article).
    return {**overrides, "bank_guarantee": g}, {reg.guarantee.article if kind in ("bank", "document") else ""}


def signature(draw, reg, bid):
    today = today_for(reg)
    change = draw(st.one_of(
        st.fixed_dictionaries({draw(st.sampled_from(["applicant_name", "signatory_name", "signatory_position"])):
                               blank}),
        st.fixed_dictionaries({"signed_on": st.none() | st.integers(1, 400).map(
            lambda n: today + timedelta(days=n))}),
        st.just({"has_signed_letter": False}),
    ))
    if "signed_on" in change:  # the date of signing is the bidding procedure's entry
        return change, {_article_of(reg, "signing_date", reg.article("signature"))}
    return change, {reg.article("signature")}


VIOLATIONS = [
    prize_below_minimum, prize_missing, prize_with_fractions_of_a_cent, not_net_of_taxes,
    fide_below_share, fide_missing, opening_outside_window, closing_off_schedule, closing_not_after_opening,
    a_date_missing, hotel_category, room_rates, inspection, commitment, ioc, applicant, contact, venue, guarantee,
    signature,
]


# -------------------------------------------------------------------------------------------- properties


@pytest.mark.parametrize("reg", REGS)
@SETTINGS
@given(data=st.data())
def test_a_bid_meeting_every_minimum_passes(reg, data):
    bid = data.draw(valid_bids(reg))
    result = check_bid(reg, bid, today=today_for(reg))
    assert failures(result) == [], [f.as_text() for f in failures(result)]
    assert is_compliant(result)


@pytest.mark.parametrize("reg", REGS)
@SETTINGS
@given(data=st.data())
def test_a_single_violation_fails_exactly_its_article(reg, data):
    bid = data.draw(valid_bids(reg))
    violation = data.draw(st.sampled_from(VIOLATIONS), label="violation")
    overrides, articles = violation(data.draw, reg, bid)
    broken = dataclasses.replace(bid, **overrides)
    result = check_bid(reg, broken, today=today_for(reg))
    assert {f.article for f in failures(result)} == articles, [f.as_text() for f in failures(result)]
    assert not is_compliant(result)
    for f in failures(result):
        assert f.as_text().startswith(f"{f.cite}: ")
        procedure = set()
        for key in ("guarantee_terms", "contact", "amount_format", "hotel_category", "signing_date"):
            try:
                procedure.add(str(reg.citation(key)))
            except KeyError:
                continue
        assert (f.cite == f"Art. {f.article}") if f.article else (f.cite in procedure), f.cite


@pytest.mark.parametrize("reg", REGS)
@SETTINGS
@given(data=st.data())
def test_a_prize_fund_above_the_sanity_bound_is_a_warning_not_a_failure(reg, data):
    """Art. 15.2(c) sets a minimum ("minimum 200,000 euros") and no maximum: a very large figure is a sanity
    check, a warning to check the figure, never a refusal and never cited as the article."""
    bid = data.draw(valid_bids(reg))
    overrides, _ = prize_above_maximum(data.draw, reg, bid)
    result = check_bid(reg, dataclasses.replace(bid, **overrides), today=today_for(reg))
    assert failures(result) == [] and is_compliant(result)
    (warning,) = [f for f in result if f.outcome is Outcome.WARNING]
    assert warning.code == "15.2c.maximum" and warning.article == ""
    assert warning.as_text().startswith("Sanity check: prize fund figure: ")


@SETTINGS
@given(data=st.data())
def test_missing_documents_of_an_import_are_pending_not_failed(data):
    bid = data.draw(valid_bids(REG))
    imported = dataclasses.replace(bid, documents_known=False, has_guarantee_document=False,
                                   has_signed_letter=False)
    result = check_bid(REG, imported, today=today_for(REG))
    assert failures(result) == []
    expected = {"15.2k.signed_letter"} | ({"15.2j.document"} if bid.guarantee_offered else set())
    assert {f.code for f in pending(result)} == expected


@SETTINGS
@given(data=st.data())
def test_json_round_trip(data):
    bid = data.draw(valid_bids(REG))
    back = bid_from_json(bid_to_json(bid))
    assert back == dataclasses.replace(
        bid, bank_guarantee=bid.bank_guarantee if bid.guarantee_offered else None,
        has_guarantee_document=False, has_signed_letter=False, documents_known=False)
    assert bid_to_json(back) == bid_to_json(bid)
