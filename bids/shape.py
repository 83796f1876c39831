"""The bid's JSON shape: the file a paper bid is keyed in from (`flask bids import`), the data a submitted version
keeps, and the bid the API returns. Declared once, as pydantic models, and read strictly.

Every key is present (null where not filled in) and no other; amounts are strings of digits with at most two
decimals ("200000.00", never a JSON number, so that they are read exactly as Decimal), dates "YYYY-MM-DD". A
refusal names the key and the value: "prize_fund_eur: an amount is a string such as ...", "room_rates[0].meals:
unknown key". Whether the values meet the regulation is the compliance checks' question (bids.rules), not this
one's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import date
from decimal import Decimal
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    PlainSerializer,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    WrapValidator,
)
from pydantic_core import PydanticCustomError

from bids.data import (
    EVALUATION_FIELDS,
    EVALUATION_MAX_CHARS,
    JSON_FIELDS,
    TEXT_MAX_CHARS,
    BankGuarantee,
    BidData,
    Evaluation,
    RoomRate,
)
from core.money import amount_str
from core.validators import EMAIL_MAX_CHARS, NoSuchDayError, NotADateError, breaks_the_line, parse_amount, parse_day

# Whole numbers are stored in integer columns: anything beyond this is not a count of stars or inspectors.
INT_IMPORT_MAX = 2**31 - 1


class BidImportError(ValueError):
    """A JSON bid that cannot be read; the message starts with the key ("prize_fund_eur: ...")."""

    def __init__(self, key: str, problem: str):
        super().__init__(f"{key}: {problem}")
        self.key = key
        self.problem = problem


def _show(value: object) -> str:
    """A value in a message, kept short: a huge number, a long text or a deeply nested list is not echoed whole."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**15:
        return f"a number of {len(str(abs(value))) if abs(value) < 10**4000 else 'thousands of'} digits"
    if isinstance(value, list | dict):
        return f"a JSON {'list' if isinstance(value, list) else 'object'}"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# ------------------------------------------------------------------------------------------- field types

def _problem(problem: str) -> PydanticCustomError:
    """A refusal in the import's words; the key is added from where pydantic found it."""
    return PydanticCustomError("bid_json", "{problem}", {"problem": problem})


def _expected(words: Callable[[Any], str]) -> WrapValidator:
    """Pydantic's refusal of a value's type, in the import's words (`words(value)`). A refusal found inside the
    value (an item of a list, a key of an object) keeps its own, with its own path."""

    def reword(value: Any, handler: Callable[[Any], Any]) -> Any:
        try:
            return handler(value)
        except ValidationError as exc:
            if any(e["loc"] for e in exc.errors()):
                raise
            raise _problem(words(value)) from None

    return WrapValidator(reword)


def _text_rules(limit: int, *, one_line: bool = False) -> Callable[[str | None], str | None]:
    def clean(value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip()
        if len(value) > limit:
            raise _problem(f"at most {limit} characters, got {len(value)}")
        if "\x00" in value:
            raise _problem("contains a NUL character, which cannot be stored; remove it")
        # A one-line field refuses what the forms refuse (core.forms.BaseForm): any control character, and U+2028/9.
        bad = next((ch for ch in value if (breaks_the_line(ch) if one_line else ord(ch) < 32 and ch not in "\t\n\r")),
                   None)
        if bad is not None:
            what = "a line break" if bad in "\r\n\u2028\u2029" else f"the control character U+{ord(bad):04X}"
            raise _problem(f"contains {what}, which has no place in this one-line field; remove it" if one_line
                           else f"contains {what}, which cannot be shown or printed; remove it")
        return value or None  # blank text is not filled in
    return clean


def _read_amount(value: object) -> Decimal | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise _problem(f"an amount is a string such as \"200000.00\", so that it is read exactly, not a JSON "
                       f"number (got {_show(value)})")
    try:
        return parse_amount(value)
    except ValueError as exc:
        raise _problem(str(exc)) from None


def _read_day(value: object) -> date | None:
    if value is None:
        return None
    try:
        return parse_day(value)
    except NoSuchDayError:
        raise _problem(f"{_show(value)} is not a real date") from None
    except NotADateError:
        raise _problem(f"expected a date as \"YYYY-MM-DD\" or null, got {_show(value)}") from None


def _within_int_column(value: int | None) -> int | None:
    if value is not None and abs(value) > INT_IMPORT_MAX:
        raise _problem(f"expected a whole number of at most {INT_IMPORT_MAX}, got {_show(value)}")
    return value


def _amount_json(value: Decimal | None) -> str | None:
    return None if value is None else amount_str(value)


_TEXT_TYPE = _expected(lambda v: f"expected text or null, got {_show(v)}")
# Text is what the bid form asks in a single-line field (names, places, codes): one line, as there (issue 35).
Text = Annotated[StrictStr | None, _TEXT_TYPE, AfterValidator(_text_rules(TEXT_MAX_CHARS, one_line=True))]
LongText = Annotated[StrictStr | None, _TEXT_TYPE, AfterValidator(_text_rules(EVALUATION_MAX_CHARS))]
Email = Annotated[StrictStr | None, _TEXT_TYPE, AfterValidator(_text_rules(EMAIL_MAX_CHARS, one_line=True))]
# Decimal, read only from a string of plain digits (core.validators.parse_amount): a JSON number, a float above
# all, is refused, so no amount is ever rounded by being read.
Amount = Annotated[Decimal | None, BeforeValidator(_read_amount),
                   PlainSerializer(_amount_json, return_type=str | None, when_used="json")]
Day = Annotated[date | None, BeforeValidator(_read_day)]
Flag = Annotated[StrictBool | None, _expected(lambda v: f"expected true, false or null, got {_show(v)}")]
WholeNumber = Annotated[StrictInt | None, _expected(lambda v: f"expected a whole number or null, got {_show(v)}"),
                        AfterValidator(_within_int_column)]


# ------------------------------------------------------------------------------------------------ models

_STRICT = ConfigDict(extra="forbid", frozen=True, strict=True)


class RoomRateJSON(BaseModel):
    """A room rate: {"room_type": "single", "eur_per_night": "95.00"}."""

    model_config = _STRICT

    room_type: Text
    eur_per_night: Amount


class GuaranteeJSON(BaseModel):
    """A bank guarantee offered; none offered is null."""

    model_config = _STRICT

    bank: Text
    amount_eur: Amount
    valid_until: Day


class EvaluationJSON(BaseModel):
    """The texts on the criteria of Art. 15.5 c–j, keyed as EVALUATION_FIELDS."""

    model_config = _STRICT

    playing_conditions: LongText
    visas: LongText
    security: LongText
    chess_activity: LongText
    media: LongText
    development: LongText
    climate: LongText
    taxation: LongText


def _object_with(model: type[BaseModel]) -> str:
    return ", ".join(model.model_fields)


RoomRates = Annotated[
    list[Annotated[RoomRateJSON, _expected(
        lambda v: f"expected an object with {_object_with(RoomRateJSON)}, got {_show(v)}")]] | None,
    _expected(lambda v: f"expected a list of room rates, got {_show(v)}")]
Guarantee = Annotated[GuaranteeJSON | None, _expected(
    lambda v: f"expected null (none offered) or an object with {_object_with(GuaranteeJSON)}, got {_show(v)}")]
EvaluationTexts = Annotated[EvaluationJSON | None, _expected(
    lambda v: f"expected an object with {_object_with(EvaluationJSON)}, got {_show(v)}")]


class BidJSON(BaseModel):
    """A bid in its JSON shape: every field of BidData but the document flags, in the same order."""

    model_config = _STRICT

    applicant_type: Text
    applicant_name: Text
    host_federation: Text
    contact_name: Text
    contact_email: Email
    opening_date: Day
    closing_date: Day
    venue_name: Text
    venue_city: Text
    venue_country: Text
    prize_fund_eur: Amount
    fide_contribution_eur: Amount
    amounts_net_of_taxes: Flag
    commits_fide_obligations: Flag
    commits_organisational_costs: Flag
    accepts_regulations: Flag
    hotel_name: Text
    hotel_stars: WholeNumber
    room_rates: RoomRates
    wcoc_inspectors_invited: WholeNumber
    inspection_expenses_covered: Flag
    bank_guarantee: Guarantee
    ioc_conflict_free: Flag
    signatory_name: Text
    signatory_position: Text
    signed_on: Day
    evaluation: EvaluationTexts

    def to_bid(self) -> BidData:
        """The bid as the rules see it, with `documents_known=False`: JSON carries no files. Raises nothing."""
        values = {name: getattr(self, name) for name in JSON_FIELDS}
        g, e = self.bank_guarantee, self.evaluation
        values.update(
            room_rates=tuple(RoomRate(r.room_type, r.eur_per_night) for r in self.room_rates or ()),
            bank_guarantee=None if g is None else BankGuarantee(True, g.bank, g.amount_eur, g.valid_until),
            evaluation=Evaluation() if e is None else Evaluation(**e.model_dump()))
        return BidData(**values, documents_known=False)

    @classmethod
    def of(cls, bid: BidData) -> BidJSON:
        """The shape of a bid as it is (not validated again: a draft may hold what no rule accepts yet)."""
        values = {name: getattr(bid, name) for name in JSON_FIELDS}
        bg = bid.bank_guarantee
        values.update(
            room_rates=[RoomRateJSON.model_construct(room_type=r.room_type, eur_per_night=r.eur_per_night)
                        for r in bid.room_rates],
            bank_guarantee=GuaranteeJSON.model_construct(bank=bg.bank, amount_eur=bg.amount_eur,
                                                         valid_until=bg.valid_until)
            if bg is not None and bid.guarantee_offered else None,
            evaluation=EvaluationJSON.model_construct(**dataclasses.asdict(bid.evaluation)))
        return cls.model_construct(**values)


assert tuple(BidJSON.model_fields) == JSON_FIELDS, "the JSON shape has every BidData field, in order"
assert tuple(EvaluationJSON.model_fields) == tuple(f.key for f in EVALUATION_FIELDS)


# ----------------------------------------------------------------------------------------------- reading

def _key(loc: tuple[int | str, ...]) -> str:
    """("room_rates", 0, "eur_per_night") -> "room_rates[0].eur_per_night"."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _first_refusal(errors: list[Any], data: object) -> BidImportError:
    """The one refusal to report, as a person fixing the file meets them: at each level of the file, its unknown
    keys (all of them), else its missing keys (all of them), else the first key in order whose value is refused,
    looked into the same way."""
    depth = 0
    while True:
        if not errors[0]["loc"]:
            return BidImportError("bid", f"expected a JSON object, got {type(data).__name__}")
        here = [e for e in errors if len(e["loc"]) == depth + 1]
        for kind, problem in (("extra_forbidden", "unknown key"), ("missing", "missing")):
            keys = [_key(e["loc"]) for e in here if e["type"] == kind]
            if keys:
                return BidImportError(", ".join(keys), problem)
        first = errors[0]["loc"][:depth + 1]
        errors = [e for e in errors if e["loc"][:depth + 1] == first]
        own = next((e for e in errors if len(e["loc"]) == depth + 1), None)
        if own is not None:
            problem = own["msg"] if own["type"] == "bid_json" else f"{own['msg']} (got {_show(own['input'])})"
            return BidImportError(_key(own["loc"]), problem)
        depth += 1


def bid_from_json(data: object) -> BidData:
    """Read a bid from its JSON shape (as parsed by `json.loads`), strictly, through BidJSON.

    Every key of JSON_FIELDS must be present (null where not filled in); amounts are strings of digits with at
    most two decimals ("200000.00"), dates "YYYY-MM-DD". The result has `documents_known=False`: JSON carries
    no files, so missing documents are PENDING. Raises BidImportError naming the key for a missing or unknown
    key, a wrong type, an amount that is not a plain decimal, an impossible date or an over-long text. Whether
    the values meet the regulation is `check_bid`'s question, not this one's.
    """
    try:
        shape = BidJSON.model_validate(data)
    except ValidationError as exc:
        raise _first_refusal(exc.errors(include_url=False), data) from None
    return shape.to_bid()


def bid_to_json(bid: BidData) -> dict:
    """The bid in the JSON shape `bid_from_json` reads (amounts as "200000.00", dates ISO); no document flags.
    Raises nothing for a bid built from the database or from `bid_from_json`."""
    return BidJSON.of(bid).model_dump(mode="json")
