"""bid_from_json / bid_to_json: the strict JSON shape of a bid, every refusal naming its key."""

from __future__ import annotations

import copy
import json
from datetime import date
from decimal import Decimal

import pytest

from bids.data import JSON_FIELDS, BankGuarantee, BidData, Evaluation, RoomRate
from bids.rules import check_bid, failures, is_compliant, pending
from bids.shape import BidImportError, bid_from_json, bid_to_json
from tests.bids.factories import regulation, today_for, valid_bid, valid_bid_json

D = Decimal
REG = regulation()

EXAMPLE = """{
  "applicant_type": "federation", "applicant_name": "Chess Federation of Ukraine", "host_federation": "UKR",
  "contact_name": "Olena Kovalenko", "contact_email": "secretary@example.org",
  "opening_date": "2015-10-13", "closing_date": "2015-10-31",
  "venue_name": "Potocki Palace", "venue_city": "Lviv", "venue_country": "UA",
  "prize_fund_eur": "200000.00", "fide_contribution_eur": "40000.00", "amounts_net_of_taxes": true,
  "commits_fide_obligations": true, "commits_organisational_costs": true, "accepts_regulations": true,
  "hotel_name": "Hotel Leopolis", "hotel_stars": 4, "room_rates": [{"room_type": "single", "eur_per_night": "95.00"}],
  "wcoc_inspectors_invited": 2, "inspection_expenses_covered": true,
  "bank_guarantee": null, "ioc_conflict_free": true,
  "signatory_name": "Viktor Kapustin", "signatory_position": "President", "signed_on": "2015-05-20",
  "evaluation": {"playing_conditions": "Hall", "visas": "On arrival", "security": "Police",
                 "chess_activity": "Many clubs", "media": "TV", "development": "Schools", "climate": "Mild",
                 "taxation": "Net"}
}"""


def example() -> dict:
    return json.loads(EXAMPLE)


def test_reads_the_documented_example():
    bid = bid_from_json(example())
    assert bid.opening_date == date(2015, 10, 13)
    assert bid.prize_fund_eur == D("200000.00")
    assert bid.room_rates == (RoomRate("single", D("95.00")),)
    assert bid.bank_guarantee is None and not bid.guarantee_offered
    assert bid.evaluation.visas == "On arrival"
    assert bid.documents_known is False
    assert (bid.has_guarantee_document, bid.has_signed_letter) == (False, False)


def test_imported_bid_is_compliant_but_for_the_pending_letter():
    result = check_bid(REG, bid_from_json(example()), today=today_for(REG))
    assert failures(result) == []
    assert [f.code for f in pending(result)] == ["15.2k.signed_letter"]
    assert not is_compliant(result)


def test_reads_a_guarantee():
    data = example()
    data["bank_guarantee"] = {"bank": "PrivatBank", "amount_eur": "240000.00", "valid_until": "2015-09-01"}
    bid = bid_from_json(data)
    assert bid.bank_guarantee == BankGuarantee(True, "PrivatBank", D("240000.00"), date(2015, 9, 1))


def test_round_trip_keeps_the_shape():
    data = example()
    assert bid_to_json(bid_from_json(data)) == data
    assert list(bid_to_json(bid_from_json(data))) == list(JSON_FIELDS)
    full = valid_bid_json(REG)
    assert bid_to_json(bid_from_json(full)) == full
    assert json.loads(json.dumps(full)) == full  # plain JSON: strings, numbers, booleans, null


def test_to_json_writes_amounts_as_strings_with_two_decimals_and_dates_iso():
    data = bid_to_json(valid_bid(REG, prize_fund_eur=D("200000")))
    assert data["prize_fund_eur"] == "200000.00"
    assert data["fide_contribution_eur"] == "40000.00"
    assert data["opening_date"] == "2015-10-13"  # the one opening date meeting every dated rule
    assert data["bank_guarantee"] == {"bank": "PrivatBank", "amount_eur": "240000.00", "valid_until": "2015-09-01"}
    assert data["room_rates"][0] == {"room_type": "single", "eur_per_night": "95.00"}


def test_a_guarantee_not_offered_is_written_as_null():
    assert bid_to_json(valid_bid(REG, bank_guarantee=BankGuarantee(offered=False)))["bank_guarantee"] is None


def test_an_empty_draft_round_trips():
    data = bid_to_json(BidData())
    assert set(data) == set(JSON_FIELDS)
    assert bid_from_json(data) == BidData(documents_known=False)


def test_nulls_make_a_partial_draft_and_blank_text_is_none():
    data = {k: None for k in JSON_FIELDS}
    data["venue_city"] = "   "
    bid = bid_from_json(data)
    assert bid.venue_city is None
    assert bid.room_rates == ()
    assert bid.evaluation == Evaluation()


def _set(path: str, value):
    def change(data: dict) -> dict:
        data = copy.deepcopy(data)
        target = data
        *parents, last = path.split("/")
        for p in parents:
            target = target[int(p)] if isinstance(target, list) else target[p]
        if value is _DELETE:
            del target[last]
        else:
            target[last] = value
        return data
    return change


_DELETE = object()
GUARANTEE = {"bank": "PrivatBank", "amount_eur": "240000.00", "valid_until": "2015-09-01"}


@pytest.mark.parametrize(("change", "expected"), [
    (_set("contact_email", _DELETE), "contact_email: missing"),
    (_set("sponsor_logo", "x.png"), "sponsor_logo: unknown key"),
    (_set("has_signed_letter", True), "has_signed_letter: unknown key"),
    (_set("prize_fund_eur", 200000.0), "prize_fund_eur: an amount is a string such as \"200000.00\""),
    (_set("prize_fund_eur", 200000), "prize_fund_eur: an amount is a string"),
    (_set("prize_fund_eur", "1e309"), "prize_fund_eur: Enter the amount in euros as digits only"),
    (_set("prize_fund_eur", "NaN"), "prize_fund_eur: Enter the amount in euros as digits only"),
    (_set("prize_fund_eur", "-5"), "prize_fund_eur: The amount cannot be negative"),
    (_set("prize_fund_eur", "10^15"), "prize_fund_eur: Enter the amount"),
    (_set("prize_fund_eur", "200,000"), "prize_fund_eur: Enter the amount in euros as digits only, with at most "
                                        "two decimals after a point, for example 200000.00: do not use thousand"),
    (_set("prize_fund_eur", "200 000"), "prize_fund_eur: Enter the amount in euros as digits only"),
    (_set("fide_contribution_eur", "40000.001"), "fide_contribution_eur: Enter at most two decimals"),
    (_set("opening_date", "2015-02-30"), "opening_date: '2015-02-30' is not a real date"),
    (_set("closing_date", "30/10/2015"), "closing_date: expected a date as \"YYYY-MM-DD\""),
    (_set("signed_on", "20150520"), "signed_on: expected a date as \"YYYY-MM-DD\""),
    (_set("signed_on", 20150520), "signed_on: expected a date"),
    (_set("hotel_stars", 4.0), "hotel_stars: expected a whole number or null, got 4.0"),
    (_set("hotel_stars", "4"), "hotel_stars: expected a whole number"),
    (_set("wcoc_inspectors_invited", True), "wcoc_inspectors_invited: expected a whole number"),
    (_set("accepts_regulations", "yes"), "accepts_regulations: expected true, false or null"),
    (_set("accepts_regulations", 1), "accepts_regulations: expected true, false or null"),
    (_set("venue_city", 5), "venue_city: expected text or null"),
    (_set("venue_name", "x" * 201), "venue_name: at most 200 characters"),
    (_set("room_rates", {"single": "95.00"}), "room_rates: expected a list of room rates"),
    (_set("room_rates/0/eur_per_night", 95), "room_rates[0].eur_per_night: an amount is a string"),
    (_set("room_rates/0/meals", True), "room_rates[0].meals: unknown key"),
    (_set("room_rates/0/room_type", _DELETE), "room_rates[0].room_type: missing"),
    (_set("room_rates", ["single"]), "room_rates[0]: expected an object"),
    (_set("bank_guarantee", True), "bank_guarantee: expected null (none offered) or an object"),
    (_set("bank_guarantee", {**GUARANTEE, "valid_until": "2015-09-31"}),
     "bank_guarantee.valid_until: '2015-09-31' is not a real date"),
    (_set("bank_guarantee", {**GUARANTEE, "amount_eur": 240000.0}), "bank_guarantee.amount_eur: an amount is a"),
    (_set("bank_guarantee", {"bank": "PrivatBank", "amount_eur": "1.00"}), "bank_guarantee.valid_until: missing"),
    (_set("bank_guarantee", {**GUARANTEE, "offered": True}), "bank_guarantee.offered: unknown key"),
    (_set("evaluation/visas", _DELETE), "evaluation.visas: missing"),
    (_set("evaluation/weather", "sunny"), "evaluation.weather: unknown key"),
    (_set("evaluation/media", "x" * 5001), "evaluation.media: at most 5000 characters"),
    (_set("evaluation", "all good"), "evaluation: expected an object"),
])
def test_refuses_with_the_key_named(change, expected):
    with pytest.raises(BidImportError) as exc:
        bid_from_json(change(example()))
    assert str(exc.value).startswith(expected)
    assert isinstance(exc.value, ValueError)


def test_names_every_missing_key_at_once():
    data = example()
    del data["venue_city"], data["applicant_type"]
    with pytest.raises(BidImportError, match=r"^applicant_type, venue_city: missing$") as exc:
        bid_from_json(data)
    assert exc.value.key == "applicant_type, venue_city"


def test_refuses_what_is_not_an_object():
    with pytest.raises(BidImportError, match="expected a JSON object"):
        bid_from_json([example()])


def test_evaluation_of_exactly_the_limit_is_read():
    data = example()
    data["evaluation"]["media"] = "x" * 5000
    assert len(bid_from_json(data).evaluation.media) == 5000


def test_values_are_read_not_judged():
    data = example()
    data.update(prize_fund_eur="1.00", hotel_stars=9, wcoc_inspectors_invited=-1, venue_country="ZZ")
    bid = bid_from_json(data)
    codes = {f.code for f in failures(check_bid(REG, bid, today=today_for(REG)))}
    assert {"15.2c.minimum", "15.2g.stars", "15.2i.inspectors", "15.2b.venue_country"} <= codes


def test_a_file_with_several_problems_is_told_the_first_a_person_meets():
    # at each level: the unknown keys, then the missing ones, then the first refused value in the file's order
    data = example()
    del data["venue_city"]
    data.update(sponsor_logo="x.png", prize_fund_eur=5.0, room_rates=[{"room_type": 1}])
    assert str(_refusal(data)) == "sponsor_logo: unknown key"
    del data["sponsor_logo"]
    assert str(_refusal(data)) == "venue_city: missing"
    data["venue_city"] = "Lviv"
    assert str(_refusal(data)).startswith("prize_fund_eur: an amount is a string")
    data["prize_fund_eur"] = "5.00"
    assert str(_refusal(data)) == "room_rates[0].eur_per_night: missing"


def test_a_value_with_braces_is_quoted_as_it_is():
    data = example()
    data["hotel_stars"] = "{problem}"
    assert str(_refusal(data)) == "hotel_stars: expected a whole number or null, got '{problem}'"


def _refusal(data) -> BidImportError:
    with pytest.raises(BidImportError) as exc:
        bid_from_json(data)
    return exc.value
