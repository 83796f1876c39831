"""The compliance rules of a bid (Art. 15.1, 12.2, 15.2 a-k, 2.2, 13): boundaries, messages, the checklist."""

from __future__ import annotations

import dataclasses
from datetime import date, timedelta
from decimal import Decimal

import pytest

from bids.data import EVALUATION_FIELDS, EVALUATION_MAX_CHARS, JSON_FIELDS, BankGuarantee, BidData, Evaluation, RoomRate
from bids.rules import (
    check_bid,
    failures,
    findings_by_field,
    home_match,
    home_match_consequences,
    is_compliant,
    pending,
)
from bids.sections import SECTIONS, findings_by_section, section_of
from core.findings import Outcome
from core.validators import parse_amount
from events.regulation import parse_regulation
from tests.bids.factories import guarantee_for, regulation, today_for, valid_bid

D = Decimal
REG = regulation()
TODAY = today_for(REG)


def findings(bid: BidData, reg=REG, today=TODAY):
    return check_bid(reg, bid, today=today)


def finding(bid: BidData, code: str, reg=REG, today=TODAY):
    [f] = [f for f in findings(bid, reg, today) if f.code == code]
    return f


def failed_codes(bid: BidData, reg=REG, today=TODAY) -> set[str]:
    return {f.code for f in failures(findings(bid, reg, today))}


def with_guarantee(**changes) -> BankGuarantee:
    return dataclasses.replace(valid_bid(REG).bank_guarantee, **changes)


# ------------------------------------------------------------------------------------------ the valid bid


def test_valid_bid_meets_every_rule():
    result = findings(valid_bid(REG))
    assert failures(result) == []
    assert pending(result) == []
    assert is_compliant(result)


def test_the_2015_regulation_allows_opening_on_11_12_or_13_october():
    assert REG.possible_opening_dates() == [date(2015, 10, 11), date(2015, 10, 12), date(2015, 10, 13)]
    assert REG.closing_offsets() == (18, 19)


def test_every_bid_gets_the_same_checklist_of_codes():
    full = [f.code for f in findings(valid_bid(REG))]
    empty = [f.code for f in findings(BidData())]
    assert full == empty
    assert len(set(full)) == len(full)
    # one finding at least for every item of 15.1, 12.2 and 15.2 a-k, and the closing rule of 10.3; the days before
    # game 1 (3.1, 3.2, 5.1) are no finding: they are dated from game 1 and shown with the bid
    prefixes = {code.rpartition(".")[0] for code in full}
    assert {"15.1", "15.2", "email_format", "12.2", "2.2", "13.3", "closing"} | \
           {f"15.2{x}" for x in "abcdefghijk"} == \
        prefixes
    # the dated rules' codes are stable keys; their articles come from the call's file
    articles = {f.article for f in findings(valid_bid(REG))}
    assert "10.3" in articles and not {"3.1", "3.2", "5.1"} & articles


def test_an_empty_draft_fails_without_raising():
    result = findings(BidData())
    assert not is_compliant(result)
    assert "15.2c.present" in {f.code for f in failures(result)}
    # checks that depend on a missing value are not applicable rather than failed twice
    assert finding(BidData(), "15.2c.minimum").outcome is Outcome.NOT_APPLICABLE
    assert finding(BidData(), "15.2d.minimum").outcome is Outcome.NOT_APPLICABLE
    assert finding(BidData(), "2.2.closing").outcome is Outcome.NOT_APPLICABLE


def test_every_finding_field_belongs_to_a_section():
    grouped = findings_by_section(findings(BidData()))
    assert list(grouped) == list(SECTIONS)
    assert sum(len(v) for v in grouped.values()) == len(findings(BidData()))
    assert section_of("bank_guarantee.amount_eur") == "guarantee"
    assert section_of("room_rates") == "hotel"


def test_sections_cover_every_bid_field_once_in_form_order():
    assert list(SECTIONS) == ["applicant", "dates_venue", "money", "commitments", "hotel", "inspection",
                              "guarantee", "signature", "evaluation"]
    names = [n for fields in SECTIONS.values() for n in fields]
    assert len(names) == len(set(names))
    bid_fields = {f.name for f in dataclasses.fields(BidData)} - {"documents_known"}
    assert set(names) == bid_fields
    assert set(JSON_FIELDS) < set(names)


def test_evaluation_fields_map_to_criteria_c_to_j():
    assert [(f.key, f.criterion) for f in EVALUATION_FIELDS] == [
        ("playing_conditions", "c"), ("visas", "d"), ("security", "e"), ("chess_activity", "f"),
        ("media", "g"), ("development", "h"), ("climate", "i"), ("taxation", "j")]
    assert [f.key for f in EVALUATION_FIELDS] == [f.name for f in dataclasses.fields(Evaluation)]
    for f in EVALUATION_FIELDS:
        REG.criterion(f.criterion)  # each is a criterion of the call
    assert EVALUATION_MAX_CHARS == 5000


# --------------------------------------------------------------------------------------- boundary table

TOMORROW = TODAY + timedelta(days=1)
LAST_DEADLINE = REG.last_payment_deadline
OCT = 10


def _dates(opening_day: int, closing: date | int) -> dict:
    if isinstance(closing, int):
        closing = date(2015, OCT, closing)
    return {"opening_date": date(2015, OCT, opening_day), "closing_date": closing}


BOUNDARIES = [
    # (overrides, code, outcome)
    pytest.param({"prize_fund_eur": D("199999.99")}, "15.2c.minimum", Outcome.FAIL, id="prize-199999.99"),
    pytest.param({"prize_fund_eur": D("200000.00")}, "15.2c.minimum", Outcome.PASS, id="prize-200000.00"),
    pytest.param({"prize_fund_eur": D("200000.001")}, "15.2c.cents", Outcome.FAIL, id="prize-three-decimals"),
    pytest.param({"prize_fund_eur": D("50000000.00")}, "15.2c.maximum", Outcome.PASS, id="prize-at-maximum"),
    # Art. 15.2(c) sets a minimum only: above the sanity bound is a warning to check, never a refusal.
    pytest.param({"prize_fund_eur": D("50000000.01")}, "15.2c.maximum", Outcome.WARNING, id="prize-over-maximum"),
    pytest.param({"prize_fund_eur": None}, "15.2c.present", Outcome.FAIL, id="prize-missing"),
    pytest.param({"amounts_net_of_taxes": False}, "15.2c.net_of_taxes", Outcome.FAIL, id="prize-gross"),
    pytest.param({"amounts_net_of_taxes": None}, "15.2d.net_of_taxes", Outcome.FAIL, id="fide-not-said-net"),
    pytest.param({"fide_contribution_eur": D("39980.00")}, "15.2d.minimum", Outcome.FAIL, id="fide-19.99%"),
    pytest.param({"fide_contribution_eur": D("39999.99")}, "15.2d.minimum", Outcome.FAIL, id="fide-a-cent-short"),
    pytest.param({"fide_contribution_eur": D("40000.00")}, "15.2d.minimum", Outcome.PASS, id="fide-20%"),
    # 20% of 200,000.03 is 40,000.006: rounded half up to the cent, 40,000.01 is the least contribution
    pytest.param({"prize_fund_eur": D("200000.03"), "fide_contribution_eur": D("40000.00")},
                 "15.2d.minimum", Outcome.FAIL, id="fide-rounds-up-to-the-cent"),
    pytest.param({"prize_fund_eur": D("200000.03"), "fide_contribution_eur": D("40000.01")},
                 "15.2d.minimum", Outcome.PASS, id="fide-rounded-minimum"),
    pytest.param({"prize_fund_eur": D("200000.01"), "fide_contribution_eur": D("40000.00")},
                 "15.2d.minimum", Outcome.PASS, id="fide-rounds-down-below-half-a-cent"),
    pytest.param({"fide_contribution_eur": None}, "15.2d.present", Outcome.FAIL, id="fide-missing"),
    pytest.param({"hotel_stars": 3}, "15.2g.minimum", Outcome.FAIL, id="3-stars"),
    pytest.param({"hotel_stars": 4}, "15.2g.minimum", Outcome.PASS, id="4-stars"),
    pytest.param({"hotel_stars": 5}, "15.2g.stars", Outcome.PASS, id="5-stars"),
    pytest.param({"hotel_stars": 6}, "15.2g.stars", Outcome.FAIL, id="6-stars"),
    pytest.param({"hotel_stars": 0}, "15.2g.stars", Outcome.FAIL, id="0-stars"),
    pytest.param({"hotel_stars": True}, "15.2g.stars", Outcome.FAIL, id="stars-not-a-number"),
    pytest.param({"hotel_name": None}, "15.2g.hotel_name", Outcome.NOT_APPLICABLE, id="hotel-name-optional"),
    pytest.param({"room_rates": ()}, "15.2g.room_rates", Outcome.FAIL, id="no-room-rates"),
    pytest.param({"room_rates": (RoomRate("single", D("0.00")),)}, "15.2g.room_rates", Outcome.FAIL,
                 id="room-rate-zero"),
    pytest.param({"room_rates": (RoomRate("single", D("0.01")),)}, "15.2g.room_rates", Outcome.PASS,
                 id="room-rate-a-cent"),
    pytest.param({"room_rates": (RoomRate(None, D("90.00")),)}, "15.2g.room_rates", Outcome.FAIL,
                 id="room-rate-without-type"),
    pytest.param({"room_rates": (RoomRate("suite", None),)}, "15.2g.room_rates", Outcome.FAIL,
                 id="room-rate-without-price"),
    pytest.param(_dates(13, 31), "15.2a.opening_date", Outcome.PASS, id="opening-13-october"),
    pytest.param(_dates(14, date(2015, 11, 1)), "15.2a.opening_date", Outcome.FAIL, id="opening-14-october"),
    pytest.param(_dates(10, 28), "15.2a.opening_date", Outcome.FAIL, id="opening-10-october"),
    pytest.param(_dates(11, 29), "15.2a.opening_date", Outcome.PASS, id="opening-11-october"),
    pytest.param(_dates(13, 31), "15.2a.closing_date", Outcome.PASS, id="closing-31-october"),
    pytest.param(_dates(13, date(2015, 11, 1)), "15.2a.closing_date", Outcome.FAIL, id="closing-1-november"),
    pytest.param(_dates(13, date(2015, 11, 1)), "2.2.closing", Outcome.PASS, id="19-days-fit-the-schedule"),
    pytest.param(_dates(12, 29), "2.2.closing", Outcome.FAIL, id="closing-17-days-after"),
    pytest.param(_dates(12, 30), "2.2.closing", Outcome.PASS, id="closing-18-days-after"),
    pytest.param(_dates(12, 31), "2.2.closing", Outcome.PASS, id="closing-19-days-after"),
    pytest.param(_dates(11, 31), "2.2.closing", Outcome.FAIL, id="closing-20-days-after"),
    pytest.param(_dates(12, 12), "15.2a.order", Outcome.FAIL, id="closing-on-opening-day"),
    pytest.param(_dates(12, 12), "2.2.closing", Outcome.NOT_APPLICABLE, id="no-schedule-check-when-reversed"),
    pytest.param({"opening_date": None}, "15.2a.opening_date", Outcome.FAIL, id="opening-missing"),
    pytest.param({"wcoc_inspectors_invited": 1}, "15.2i.inspectors", Outcome.FAIL, id="1-inspector"),
    pytest.param({"wcoc_inspectors_invited": 2}, "15.2i.inspectors", Outcome.PASS, id="2-inspectors"),
    pytest.param({"inspection_expenses_covered": False}, "15.2i.expenses", Outcome.FAIL, id="expenses-not-paid"),
    pytest.param({"bank_guarantee": with_guarantee(valid_until=LAST_DEADLINE)}, "15.2j.valid_until",
                 Outcome.FAIL, id="guarantee-until-31-august"),
    pytest.param({"bank_guarantee": with_guarantee(valid_until=LAST_DEADLINE + timedelta(days=1))},
                 "15.2j.valid_until", Outcome.PASS, id="guarantee-until-1-september"),
    pytest.param({"bank_guarantee": with_guarantee(amount_eur=D("239999.99"))}, "15.2j.amount", Outcome.FAIL,
                 id="guarantee-a-cent-short"),
    pytest.param({"bank_guarantee": with_guarantee(amount_eur=D("240000.00"))}, "15.2j.amount", Outcome.PASS,
                 id="guarantee-covers-prize-and-fide"),
    pytest.param({"bank_guarantee": with_guarantee(bank=" ")}, "15.2j.bank", Outcome.FAIL, id="guarantee-no-bank"),
    pytest.param({"has_guarantee_document": False}, "15.2j.document", Outcome.FAIL, id="guarantee-not-attached"),
    pytest.param({"bank_guarantee": None, "has_guarantee_document": False}, "15.2j.document",
                 Outcome.NOT_APPLICABLE, id="no-guarantee-no-document-needed"),
    pytest.param({"signed_on": TOMORROW}, "15.2k.signed_on", Outcome.FAIL, id="signed-tomorrow"),
    pytest.param({"signed_on": TODAY}, "15.2k.signed_on", Outcome.PASS, id="signed-today"),
    pytest.param({"has_signed_letter": False}, "15.2k.signed_letter", Outcome.FAIL, id="letter-not-attached"),
    pytest.param({"applicant_name": ""}, "15.2k.applicant_name", Outcome.FAIL, id="applicant-name-empty"),
    pytest.param({"signatory_position": None}, "15.2k.signatory_position", Outcome.FAIL, id="no-position"),
    pytest.param({"commits_fide_obligations": False}, "15.2e.commitment", Outcome.FAIL, id="no-fide-obligations"),
    pytest.param({"commits_organisational_costs": None}, "15.2f.commitment", Outcome.FAIL, id="no-costs"),
    pytest.param({"accepts_regulations": False}, "15.2h.acceptance", Outcome.FAIL, id="reservations"),
    pytest.param({"ioc_conflict_free": None}, "12.2.ioc", Outcome.FAIL, id="ioc-not-declared"),
    pytest.param({"applicant_type": "sponsor", "ioc_conflict_free": False}, "12.2.ioc", Outcome.FAIL,
                 id="ioc-sponsor-conflict"),
    pytest.param({"applicant_type": "sponsor"}, "15.1.applicant_type", Outcome.PASS, id="sponsor"),
    pytest.param({"applicant_type": "club"}, "15.1.applicant_type", Outcome.FAIL, id="club"),
    pytest.param({"host_federation": "UK"}, "15.1.host_federation", Outcome.FAIL, id="fed-two-letters"),
    pytest.param({"host_federation": "ukr"}, "15.1.host_federation", Outcome.FAIL, id="fed-lower-case"),
    # A malformed address is a sanity check's warning (the regulations set no format); a missing one fails 15.2.
    pytest.param({"contact_email": "secretary.example.org"}, "email_format.contact_email", Outcome.WARNING,
                 id="email-no-at"),
    pytest.param({"contact_email": "a@b"}, "email_format.contact_email", Outcome.WARNING, id="email-no-domain"),
    pytest.param({"contact_email": "a@b"}, "15.2.contact_email", Outcome.PASS, id="email-given"),
    pytest.param({"contact_email": " "}, "15.2.contact_email", Outcome.FAIL, id="email-blank"),
    pytest.param({"contact_email": None}, "email_format.contact_email", Outcome.NOT_APPLICABLE,
                 id="no-email-no-format-check"),
    pytest.param({"contact_name": "  "}, "15.2.contact_name", Outcome.FAIL, id="contact-blank"),
    pytest.param({"venue_name": None}, "15.2b.venue_name", Outcome.FAIL, id="no-venue"),
    pytest.param({"venue_city": ""}, "15.2b.venue_city", Outcome.FAIL, id="no-city"),
    pytest.param({"venue_country": "UK"}, "15.2b.venue_country", Outcome.FAIL, id="country-UK-is-not-ISO"),
    pytest.param({"venue_country": "GB"}, "15.2b.venue_country", Outcome.PASS, id="country-GB"),
    pytest.param({"venue_country": "ua"}, "15.2b.venue_country", Outcome.FAIL, id="country-lower-case"),
    pytest.param({"venue_country": "EU"}, "15.2b.venue_country", Outcome.FAIL, id="country-EU-is-no-country"),
]


@pytest.mark.parametrize(("overrides", "code", "outcome"), BOUNDARIES)
def test_boundary(overrides, code, outcome):
    assert finding(valid_bid(REG, **overrides), code).outcome is outcome


# -------------------------------------------------------------------------------------------- messages


def test_prize_fund_below_minimum_reads_like_the_regulation():
    f = finding(valid_bid(REG, prize_fund_eur=D("150000.00")), "15.2c.minimum")
    assert f.article == "15.2(c)"
    assert f.field == "prize_fund_eur"
    assert f.message == "the prize fund must be at least €200,000.00 net of local taxes."
    assert f.value == "€150,000.00"
    assert f.as_text() == (
        "Art. 15.2(c): the prize fund must be at least €200,000.00 net of local taxes (you entered €150,000.00).")


def test_submit_rejects_prize_fund_below_minimum_and_nothing_else():
    assert failed_codes(valid_bid(REG, prize_fund_eur=D("150000.00"))) == {"15.2c.minimum"}


def test_fide_contribution_message_gives_the_figure_for_the_prize_fund():
    f = finding(valid_bid(REG, prize_fund_eur=D("250000.00"), fide_contribution_eur=D("49999.99")),
                "15.2d.minimum")
    assert f.as_text() == (
        "Art. 15.2(d): the contribution to FIDE must be at least 20% of the prize fund, €50,000.00 for a prize "
        "fund of €250,000.00, over and above it and net of local taxes (Art. 13.2) (you entered €49,999.99).")


def test_opening_date_message_lists_the_possible_dates():
    f = finding(valid_bid(REG, **_dates(14, date(2015, 11, 1))), "15.2a.opening_date")
    assert f.as_text() == (
        "Art. 15.2(a): the opening ceremony must be on 11, 12 or 13 October 2015, so that the programme of "
        "Art. 2.2 and the closing ceremony fit between 11 October 2015 and 31 October 2015 "
        "(you entered 14 October 2015).")


def test_closing_date_message_gives_the_closing_days_for_the_opening():
    f = finding(valid_bid(REG, **_dates(12, 29)), "2.2.closing")
    assert f.article == "2.2"
    assert f.field == "closing_date"
    assert f.as_text() == (
        "Art. 2.2: the closing ceremony must be 18 or 19 days after the opening ceremony, so that the 18-day "
        "programme (tie-breaks included) fits before it; with your opening date that is 30 or 31 October 2015 "
        "(you entered 29 October 2015, 17 days after the opening ceremony).")


def test_hotel_message():
    f = finding(valid_bid(REG, hotel_stars=3), "15.2g.minimum")
    assert f.as_text() == "Art. 15.2(g): the official hotel must have at least 4 stars (you entered 3 stars)."


def test_inspection_message_cites_15_4_too():
    f = finding(valid_bid(REG, wcoc_inspectors_invited=1), "15.2i.inspectors")
    assert f.as_text() == (
        "Art. 15.2(i): the bid must invite at least 2 members of the WCOC to inspect the proposed venue and the "
        "other conditions, as Art. 15.4 also requires (you entered 1).")


def test_guarantee_messages_give_the_amount_and_the_last_deadline():
    """Art. 15.2(j) asks only for "any bank guarantees as described in the bidding procedure": the amount a
    guarantee covers and how long it stays valid are the bidding procedure's terms, cited as such."""
    bid = valid_bid(REG, bank_guarantee=with_guarantee(amount_eur=D("200000.00"), valid_until=date(2015, 8, 31)))
    amount = finding(bid, "15.2j.amount")
    assert amount.as_text() == (
        "Bidding procedure: bank guarantee terms: a bank guarantee must cover at least the prize fund and the "
        "contribution to FIDE, "
        "€240,000.00 (you entered €200,000.00).")
    assert amount.field == "bank_guarantee.amount_eur"
    valid = finding(bid, "15.2j.valid_until")
    assert valid.as_text() == (
        "Bidding procedure: bank guarantee terms: a bank guarantee must remain valid after 31 August 2015, the "
        "last payment deadline of "
        "Art. 15.6.2 (you entered 31 August 2015).")


def test_three_decimals_are_shown_as_entered_not_rounded():
    f = finding(valid_bid(REG, prize_fund_eur=D("200000.005")), "15.2c.cents")
    assert f.value == "€200000.005"


def test_room_rate_problems_are_named():
    bid = valid_bid(REG, room_rates=(RoomRate("single", D("-5.00")), RoomRate(None, D("80.00"))))
    f = finding(bid, "15.2g.room_rates")
    assert f.outcome is Outcome.FAIL
    assert f.value == "single at -€5.00; rate 2 has no room type"


def test_failures_group_by_field_for_the_form():
    bid = valid_bid(REG, prize_fund_eur=D("150000.00"), amounts_net_of_taxes=False)
    by_field = findings_by_field(findings(bid))
    assert set(by_field) == {"prize_fund_eur", "amounts_net_of_taxes"}
    assert [f.code for f in by_field["amounts_net_of_taxes"]] == ["15.2c.net_of_taxes", "15.2d.net_of_taxes"]


def test_every_message_is_a_sentence_and_every_article_is_cited():
    for bid in (BidData(), valid_bid(REG)):
        for f in findings(bid):
            assert f.cite and f.field and f.code
            # an article only for a rule of the regulations; the procedure and the sanity checks cite no article
            assert bool(f.article) == (f.kind == "regulation"), f.code
            assert f.message[0].islower() and f.message.endswith("."), f.code
            assert f.as_dict()["outcome"] == f.outcome.value


# ------------------------------------------------------------------------------ documents, guarantee


def test_imported_bid_without_documents_is_pending_not_failed():
    bid = valid_bid(REG, has_guarantee_document=False, has_signed_letter=False, documents_known=False)
    result = findings(bid)
    assert failures(result) == []
    assert {f.code for f in pending(result)} == {"15.2j.document", "15.2k.signed_letter"}
    assert not is_compliant(result)


def test_guarantee_is_optional():
    for none in (None, BankGuarantee(offered=False, bank="ignored", amount_eur=D("1.00"))):
        result = findings(valid_bid(REG, bank_guarantee=none, has_guarantee_document=False))
        assert is_compliant(result)
        assert {f.outcome for f in result if f.code.startswith("15.2j")} == {Outcome.NOT_APPLICABLE}


def test_guarantee_amount_is_not_judged_while_the_prize_fund_is_missing():
    bid = valid_bid(REG, prize_fund_eur=None)
    assert finding(bid, "15.2j.amount").outcome is Outcome.NOT_APPLICABLE
    assert failed_codes(bid) == {"15.2c.present"}


def test_guarantee_without_amount_fails():
    bid = valid_bid(REG, bank_guarantee=with_guarantee(amount_eur=None))
    assert failed_codes(bid) == {"15.2j.amount"}


def test_signing_date_is_judged_against_today():
    bid = valid_bid(REG, signed_on=date(2015, 6, 1))
    assert finding(bid, "15.2k.signed_on", today=date(2015, 5, 31)).outcome is Outcome.FAIL
    assert finding(bid, "15.2k.signed_on", today=date(2015, 6, 1)).outcome is Outcome.PASS


# -------------------------------------------------------------------------------------------- home match


def test_home_match_in_ukraine_names_the_consequences_for_hou_yifan():
    bid = valid_bid(REG, venue_country="UA", prize_fund_eur=D("200000.00"))
    assert home_match(REG, bid).name == "Mariya Muzychuk"
    assert home_match_consequences(REG, bid) == [
        "Art. 13.3: Hou Yifan first receives 5% of the prize fund (€10,000.00); the balance is shared under "
        "Art. 13.1.",
        "Art. 14.4: the organizer pays Hou Yifan €3,000.00 as compensation for transportation and hospitality "
        "for inspection visits.",
        "Art. 7.4.4: Hou Yifan may suggest which member of the FIDE Presidential Board is to be FIDE Supervisor.",
    ]
    f = finding(bid, "13.3.home_match")
    assert f.outcome is Outcome.PASS
    assert f.article == "13.3"
    assert f.message.startswith("the venue is in Ukraine, the country of Mariya Muzychuk, so Hou Yifan")


def test_home_match_in_china():
    bid = valid_bid(REG, venue_country="CN", host_federation="CHN")
    assert home_match(REG, bid).name == "Hou Yifan"
    assert "Mariya Muzychuk first receives 5%" in home_match_consequences(REG, bid)[0]


@pytest.mark.parametrize("country", ["RU", None, "xx"])
def test_neutral_or_unknown_venue_is_no_home_match(country):
    bid = valid_bid(REG, venue_country=country)
    assert home_match(REG, bid) is None
    assert home_match_consequences(REG, bid) == []
    assert finding(bid, "13.3.home_match").outcome is Outcome.NOT_APPLICABLE


# -------------------------------------------------------------------------------------------- parse_amount


@pytest.mark.parametrize(("text", "expected"), [
    ("200000", D("200000.00")),
    ("200000.5", D("200000.50")),
    (" 200000.00 ", D("200000.00")),
    ("0", D("0.00")),
    ("999999999999.99", D("999999999999.99")),
    ("0000000000000001", D("1.00")),
])
def test_parse_amount_reads_plain_decimals(text, expected):
    result = parse_amount(text)
    assert result == expected
    assert result.as_tuple().exponent == -2


@pytest.mark.parametrize(("text", "says"), [
    ("200,000", "do not use thousand separators"),
    ("200 000", "do not use thousand separators"),
    ("200.000.00", "do not use thousand separators"),
    ("200000,50", "use a point, not a comma"),
    ("-5", "cannot be negative"),
    ("1.005", "at most two decimals"),
    ("1000000000000", "at most 12 digits"),
    ("1e309", "digits only"),
    ("NaN", "digits only"),
    ("inf", "digits only"),
    ("10^15", "digits only"),
    ("€200000", "digits only"),
    ("٢٠٠", "digits only"),  # Arabic-Indic digits are digits to Python, not to us
    ("", "Enter the amount in euros"),
])
def test_parse_amount_refuses_with_a_sentence(text, says):
    with pytest.raises(ValueError) as exc:
        parse_amount(text)
    message = str(exc.value)
    assert says in message
    assert message.endswith(".")
    if text:
        assert f"(you entered '{text}')" in message


def test_parse_amount_message_for_thousand_separators():
    with pytest.raises(ValueError) as exc:
        parse_amount("200,000")
    assert str(exc.value) == (
        "Enter the amount in euros as digits only, with at most two decimals after a point, for example "
        "200000.00: do not use thousand separators, and use a point, not a comma, before the cents, as a comma "
        "could be read either way (you entered '200,000').")


# ------------------------------------------------------------------------------- a made-up regulation


def _made_up_toml() -> str:
    from events.regulation import default_event_file

    text = default_event_file().read_text(encoding="utf-8")
    for old, new in [("window_start = 2015-10-11", "window_start = 2016-03-01"),
                     ("window_end = 2015-10-31", "window_end = 2016-03-31"),
                     ('minimum = "200000.00"', 'minimum = "500000.00"'),
                     ('target = "400000.00"', 'target = "600000.00"'),
                     ('bid_article = "15.2(c)"', 'bid_article = "16.3(c)"')]:
        assert old in text
        text = text.replace(old, new)
    return text


def test_rules_follow_a_made_up_window_and_minimum():
    reg = parse_regulation(_made_up_toml())
    assert reg.possible_opening_dates()[0] == date(2016, 3, 1)
    assert reg.possible_opening_dates()[-1] == date(2016, 3, 13)
    bid = valid_bid(reg)
    assert is_compliant(findings(bid, reg))

    late = valid_bid(reg, opening_date=date(2016, 3, 14), closing_date=date(2016, 4, 1))
    f = finding(late, "15.2a.opening_date", reg)
    assert f.outcome is Outcome.FAIL
    assert "must be on any day from 1 March 2016 to 13 March 2016" in f.message
    assert finding(valid_bid(reg, opening_date=date(2016, 3, 13), closing_date=date(2016, 3, 31)),
                   "15.2a.opening_date", reg).outcome is Outcome.PASS

    poor = valid_bid(reg, prize_fund_eur=D("499999.99"))
    [f] = failures(findings(poor, reg))
    assert f.as_text() == (
        "Art. 16.3(c): the prize fund must be at least €500,000.00 net of local taxes (you entered €499,999.99).")
    # the 2015 bid is now out of the window and below the minimum
    assert {"15.2a.opening_date", "15.2a.closing_date", "15.2c.minimum"} <= failed_codes(valid_bid(REG), reg)


def test_rules_follow_replaced_figures():
    reg = dataclasses.replace(
        REG,
        hotel=dataclasses.replace(REG.hotel, min_stars=5),
        inspection=dataclasses.replace(REG.inspection, min_inspectors=3),
        fide_contribution=dataclasses.replace(REG.fide_contribution, min_share_of_prize_fund=D("0.25")),
        prize_fund=dataclasses.replace(REG.prize_fund, net_of_taxes_required=False),
        guarantee=dataclasses.replace(REG.guarantee, must_cover=("prize_fund",), valid_past_last_deadline=False),
        schedule=dataclasses.replace(REG.schedule, closing_days_after_last_day=(1,)),
    )
    assert reg.closing_offsets() == (18,)
    assert is_compliant(findings(valid_bid(reg), reg))

    old = valid_bid(REG)  # 4 stars, 2 inspectors, 20%, closing 18 days after opening
    assert failed_codes(old, reg) == {"15.2g.minimum", "15.2i.inspectors", "15.2d.minimum"}
    assert finding(old, "15.2g.minimum", reg).message == "the official hotel must have at least 5 stars."
    assert "at least 25% of the prize fund, €50,000.00" in finding(old, "15.2d.minimum", reg).message

    assert finding(valid_bid(reg, closing_date=valid_bid(reg).opening_date + timedelta(days=19)),
                   "2.2.closing", reg).outcome is Outcome.FAIL
    gross = valid_bid(reg, amounts_net_of_taxes=False)
    assert finding(gross, "15.2c.net_of_taxes", reg).outcome is Outcome.NOT_APPLICABLE
    assert failed_codes(gross, reg) == {"15.2d.net_of_taxes"}  # Art. 13.2 asks it net whatever

    prize_only = guarantee_for(reg, REG.prize_fund.minimum, D("0"), valid_until=date(2015, 7, 1))
    bid = valid_bid(reg, fide_contribution_eur=D("50000.00"), bank_guarantee=prize_only)
    assert finding(bid, "15.2j.amount", reg).outcome is Outcome.PASS
    assert finding(bid, "15.2j.valid_until", reg).outcome is Outcome.PASS
    assert finding(valid_bid(reg, bank_guarantee=with_guarantee(valid_until=None)), "15.2j.valid_until",
                   reg).outcome is Outcome.NOT_APPLICABLE


def test_articles_come_from_the_regulation():
    reg = dataclasses.replace(
        REG,
        schedule=dataclasses.replace(REG.schedule, window_article="X.a", closing_article="X.close"),
        fide_contribution=dataclasses.replace(REG.fide_contribution, bid_article="X.d"),
        hotel=dataclasses.replace(REG.hotel, article="X.g"),
        inspection=dataclasses.replace(REG.inspection, article="X.i"),
        guarantee=dataclasses.replace(REG.guarantee, article="X.j"),
        prize_split=dataclasses.replace(REG.prize_split, home_article="X.home"),
    )
    articles = {f.code: f.article for f in findings(BidData(), reg)}
    assert articles["15.2a.opening_date"] == "X.a"
    assert articles["2.2.closing"] == "X.close"
    assert articles["15.2d.minimum"] == "X.d"
    assert articles["15.2g.minimum"] == "X.g"
    assert articles["15.2g.stars"] == ""  # the procedure's form of the category, not the article
    assert articles["15.2i.inspectors"] == "X.i"
    assert articles["15.2j.bank"] == "X.j"
    assert articles["15.2j.amount"] == ""  # the procedure's terms, not the article
    assert articles["13.3.home_match"] == "X.home"


def test_an_amount_with_more_than_two_decimals_is_the_bidding_procedures_finding_not_an_articles():
    """Issue 36: Art. 15.2(c) and (d) set the minimum figures, not their form in euros and cents."""
    found = {f.code: f for f in findings(BidData(prize_fund_eur=Decimal("200000.001"),
                                                 fide_contribution_eur=Decimal("40000.001")), REG)}
    for code in ("15.2c.cents", "15.2d.cents"):
        assert (found[code].outcome, found[code].article, found[code].source) == (
            Outcome.FAIL, "", "Bidding procedure: amounts in euros and cents"), code
