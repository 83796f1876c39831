"""The call's regulation as data: a frozen, strictly validated view of `seed_data/events/<slug>.toml`.

Nothing in Gambit repeats a figure of the regulations; it reads it from a `Regulation`. Each table of the file is
a frozen pydantic dataclass (unknown keys forbidden, strict types), so pydantic refuses an unknown key, a wrong
type or an impossible value; the loader names the key, so a typo in next year's file is caught when it is loaded,
not when a bidder meets it.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import re
import tomllib
from collections.abc import Callable
from dataclasses import field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Annotated, Any, Generic, NoReturn, TypeVar, cast, dataclass_transform, get_args

from markupsafe import escape
from pydantic import (
    AfterValidator,
    AwareDatetime,
    ConfigDict,
    GetCoreSchemaHandler,
    PlainValidator,
    TypeAdapter,
    ValidationError,
    model_validator,
)
from pydantic.dataclasses import dataclass as pydantic_dataclass
from pydantic_core import core_schema

from evidence.hashing import canonical_json

FORMAT_VERSION = 1


class RegulationError(ValueError):
    """A regulation file that cannot be used; the message names the key and what is wrong."""


class _Refused(ValueError):
    """A value check of a table refused a value: `key` (relative to the table, may be "") names it."""

    def __init__(self, why: str, key: str = "") -> None:
        super().__init__(why)
        self.key = key


# ----------------------------------------------------------------------------------------------- value types
# A table's keys are typed with these: TOML gives no Decimal, so an amount or a share is a string ("0.20") and a
# TOML number (an int or a binary float) is refused by name, never read as a float.


def _decimal(value: object) -> Decimal:
    if isinstance(value, Decimal):  # built in code (a test's dataclasses.replace), not read from a file
        return value
    if not isinstance(value, str):
        raise _Refused(f"expected a decimal number as a string (for example \"0.20\"), got {value!r}")
    try:
        d = Decimal(value)
    except InvalidOperation:
        raise _Refused(f"{value!r} is not a decimal number") from None
    if not d.is_finite():
        raise _Refused(f"{value!r} is not a finite number")
    return d


def _check(test: Callable[[Any], bool], why: str) -> AfterValidator:
    """A value check: refuses a value for which `test` is false with `why` (formatted with the value)."""
    def check(value: Any) -> Any:
        if not test(value):
            raise _Refused(why.format(value))
        return value
    return AfterValidator(check)


Text = Annotated[str, _check(lambda s: bool(s.strip()), "expected non-empty text, got {!r}")]
Number = Annotated[Decimal, PlainValidator(_decimal)]
Amount = Annotated[Number, _check(lambda d: d >= 0, "an amount cannot be negative, got {}"),
                   _check(lambda d: d == d.quantize(Decimal("0.01")), "an amount has at most two decimals, got {}")]
Share = Annotated[Number, _check(lambda d: 0 <= d <= 1, "a share must lie between 0 and 1, got {}")]
Count = Annotated[int, _check(lambda n: n >= 0, "cannot be negative")]
Moment = Annotated[AwareDatetime, AfterValidator(lambda d: d.astimezone(UTC))]

_TABLE = ConfigDict(extra="forbid", frozen=True, strict=True)


T = TypeVar("T")
V = TypeVar("V")


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def table(cls: type[T]) -> type[T]:
    """A table of the call file: a frozen dataclass that pydantic validates (unknown keys forbidden, no coercion).
    Building one in code with an impossible value raises pydantic's ValidationError; the loader names the key."""
    return cast(type[T], pydantic_dataclass(config=_TABLE)(cls))


class FrozenTable(dict[str, V], Generic[V]):
    """A read-only, hashable table of a call file (key -> value), so a Regulation stays hashable."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items())))

    def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("a regulation's table cannot be changed")

    __setitem__ = __delitem__ = update = pop = popitem = clear = setdefault = _refuse

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        (inner,) = get_args(source) or (Any,)
        values = core_schema.dict_schema(core_schema.str_schema(), handler.generate_schema(inner))
        return core_schema.no_info_after_validator_function(cls, values)


# ----------------------------------------------------------------------------------------------- shape


@table
class EventInfo:
    slug: Annotated[Text, _check(lambda s: s.replace("-", "").isalnum() and s == s.lower(),
                                 "use lower-case letters, digits and hyphens, got {!r}")]
    title: Text
    short_title: Text
    regulations_title: Text
    organiser: Text
    practice: bool
    currency: Annotated[Text, _check(lambda c: c == "EUR", "only EUR is supported, got {!r}")]
    bid_deadline: Moment


@table
class Player:
    name: Text
    title: Text
    federation: Annotated[Text, _check(lambda s: len(s) == 3 and s.isupper(),
                                       "a FIDE code is three capital letters, got {!r}")]
    country: Annotated[Text, _check(lambda s: len(s) == 2 and s.isupper(),
                                    "an ISO country code is two capital letters, got {!r}")]
    qualification: Text


DAY_KINDS = ("opening", "game", "rest", "tiebreak")


def _is_time(hhmm: str) -> bool:
    hh, _, mm = hhmm.partition(":")
    return hh.isdigit() and mm.isdigit() and int(hh) < 24 and int(mm) < 60


@table
class Schedule:
    article: Text
    window_article: Text
    window_start: date
    window_end: date
    round_time_article: Text
    round_time: Annotated[Text, _check(_is_time, "expected HH:MM, got {!r}")]
    days: tuple[Text, ...]
    closing_article: Text
    closing_days_after_last_day: tuple[int, ...]

    @model_validator(mode="after")
    def _dates_and_days(self) -> Schedule:
        if self.window_end < self.window_start:
            raise _Refused(f"{self.window_end} is before schedule.window_start {self.window_start}", "window_end")
        bad = [d for d in self.days if d not in DAY_KINDS]
        if bad:
            raise _Refused(f"unknown kind of day {bad[0]!r} (use {', '.join(DAY_KINDS)})", "days")
        if not self.days or self.days[0] != "opening" or "game" not in self.days:
            raise _Refused("the schedule starts with the opening ceremony and has at least one game", "days")
        if not self.closing_days_after_last_day or min(self.closing_days_after_last_day) < 1:
            raise _Refused("the closing ceremony comes at least one day after", "closing_days_after_last_day")
        return self


@table
class PrizeFund:
    article: Text
    bid_article: Text
    minimum: Amount
    maximum: Amount
    target: Amount
    net_of_taxes_required: bool

    @model_validator(mode="after")
    def _order(self) -> PrizeFund:
        if self.minimum <= 0:
            raise _Refused(f"must be above zero, got {self.minimum}", "minimum")
        if not (self.minimum < self.target <= self.maximum):
            raise _Refused(f"must lie above the minimum and at most the maximum, got {self.target}", "target")
        return self


@table
class FideContribution:
    article: Text
    bid_article: Text
    min_share_of_prize_fund: Share


WinnerShare = Annotated[Share, _check(lambda d: d >= Decimal("0.5"),
                                      "the winner's share cannot be below half, got {}")]


@table
class PrizeSplit:
    article: Text
    regular_winner_share: WinnerShare
    tiebreak_winner_share: WinnerShare
    home_article: Text
    home_opponent_share: Share
    advance_article: Text
    advance_per_player: Amount
    balance_due_days_after_completion: Count


@table
class Stipend:
    principal: Text
    amount: Amount


@table
class Obligations:
    commercial_rights_article: Text
    commercial_rights_share: Share
    wcoc_budget_article: Text
    wcoc_budget: Amount
    signal_blocker_article: Text
    signal_blocker_cap: Amount
    home_compensation_article: Text
    home_compensation: Amount
    travel_article: Text
    travel_contribution_per_team: Amount
    stipends_article: Text
    stipends: tuple[Stipend, ...]


@table
class Hotel:
    article: Text
    min_stars: Annotated[int, _check(lambda n: 1 <= n <= 5, "hotel categories run from 1 to 5 stars, got {}")]


@table
class Inspection:
    article: Text
    also_article: Text
    min_inspectors: Count


GUARANTEE_COVERS = ("prize_fund", "fide_contribution")


@table
class Guarantee:
    article: Text
    must_cover: tuple[Annotated[Text, _check(lambda c: c in GUARANTEE_COVERS,
                                             f"unknown item {{!r}} (use {', '.join(GUARANTEE_COVERS)})")], ...]
    valid_past_last_deadline: bool


UNSIGNED_POLICIES = ("warn", "block")


@table
class Signatures:
    """The call's bidding procedure (not the regulations) on digital signatures: whether a letter of application
    whose signature is missing, broken or untrusted only warns ("warn") or stops the submission ("block")."""

    unsigned_letter: Annotated[Text, _check(lambda p: p in UNSIGNED_POLICIES,
                                            f"use {' or '.join(UNSIGNED_POLICIES)}, got {{!r}}")] = "warn"


TIE_BREAKS = ("new_round",)


@table
class BoardVoting:
    """The call's bidding procedure (not the regulations: Art. 15.5 sets no tie-break) on a tied vote of the
    Presidential Board: "new_round", the members vote again until one bid has the most votes."""

    tie_break: Annotated[Text, _check(lambda t: t in TIE_BREAKS, f"use {' or '.join(TIE_BREAKS)}, got {{!r}}")] = \
        "new_round"


@table
class Instalment:
    due: date
    prize_fund_share: Share
    description: Text
    rest_of_obligations: bool = False


def _plan(insts: tuple[Instalment, ...]) -> tuple[Instalment, ...]:
    """A plan of instalments: in date order, shares adding up to 1, the last one taking the rest."""
    for i in range(1, len(insts)):
        if insts[i].due <= insts[i - 1].due:
            raise _Refused("instalments must be listed in date order", f"[{i}].due")
    if insts:
        total = sum((inst.prize_fund_share for inst in insts), Decimal(0))
        if total != 1:
            raise _Refused(f"the prize fund shares must add up to 1, they add up to {total}")
        if sum(1 for inst in insts if inst.rest_of_obligations) != 1 or not insts[-1].rest_of_obligations:
            raise _Refused("exactly the last instalment carries rest_of_obligations = true")
    return insts


Plan = Annotated[tuple[Instalment, ...], AfterValidator(_plan)]


@table
class Payments:
    article: Text
    contract_article: Text
    with_guarantee: Plan
    without_guarantee: Plan = ()


@table
class FideBank:
    article: Text
    bank: Text
    address: Text
    swift: Text
    account: Text
    iban: Text
    holder: Text


@table
class Anchor:
    score: Number
    label: Text


@table
class Scoring:
    article: Text
    scale_min: Number
    scale_max: Number
    step: Number
    anchors: tuple[Anchor, ...]
    comment_required_for: tuple[Number, ...]
    red_flag_criteria: tuple[Text, ...]
    red_flag_threshold: Number
    overall_threshold: Number
    disagreement_range: Number
    disagreement_stdev: Number
    dirichlet_concentration: Number
    dirichlet_samples: int
    dirichlet_seed: int
    prize_fund_reference_at_minimum: Number
    # The verdict of scoring.sensitivity: robust when the leader comes first in at least `robust_share` of the
    # sampled weightings and no single-criterion weight change under `robust_shift_points` lets a rival level.
    robust_share: Annotated[Number, _check(lambda d: 0 < d <= 1,
                                           "a share of first places lies above 0 and at most 1, got {}")]
    robust_shift_points: Annotated[Number, _check(
        lambda d: 0 <= d <= 100, "percentage points of the total weight lie between 0 and 100, got {}")]

    @model_validator(mode="after")
    def _scale(self) -> Scoring:
        if not (self.scale_min < self.scale_max) or self.step <= 0:
            raise _Refused("the scale needs scale_min < scale_max and a positive step", "scale_max")
        for i, a in enumerate(self.anchors):
            if not (self.scale_min <= a.score <= self.scale_max):
                raise _Refused(f"{a.score} lies outside the scale", f"anchors[{i}].score")
        if self.dirichlet_samples < 1 or self.dirichlet_concentration <= 0:
            raise _Refused("sampling needs at least one sample and a positive concentration", "dirichlet_samples")
        return self


@table
class Criterion:
    key: Text
    article: Text
    label: Text
    weight: Annotated[Number, _check(lambda d: d >= 0, "a weight cannot be negative, got {}")]


@dataclasses.dataclass(frozen=True)
class ScheduleDay:
    """One day of the Art. 2.2 schedule for given dates."""

    number: int
    on: date
    kind: str
    label: str

    @property
    def is_closing(self) -> bool:
        """The closing ceremony (its day is a choice within the rules, not a fixed day of the programme)."""
        return self.kind == "closing"

# ---------------------------------------------------------------------------------------------- provenance
# How a rule gets its citation: code and templates never write an article number. A rule names its source by
# a stable key and asks the call's regulation: `reg.citation("rejection")` gives a `Citation` whose str() is
# "Art. 15.3", "Bidding procedure: guarantee terms" or "Sanity check: prize fund figure"; `reg.article("rejection")`
# gives "15.3" alone. The call file keeps the three kinds apart: [citations] (what the regulations say, key =
# article), [procedure] (the call's bidding procedure, published with the call) and [sanity_checks] (Gambit's
# own warnings about a figure, never a rule). A key lives in exactly one of them.


_PLACEHOLDER = re.compile(r"\{(cite|criterion|art):([a-z0-9_.]+)\}")


class SourceKind(enum.StrEnum):
    REGULATION = "regulation"
    PROCEDURE = "procedure"
    SANITY_CHECK = "sanity_check"


@dataclasses.dataclass(frozen=True)
class Citation:
    """Where a rule comes from. `ref` is the article ("15.2(c)") for a regulation, else the rule's label."""

    key: str
    kind: SourceKind
    ref: str
    document: str = ""
    fields: tuple[str, ...] = ()

    @property
    def is_article(self) -> bool:
        return self.kind is SourceKind.REGULATION

    @property
    def article(self) -> str:
        """The article number, or "" when the rule is not the regulations' (so nothing cites it as one)."""
        return self.ref if self.is_article else ""

    @property
    def label(self) -> str:
        if self.kind is SourceKind.REGULATION:
            return f"Art. {self.ref}"
        if self.kind is SourceKind.PROCEDURE:
            return f"Bidding procedure: {self.ref}"
        return f"Sanity check: {self.ref}"

    def __str__(self) -> str:
        return self.label

    def __html__(self) -> str:  # Jinja prints a Citation as its label, escaped
        return str(escape(self.label))


@table
class SourcedRule:
    """A rule of the bidding procedure or a sanity check: its label and the fields of the call file it reads."""

    label: Text
    fields: tuple[Text, ...] = ()
    says: Text = ""


@table
class Procedure:
    """The call's bidding procedure: the document it is (published with the call) and its rules by key."""

    document: Text
    rules: FrozenTable[SourcedRule]


@table
class RegulationsText:
    """The text of the regulations, stored beside the call file; `sha256` is checked when the file is loaded."""

    file: Text
    sha256: Annotated[Text, _check(lambda h: len(h) == 64 and all(c in "0123456789abcdef" for c in h),
                                   "expected 64 lower-case hexadecimal digits")]


# ----------------------------------------------------------- obligations in kind, pre-match days, results, amendments
# Each of these tables is optional in the file, so a call file without them, and a snapshot stored without them,
# still loads.


def _each_key_once(items: tuple[Any, ...]) -> tuple[Any, ...]:
    if len({item.key for item in items}) != len(items):
        raise _Refused("each key once")
    return items


@table
class InKind:
    """An obligation the organizer meets in kind (a room, a car, a trophy), quoted or summarised from `article`."""

    article: Text
    title: Text
    text: Text


@table
class Undertaking:
    """A condition the organizer undertakes besides providing something (to carry out the FIDE Supervisor's
    decisions, to leave FIDE the commercial rights), quoted or summarised from `article`."""

    article: Text
    title: Text
    text: Text


@table
class PreMatchDay:
    """A day before the first game the regulations fix (an inspection, the first players' meeting)."""

    key: Text
    article: Text
    label: Text
    days_before_first_game: Annotated[int, _check(lambda n: n >= 1, "at least 1, got {}")]
    time: Text = ""


@table
class ScheduleRules:
    """The dated schedule as the regulations publish it and the closing rule of the ceremonies article.

    The window of dates (`schedule.window_*`) bounds the event, from the opening to the closing ceremony; the
    pre-match days (`pre_match`) are dated from game 1 and may fall before it (the regulations' own schedule puts
    the accommodation inspection the day before the window opens), so no key makes them a condition of it."""

    published_article: Text
    published_first_game: date
    closing_end_article: Text
    closing_latest_days_after_end: Annotated[int, _check(lambda n: n >= 1,
                                                         "the closing ceremony comes at least one day after")]
    closing_conflict_note: Text


@table
class ResultRules:
    """When a match decided in the regular games can at the earliest be over: the first player to reach
    `winning_score` wins, one point a game."""

    article: Text
    winning_score: Number
    replacement_article: Text = ""
    replacement_text: Text = ""


@table
class DeductionRecipient:
    """Who receives a part of a forfeited share (Art. 5.2 for 2015: 5% to the Organizer, a further 5% to FIDE)."""

    key: Text
    label: Text
    share: Share


@table
class DeductionRule:
    """Something the regulations take from a player's prize (a fine, a forfeited share, a withheld fee).

    `amount` is the fixed amount or the maximum (`up_to`); `share` a share of the prize money (per breach), or
    `recipients`, each receiving its own share (added up, they make `share` when both are given). `returned_if`, when
    given, says when the amount is returned to the player (a protest fee, if the protest is accepted)."""

    key: Text
    article: Text
    title: Text
    text: Text
    amount: Amount | None = None
    up_to: bool = False
    share: Share | None = None
    recipients: Annotated[tuple[DeductionRecipient, ...], AfterValidator(_each_key_once)] = ()
    returned_if: str = ""

    @model_validator(mode="after")
    def _amount_or_share(self) -> DeductionRule:
        if self.amount is None and self.share is None and not self.recipients:
            raise _Refused("give an amount, a share or the recipients of shares")
        if self.recipients:
            if self.amount is not None:
                raise _Refused("recipients receive shares of the prize money, not an amount", "recipients")
            total = sum((r.share for r in self.recipients), Decimal(0))
            if self.share is not None and self.share != total:
                raise _Refused(f"the recipients' shares add up to {total}, not to the share {self.share}", "share")
        return self


@table
class Consultation:
    """FIDE consults the host federation on a sponsor's bid before it may be selected."""

    article: Text
    text: Text


@table
class Covered:
    """An item of the call file that the regulations themselves cover (`key`, a dotted key of the file, covers what
    is under it; `article`, where the regulations say it, or "" for a table whose entries each name their own
    article): changed only as the article on changes to the regulations says (Art. 1.1), never by an authority
    that decides only what the regulations do not cover."""

    key: Text
    article: str = ""

    def covers(self, changed: str) -> bool:
        """Whether a changed key ("prize_fund.minimum", "schedule.days[3]") is this item or under it."""
        return changed == self.key or changed.startswith((f"{self.key}.", f"{self.key}["))


@table
class AmendmentGrounds:
    """One of the grounds on which an authority may decide (Art. 16: grounds not covered, an unforeseen event)."""

    key: Text
    label: Text


@table
class AmendmentAuthority:
    """Who may change the regulations of the call, and under which article. `upon_recommendation_by`: the body
    whose recommendation the authority acts upon (its amendment records that recommendation: who, when, what);
    `grounds`: when given, the authority decides only on one of them, and its amendment says which."""

    key: Text
    article: Text
    label: Text
    upon_recommendation_by: str = ""
    grounds: Annotated[tuple[AmendmentGrounds, ...], AfterValidator(_each_key_once)] = ()
    # When given, the authority changes only what the call's `covered` list does not name (Art. 16: cases the
    # regulations do not cover); its amendment records this text as its grounds. The list decides, not a claim.
    not_covered_only: str = ""

    def ground(self, key: str) -> AmendmentGrounds:
        """The grounds with this key. Raises KeyError when the authority has none such."""
        for g in self.grounds:
            if g.key == key:
                return g
        raise KeyError(key)


ARTICLE_STATUSES = ("applied", "procedure", "sanity", "not_applicable")


@table
class ArticleEntry:
    """One article of the regulations and what Gambit does with it: "applied" (Gambit checks or applies it),
    "procedure" (the article leaves it to the call's bidding procedure), "sanity" (Gambit only checks a figure of
    it) or "not_applicable" (it does not bear on bidding, selection, the contract or payment). `where` says where
    Gambit applies it, `reason` why it does not apply, `reading` which reading of an ambiguous article Gambit
    applies and why."""

    article: Text
    status: Annotated[Text, _check(lambda s: s in ARTICLE_STATUSES,
                                   f"use {', '.join(ARTICLE_STATUSES[:-1])} or {ARTICLE_STATUSES[-1]}, got {{!r}}")]
    where: Text = ""
    reason: Text = ""
    reading: Text = ""

    @model_validator(mode="after")
    def _explained(self) -> ArticleEntry:
        if self.status == "not_applicable" and not self.reason:
            raise _Refused(f"article {self.article} is not_applicable: say why it does not bear on the call", "reason")
        if self.status != "not_applicable" and not self.where:
            raise _Refused(f"article {self.article} is {self.status}: say where Gambit applies it", "where")
        if self.status != "not_applicable" and self.reason:
            raise _Refused(f"article {self.article} is {self.status}: only a not_applicable article gives a reason",
                           "reason")
        return self


def _each_article_once(entries: tuple[ArticleEntry, ...]) -> tuple[ArticleEntry, ...]:
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        if entry.article in seen:
            raise _Refused(f"article {entry.article} is listed twice", f"[{i}].article")
        seen.add(entry.article)
    return entries


def _two_players(players: tuple[Player, ...]) -> tuple[Player, ...]:
    if len(players) != 2:
        raise _Refused(f"a match has two players, the file names {len(players)}")
    return players


def _criteria(criteria: tuple[Criterion, ...]) -> tuple[Criterion, ...]:
    keys = [c.key for c in criteria]
    if not keys:
        raise _Refused("at least one criterion")
    if len(set(keys)) != len(keys):
        raise _Refused(f"each key once, got {', '.join(keys)}")
    if sum(c.weight for c in criteria) <= 0:
        raise _Refused("the weights add up to zero")
    return criteria


@table
class Regulation:
    format: Annotated[int, _check(lambda n: n == FORMAT_VERSION,
                                  f"this Gambit reads format {FORMAT_VERSION}, the file says {{}}")]
    event: EventInfo
    players: Annotated[tuple[Player, ...], AfterValidator(_two_players)]
    schedule: Schedule
    prize_fund: PrizeFund
    fide_contribution: FideContribution
    prize_split: PrizeSplit
    obligations: Obligations
    hotel: Hotel
    inspection: Inspection
    guarantee: Guarantee
    payments: Payments
    fide_bank: FideBank
    scoring: Scoring
    criteria: Annotated[tuple[Criterion, ...], AfterValidator(_criteria)]
    # Provenance: the regulations' articles by rule, the bidding procedure, the sanity checks, the text.
    citations: FrozenTable[Annotated[Text, _check(lambda a: a[:1].isdigit(),
                                                  "an article number starts with a digit, got {!r}")]]
    procedure: Procedure
    sanity_checks: FrozenTable[SourcedRule]
    regulations_text: RegulationsText
    signatures: Signatures = Signatures()
    board_voting: BoardVoting = BoardVoting()
    # The optional tables: obligations in kind, undertakings, the days before the match, the schedule's rules, the
    # result, deductions, the consultation of Art. 15.1 and who may amend the call.
    in_kind: tuple[InKind, ...] = ()
    undertakings: tuple[Undertaking, ...] = ()
    pre_match: Annotated[tuple[PreMatchDay, ...], AfterValidator(_each_key_once)] = ()
    schedule_rules: ScheduleRules | None = None
    result: ResultRules | None = None
    deductions: Annotated[tuple[DeductionRule, ...], AfterValidator(_each_key_once)] = ()
    consultation: Consultation | None = None
    amendment_authorities: Annotated[tuple[AmendmentAuthority, ...], AfterValidator(_each_key_once)] = ()
    # What the regulations cover, item by item of this file (Art. 16 decides only what they do not).
    covered: Annotated[tuple[Covered, ...], AfterValidator(_each_key_once)] = ()
    # Every article of the regulations with its status on the articles page (optional in the file).
    articles: Annotated[tuple[ArticleEntry, ...], AfterValidator(_each_article_once)] = ()
    # The canonical JSON the regulation was built from and its SHA-256: what an event stores.
    snapshot: str = field(default="", compare=False, repr=False)
    sha256: str = field(default="", compare=False, repr=False)
    # The regulations' text itself, read beside the call file (checked against regulations_text.sha256).
    text: str = field(default="", compare=False, repr=False)

    # ---- derived facts (pure; no figure is written here, each comes from the fields above)

    def __repr__(self) -> str:
        # The whole call is tens of kilobytes: a log line, a traceback or a test's report names which call it is.
        return f"Regulation(event={self.event.slug!r})"

    @property
    def last_scheduled_day_offset(self) -> int:
        """Days from the opening ceremony to the last scheduled day (the tie-break day for 2015)."""
        return len(self.schedule.days) - 1

    def closing_offsets(self) -> tuple[int, ...]:
        """Allowed distances, in days, from the opening ceremony to the closing ceremony (Art. 2.2, 10.3)."""
        last = self.last_scheduled_day_offset
        return tuple(last + n for n in self.schedule.closing_days_after_last_day)

    def allowed_closing_offsets(self) -> tuple[int, ...]:
        """The distances, in days, from the opening to the closing ceremony that every closing rule allows: the
        schedule's (`closing_offsets`) and, when the file has one, the ceremonies article's latest day."""
        rules = self.schedule_rules
        if rules is None:
            return self.closing_offsets()
        latest = self.last_scheduled_day_offset + rules.closing_latest_days_after_end
        return tuple(n for n in self.closing_offsets() if n <= latest)

    def closing_days_allowed(self) -> tuple[int, ...]:
        """The days after the last scheduled day on which the closing ceremony may be held under every closing rule
        (Art. 2.2 read with Art. 10.3 for 2015: (1,)): what the public page says and the bid's checks accept."""
        last = self.last_scheduled_day_offset
        return tuple(n - last for n in self.allowed_closing_offsets())

    def possible_opening_dates(self) -> list[date]:
        """The opening-ceremony dates the call offers, and the only ones the bid's checks accept: those for which
        the whole event, from the opening ceremony to a closing ceremony every closing rule allows, lies in the
        window of dates. The days before game 1 play no part (see `ScheduleRules`). Raises nothing."""
        s = self.schedule
        allowed = self.allowed_closing_offsets()
        if not allowed:
            return []
        earliest_close = min(allowed)
        out = []
        day = s.window_start
        while day + timedelta(days=earliest_close) <= s.window_end:
            out.append(day)
            day += timedelta(days=1)
        return out

    def schedule_for(self, opening: date, closing: date | None = None) -> list[ScheduleDay]:
        """The day-by-day programme of Art. 2.2 for an opening-ceremony date, closing ceremony included."""
        days = []
        game = 0
        for i, kind in enumerate(self.schedule.days):
            if kind == "game":
                game += 1
                label = f"Game {game}, {self.schedule.round_time}"
            elif kind == "opening":
                label = "Opening ceremony"
            elif kind == "rest":
                label = "Rest day"
            else:
                label = f"Tie-break games, if needed, {self.schedule.round_time}"
            days.append(ScheduleDay(i + 1, opening + timedelta(days=i), kind, label))
        if closing is None:
            closing = opening + timedelta(days=min(self.closing_offsets()))
        if closing > days[-1].on:
            days.append(ScheduleDay((closing - opening).days + 1, closing, "closing", "Closing ceremony"))
        return days

    def programme(self, opening: date, closing: date | None = None) -> list[ScheduleDay]:
        """What a bid, the dossier and the contract show of the dates: the days before game 1 the organizer hosts
        (`pre_match_schedule`), then the schedule of `schedule_for`. Raises nothing."""
        return pre_match_schedule(self, opening) + self.schedule_for(opening, closing)

    @property
    def number_of_games(self) -> int:
        return sum(1 for k in self.schedule.days if k == "game")

    @property
    def last_payment_deadline(self) -> date | None:
        dues = [i.due for i in self.payments.with_guarantee + self.payments.without_guarantee]
        return max(dues) if dues else None

    def player_countries(self) -> dict[str, Player]:
        return {p.country: p for p in self.players}

    def criterion(self, key: str) -> Criterion:
        for c in self.criteria:
            if c.key == key:
                return c
        raise KeyError(key)

    # ---- provenance: every citation is looked up here by its stable key

    def citation(self, key: str) -> Citation:
        """The source of the rule named `key`: an article of the regulations, a rule of the call's bidding
        procedure, or a sanity check. Raises KeyError naming the key when the call file does not have it."""
        if key in self.citations:
            return Citation(key, SourceKind.REGULATION, self.citations[key])
        if key in self.procedure.rules:
            r = self.procedure.rules[key]
            return Citation(key, SourceKind.PROCEDURE, r.label, self.procedure.document, r.fields)
        if key in self.sanity_checks:
            r = self.sanity_checks[key]
            return Citation(key, SourceKind.SANITY_CHECK, r.label, "Gambit", r.fields)
        raise KeyError(f"the call file has no citation {key!r} in [citations], [procedure.rules] or "
                       "[sanity_checks]")

    def article(self, key: str) -> str:
        """The article number of a rule of the regulations ("15.3"). Raises KeyError when `key` is not in
        [citations] (a procedure rule or a sanity check has no article, and is never cited as one)."""
        if key not in self.citations:
            raise KeyError(f"{key!r} is not an article of the regulations in this call file's [citations]")
        return self.citations[key]

    def cite_text(self, text: str) -> str:
        """`text` with its citation placeholders filled from this call: "{cite:applicant}" -> "Art. 15.1" (or
        the procedure's / sanity check's label), "{criterion:c}" -> "Art. 15.5(c)", "{art:hotel.article}" ->
        "Art. 15.2(g)" (a field of the regulation). For labels written once in code, such as a form's. Raises
        KeyError or AttributeError for a placeholder this call does not have."""
        def fill(m: re.Match[str]) -> str:
            kind, key = m.group(1), m.group(2)
            if kind == "cite":
                return str(self.citation(key))
            if kind == "criterion":
                return f"Art. {self.criterion(key).article}"
            value = self
            for part in key.split("."):
                value = getattr(value, part)
            return f"Art. {value}"
        return _PLACEHOLDER.sub(fill, text)

    def all_citations(self) -> list[Citation]:
        """Every rule with its source, regulations first (in the file's order), then procedure, then checks."""
        return ([self.citation(k) for k in self.citations] + [self.citation(k) for k in self.procedure.rules]
                + [self.citation(k) for k in self.sanity_checks])

    def shifted(self, *, years: int, slug: str, title: str, practice: bool = True) -> Regulation:
        """The same rules with every date moved by whole years: the practice call of the demo."""
        data = json.loads(self.snapshot)

        def move(value: str) -> str:
            if len(value) == 10:
                d = date.fromisoformat(value)
                return d.replace(year=d.year + years).isoformat()
            dt = datetime.fromisoformat(value)
            return dt.replace(year=dt.year + years).isoformat()

        old_year = str(self.schedule.window_start.year)
        data["event"].update(
            slug=slug, title=title, practice=practice,
            short_title=data["event"]["short_title"].replace(old_year, str(int(old_year) + years)),
            bid_deadline=move(data["event"]["bid_deadline"]),
        )
        s = data["schedule"]
        s["window_start"], s["window_end"] = move(s["window_start"]), move(s["window_end"])
        for key in ("with_guarantee", "without_guarantee"):
            for inst in data["payments"].get(key, []):
                inst["due"] = move(inst["due"])
        if data.get("schedule_rules"):  # the published dates move with the window
            data["schedule_rules"]["published_first_game"] = move(data["schedule_rules"]["published_first_game"])
        return dataclasses.replace(regulation_from_dict(data), text=self.text)


# ------------------------------------------------------------------------------- pydantic's refusal, by key

_EXPECTED = {"bool": "true or false", "int": "a whole number", "string": "non-empty text", "dataclass": "a table",
             "dict": "a table", "tuple": "a list", "list": "a list", "date": "a date (YYYY-MM-DD)",
             "datetime": "a date and time with a time zone", "timezone": "a date and time with a time zone"}


def _key(loc: tuple[str | int, ...]) -> str:
    """A location of pydantic's as the file names it: "obligations.stipends[1].amount"."""
    key = ""
    for part in loc:
        if isinstance(part, int):
            key += f"[{part}]"
        elif part.startswith("["):
            key += part
        elif part:
            key += f".{part}" if key else part
    return key


def _refusal(exc: ValidationError) -> RegulationError:
    """Today's message for pydantic's first error: the key, then what is wrong with the value ("hotel.min_stars:
    expected a whole number, got '4'"); every unknown key of the file at once."""
    errors = exc.errors()
    unknown = [_key(e["loc"]) for e in errors if e["type"] in ("unexpected_keyword_argument", "extra_forbidden")]
    if unknown:
        return RegulationError(f"{', '.join(sorted(unknown))}: unknown key")
    e = errors[0]
    key, kind, value = _key(e["loc"]), e["type"], e.get("input")
    error = e.get("ctx", {}).get("error")
    if isinstance(error, _Refused):
        return RegulationError(f"{_key((*e['loc'], error.key))}: {error}")
    if kind == "missing":
        return RegulationError(f"{key}: missing")
    if kind in ("date_parsing", "date_from_datetime_parsing", "date_from_datetime_inexact") and isinstance(value, str):
        return RegulationError(f"{key}: {value!r} is not a date (YYYY-MM-DD)")
    if kind == "datetime_parsing" and isinstance(value, str):
        try:
            datetime.fromisoformat(value)  # a date alone, or a date and time without a zone, is only incomplete
        except ValueError:
            return RegulationError(f"{key}: {value!r} is not a date and time")
    expected = _EXPECTED.get(kind.split("_")[0])
    if expected:
        return RegulationError(f"{key}: expected {expected}, got {value!r}")
    return RegulationError(f"{key}: {e['msg']}, got {value!r}")


def _fail(key: str, why: str) -> NoReturn:
    raise RegulationError(f"{key}: {why}")


def _check_across(reg: Regulation, data: dict[str, Any]) -> None:
    """The rules that join tables, which no table can check alone. Raises RegulationError naming the key."""
    if not reg.allowed_closing_offsets():
        _fail("schedule_rules.closing_latest_days_after_end",
              "no closing day of schedule.closing_days_after_last_day is that early")
    if not reg.possible_opening_dates():
        _fail("schedule.window_end", "the window is too short for the schedule of days and the closing ceremony")
    keys = [c.key for c in reg.criteria]
    for i, k in enumerate(reg.scoring.red_flag_criteria):
        if k not in keys:
            _fail(f"scoring.red_flag_criteria[{i}]", f"no criterion {k!r}")
    if reg.payments.with_guarantee and reg.event.bid_deadline.date() >= reg.payments.with_guarantee[0].due:
        _fail("event.bid_deadline", "the bid deadline must come before the first payment deadline")
    if reg.result is not None and not (0 < reg.result.winning_score <= reg.number_of_games):
        _fail("result.winning_score", f"must lie above 0 and at most the {reg.number_of_games} games, got "
                                      f"{reg.result.winning_score}")
    # Provenance: a key belongs to one kind only; a procedure rule or a check names fields the file has.
    _check_one_source(reg)
    _check_fields_named(reg, data)


def _check_one_source(reg: Regulation) -> None:
    """No key is both a citation, a procedure rule or a sanity check: a rule has one source."""
    kinds = {"citations": set(reg.citations), "procedure.rules": set(reg.procedure.rules),
             "sanity_checks": set(reg.sanity_checks)}
    names = list(kinds)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            both = sorted(kinds[a] & kinds[b])
            if both:
                _fail(f"{b}.{both[0]}", f"is also in [{a}]: a rule has one source")


def _check_fields_named(reg: Regulation, data: dict[str, Any]) -> None:
    """Each field a procedure rule or a sanity check names (a dotted path) is in the call file."""
    for table_name, rules in (("procedure.rules", reg.procedure.rules), ("sanity_checks", reg.sanity_checks)):
        for key, rule in rules.items():
            for i, path in enumerate(rule.fields):
                node = data
                for part in path.split("."):
                    if not isinstance(node, dict) or part not in node:
                        _fail(f"{table_name}.{key}.fields[{i}]", f"the call file has no {path!r}")
                    node = node[part]


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, datetime):
        # A datetime without a zone stays without one, so the validation can refuse it by name.
        return value.astimezone(UTC).isoformat() if value.tzinfo else value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    return value


# ------------------------------------------------------------------------------------------ public API

_DERIVED = ("snapshot", "sha256", "text")  # fields of a Regulation that never come from the file
_VALIDATOR = TypeAdapter(Regulation)


def regulation_from_dict(data: dict[str, Any]) -> Regulation:
    """Build and validate a Regulation from parsed TOML or a stored snapshot.

    Raises RegulationError naming the key when a key is unknown or missing, a type is wrong, or a value
    is impossible.
    """
    if not isinstance(data, dict):
        raise RegulationError("the file must be a table of keys")
    derived = sorted(set(data) & set(_DERIVED))
    if derived:
        raise RegulationError(f"{', '.join(derived)}: unknown key")
    canonical = canonical_json(_jsonable(data))
    try:
        # From JSON, strict: a date may be written as text there, but "4" is never a whole number.
        reg = _VALIDATOR.validate_json(canonical, strict=True)
    except ValidationError as exc:
        raise _refusal(exc) from None
    _check_across(reg, json.loads(canonical))
    return dataclasses.replace(reg, snapshot=canonical, sha256=hashlib.sha256(canonical.encode()).hexdigest())


def parse_regulation(text: str) -> Regulation:
    """Parse TOML text into a Regulation; raises RegulationError with the line for a TOML syntax error."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RegulationError(f"not valid TOML: {exc}") from None
    return regulation_from_dict(data)


def load_regulation_file(path: str | Path) -> Regulation:
    """Read and validate a regulation file; raises RegulationError if it cannot be read or used."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RegulationError(f"cannot read {path}: {exc}") from None
    return with_regulations_text(parse_regulation(text), Path(path).parent)


def with_regulations_text(reg: Regulation, directory: str | Path) -> Regulation:
    """The regulation with the text of its regulations, read beside the call file and checked against the
    SHA-256 the file gives. Raises RegulationError when the text is missing or its hash differs."""
    name = reg.regulations_text.file
    path = Path(directory) / name
    if Path(name).name != name:
        raise RegulationError(f"regulations_text.file: a file name beside the call file, got {name!r}")
    try:
        body = path.read_bytes()
    except OSError as exc:
        raise RegulationError(f"regulations_text.file: cannot read {path}: {exc.strerror or exc}") from None
    digest = hashlib.sha256(body).hexdigest()
    if digest != reg.regulations_text.sha256:
        raise RegulationError(
            f"regulations_text.sha256: {name} has SHA-256 {digest}, the call file says "
            f"{reg.regulations_text.sha256}; the text is not the one the call was published with")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise RegulationError(f"regulations_text.file: {name} is not UTF-8 text") from None
    return dataclasses.replace(reg, text=text)


# Keys a stored snapshot may hold although no call file may: they express a reading Gambit does not apply (that
# the days before game 1 fall in the window of dates, which the regulations' own schedule contradicts). Reading a
# snapshot drops them and keeps the snapshot and its hash as stored.
_WITHDRAWN = {"schedule_rules": ("pre_match_window_article", "pre_match_within_window")}


def regulation_from_snapshot(snapshot: str) -> Regulation:
    """Rebuild a Regulation stored with an event (its snapshot and hash kept as stored, withdrawn keys ignored);
    raises RegulationError if the snapshot is corrupt."""
    try:
        data = json.loads(snapshot)
    except json.JSONDecodeError as exc:
        raise RegulationError(f"stored regulation is not valid JSON: {exc}") from None
    withdrawn = False
    for table, keys in _WITHDRAWN.items():
        if isinstance(data, dict) and isinstance(data.get(table), dict):
            for key in keys:
                withdrawn = data[table].pop(key, None) is not None or withdrawn
    reg = regulation_from_dict(data)
    if withdrawn:
        reg = dataclasses.replace(reg, snapshot=snapshot, sha256=hashlib.sha256(snapshot.encode()).hexdigest())
    return reg


SEED_DIR = Path(__file__).resolve().parent.parent / "seed_data"


PRACTICE_SLUG = "fwwcm-practice"


def practice_regulation(reg: Regulation, *, now: datetime) -> Regulation:
    """The practice call: the same rules with every date moved by whole years, so that its bid deadline lies ahead of
    `now` (`flask seed` makes it, and an upgrade brings it forward with its call). Raises RegulationError as
    regulation_from_dict does."""
    years = max(1, now.year - reg.event.bid_deadline.year)
    while reg.event.bid_deadline.replace(year=reg.event.bid_deadline.year + years) <= now:
        years += 1
    old_year = str(reg.schedule.window_start.year)
    title = reg.event.title.replace(old_year, str(int(old_year) + years))
    return reg.shifted(years=years, slug=PRACTICE_SLUG, title=f"PRACTICE CALL — {title}")


def default_event_file(slug: str = "fwwcm-2015") -> Path:
    return SEED_DIR / "events" / f"{slug}.toml"



# ---------------------------------------------------------------------------- derived facts of the optional tables


def published_schedule(reg: Regulation) -> list[ScheduleDay]:
    """The dated schedule as the regulations publish it (the opening ceremony the day before the published first
    game), or [] when the file publishes no dates. Raises nothing."""
    sr = reg.schedule_rules
    if sr is None:
        return []
    first_game = reg.schedule.days.index("game")
    return reg.schedule_for(sr.published_first_game - timedelta(days=first_game))


def first_game_date(reg: Regulation, opening: date) -> date:
    """The day of game 1 for an opening ceremony on `opening`. Raises nothing."""
    return opening + timedelta(days=reg.schedule.days.index("game"))


def pre_match_days(reg: Regulation, opening: date) -> list[tuple[PreMatchDay, date]]:
    """Each pre-match day of the file with its date, for an opening ceremony on `opening`. Raises nothing."""
    game_1 = first_game_date(reg, opening)
    return [(d, game_1 - timedelta(days=d.days_before_first_game)) for d in reg.pre_match]


def pre_match_schedule(reg: Regulation, opening: date) -> list[ScheduleDay]:
    """The days before game 1 on which the organizer hosts the players and officials (an inspection, the first
    players' meeting), dated from game 1 for an opening ceremony on `opening`, earliest first, as days of kind
    "pre_match" (numbered 0: they come before day 1 of the programme, or on it). Never a condition of the window
    of dates (see `ScheduleRules`). Raises nothing."""
    days = [ScheduleDay(0, on, "pre_match",
                        f"{d.label}{f' at {d.time}' if d.time else ''} (Art. {d.article})")
            for d, on in pre_match_days(reg, opening)]
    return sorted(days, key=lambda d: d.on)


def earliest_decisive_game(reg: Regulation) -> int | None:
    """The first game after which the regular games can have decided the match: one point a game, so the
    winning score rounded up (game 6 for 5.5 points). None when the file has no result rules. Raises nothing."""
    if reg.result is None:
        return None
    return int(reg.result.winning_score.to_integral_value(rounding="ROUND_CEILING"))


def amendment_authority(reg: Regulation, key: str) -> AmendmentAuthority:
    """The authority with this key. Raises KeyError when the file names none."""
    for a in reg.amendment_authorities:
        if a.key == key:
            return a
    raise KeyError(key)


def deduction_rule(reg: Regulation, key: str) -> DeductionRule:
    """The deduction rule with this key. Raises KeyError when the file names none."""
    for d in reg.deductions:
        if d.key == key:
            return d
    raise KeyError(key)
