"""The call's regulation as data: a frozen, strictly validated view of `seed_data/events/<slug>.toml`.

Nothing in Gambit repeats a figure of the regulations; it reads it from a `Regulation`. The loader
refuses an unknown key, a wrong type or an impossible value and names the key, so a typo in next year's
file is caught when it is loaded, not when a bidder meets it.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import re
import tomllib
import types
import typing
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from pathlib import Path

FORMAT_VERSION = 1


class RegulationError(ValueError):
    """A regulation file that cannot be used; the message names the key and what is wrong."""


# ----------------------------------------------------------------------------------------------- shape


@dataclass(frozen=True)
class EventInfo:
    slug: str
    title: str
    short_title: str
    regulations_title: str
    organiser: str
    practice: bool
    currency: str
    bid_deadline: datetime


@dataclass(frozen=True)
class Player:
    name: str
    title: str
    federation: str
    country: str
    qualification: str


@dataclass(frozen=True)
class Schedule:
    article: str
    window_article: str
    window_start: date
    window_end: date
    round_time_article: str
    round_time: str
    days: tuple[str, ...]
    closing_article: str
    closing_days_after_last_day: tuple[int, ...]


@dataclass(frozen=True)
class PrizeFund:
    article: str
    bid_article: str
    minimum: Decimal
    maximum: Decimal
    target: Decimal
    net_of_taxes_required: bool


@dataclass(frozen=True)
class FideContribution:
    article: str
    bid_article: str
    min_share_of_prize_fund: Decimal


@dataclass(frozen=True)
class PrizeSplit:
    article: str
    regular_winner_share: Decimal
    tiebreak_winner_share: Decimal
    home_article: str
    home_opponent_share: Decimal
    advance_article: str
    advance_per_player: Decimal
    balance_due_days_after_completion: int


@dataclass(frozen=True)
class Stipend:
    principal: str
    amount: Decimal


@dataclass(frozen=True)
class Obligations:
    commercial_rights_article: str
    commercial_rights_share: Decimal
    wcoc_budget_article: str
    wcoc_budget: Decimal
    signal_blocker_article: str
    signal_blocker_cap: Decimal
    home_compensation_article: str
    home_compensation: Decimal
    travel_article: str
    travel_contribution_per_team: Decimal
    stipends_article: str
    stipends: tuple[Stipend, ...]


@dataclass(frozen=True)
class Hotel:
    article: str
    min_stars: int


@dataclass(frozen=True)
class Inspection:
    article: str
    also_article: str
    min_inspectors: int


@dataclass(frozen=True)
class Guarantee:
    article: str
    must_cover: tuple[str, ...]
    valid_past_last_deadline: bool


UNSIGNED_POLICIES = ("warn", "block")


@dataclass(frozen=True)
class Signatures:
    """The call's bidding procedure (not the regulations) on digital signatures: whether a letter of application
    whose signature is missing, broken or untrusted only warns ("warn") or stops the submission ("block")."""

    unsigned_letter: str = "warn"


@dataclass(frozen=True)
class Instalment:
    due: date
    prize_fund_share: Decimal
    description: str
    rest_of_obligations: bool = False


@dataclass(frozen=True)
class Payments:
    article: str
    contract_article: str
    with_guarantee: tuple[Instalment, ...]
    without_guarantee: tuple[Instalment, ...] = ()


@dataclass(frozen=True)
class FideBank:
    article: str
    bank: str
    address: str
    swift: str
    account: str
    iban: str
    holder: str


@dataclass(frozen=True)
class Anchor:
    score: Decimal
    label: str


@dataclass(frozen=True)
class Scoring:
    article: str
    scale_min: Decimal
    scale_max: Decimal
    step: Decimal
    anchors: tuple[Anchor, ...]
    comment_required_for: tuple[Decimal, ...]
    red_flag_criteria: tuple[str, ...]
    red_flag_threshold: Decimal
    overall_threshold: Decimal
    disagreement_range: Decimal
    disagreement_stdev: Decimal
    dirichlet_concentration: Decimal
    dirichlet_samples: int
    dirichlet_seed: int
    prize_fund_reference_at_minimum: Decimal
    # The verdict of scoring.sensitivity: robust when the leader comes first in at least `robust_share` of the
    # sampled weightings and no single-criterion weight change under `robust_shift_points` lets a rival level.
    robust_share: Decimal
    robust_shift_points: Decimal


@dataclass(frozen=True)
class Criterion:
    key: str
    article: str
    label: str
    weight: Decimal


@dataclass(frozen=True)
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

# ------------------------------------------------------------------------------------- provenance (issue 13)
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


@dataclass(frozen=True)
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
        from markupsafe import escape
        return str(escape(self.label))


@dataclass(frozen=True)
class SourcedRule:
    """A rule of the bidding procedure or a sanity check: its label and the fields of the call file it reads."""

    label: str
    fields: tuple[str, ...] = ()
    says: str = ""


@dataclass(frozen=True)
class Procedure:
    """The call's bidding procedure: the document it is (published with the call) and its rules by key."""

    document: str
    rules: FrozenTable[SourcedRule]


@dataclass(frozen=True)
class RegulationsText:
    """The text of the regulations, stored beside the call file; `sha256` is checked when the file is loaded."""

    file: str
    sha256: str


class FrozenTable(dict):
    """A read-only, hashable table of a call file (key -> value), so a Regulation stays hashable."""

    def __hash__(self):
        return hash(tuple(sorted(self.items())))

    def _refuse(self, *args, **kwargs):
        raise TypeError("a regulation's table cannot be changed")

    __setitem__ = __delitem__ = update = pop = popitem = clear = setdefault = _refuse  # type: ignore[assignment]



# ----------------------------------------------------------- obligations in kind, pre-match days, results, amendments
# Tables added for issue 13; each is optional in the file (a stored snapshot without them still loads).


@dataclass(frozen=True)
class InKind:
    """An obligation the organizer meets in kind (a room, a car, a trophy), quoted or summarised from `article`."""

    article: str
    title: str
    text: str


@dataclass(frozen=True)
class PreMatchDay:
    """A day before the first game the regulations fix (an inspection, the first players' meeting)."""

    key: str
    article: str
    label: str
    days_before_first_game: int
    time: str = ""


@dataclass(frozen=True)
class ScheduleRules:
    """The dated schedule as the regulations publish it, the closing rule of the ceremonies article, and whether
    the pre-match days must fall inside the window of dates."""

    published_article: str
    published_first_game: date
    closing_end_article: str
    closing_latest_days_after_end: int
    closing_conflict_note: str
    pre_match_window_article: str
    pre_match_within_window: bool


@dataclass(frozen=True)
class ResultRules:
    """When a match decided in the regular games can at the earliest be over: the first player to reach
    `winning_score` wins, one point a game."""

    article: str
    winning_score: Decimal
    replacement_article: str = ""
    replacement_text: str = ""


@dataclass(frozen=True)
class DeductionRule:
    """Something the regulations take from a player's prize (a fine, a forfeited share, a withheld fee).

    `amount` is the fixed amount or the maximum (`up_to`); `share` a share of the prize money (per breach)."""

    key: str
    article: str
    title: str
    text: str
    amount: Decimal | None = None
    up_to: bool = False
    share: Decimal | None = None


@dataclass(frozen=True)
class Consultation:
    """FIDE consults the host federation on a sponsor's bid before it may be selected."""

    article: str
    text: str


@dataclass(frozen=True)
class AmendmentAuthority:
    """Who may change the regulations of the call, and under which article."""

    key: str
    article: str
    label: str


GUARANTEE_COVERS = ("prize_fund", "fide_contribution")
DAY_KINDS = ("opening", "game", "rest", "tiebreak")


@dataclass(frozen=True)
class Regulation:
    format: int
    event: EventInfo
    players: tuple[Player, ...]
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
    criteria: tuple[Criterion, ...]
    # Provenance (issue 13): the regulations' articles by rule, the bidding procedure, the sanity checks, the text.
    citations: FrozenTable[str]
    procedure: Procedure
    sanity_checks: FrozenTable[SourcedRule]
    regulations_text: RegulationsText
    signatures: Signatures = Signatures()
    # Issue 13's tables (optional in the file).
    in_kind: tuple[InKind, ...] = ()
    pre_match: tuple[PreMatchDay, ...] = ()
    schedule_rules: ScheduleRules | None = None
    result: ResultRules | None = None
    deductions: tuple[DeductionRule, ...] = ()
    consultation: Consultation | None = None
    amendment_authorities: tuple[AmendmentAuthority, ...] = ()
    # The canonical JSON the regulation was built from and its SHA-256: what an event stores.
    snapshot: str = field(default="", compare=False, repr=False)
    sha256: str = field(default="", compare=False, repr=False)
    # The regulations' text itself, read beside the call file (checked against regulations_text.sha256).
    text: str = field(default="", compare=False, repr=False)

    # ---- derived facts (pure; no figure is written here, each comes from the fields above)

    @property
    def last_scheduled_day_offset(self) -> int:
        """Days from the opening ceremony to the last scheduled day (the tie-break day for 2015)."""
        return len(self.schedule.days) - 1

    def closing_offsets(self) -> tuple[int, ...]:
        """Allowed distances, in days, from the opening ceremony to the closing ceremony (Art. 2.2, 10.3)."""
        last = self.last_scheduled_day_offset
        return tuple(last + n for n in self.schedule.closing_days_after_last_day)

    def possible_opening_dates(self) -> list[date]:
        """Every opening-ceremony date whose whole schedule and closing ceremony fit the window."""
        s = self.schedule
        earliest_close = min(self.closing_offsets())
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

    def bid_deadline_passed(self, now: datetime) -> bool:
        return now > self.event.bid_deadline

    # ---- provenance (issue 13): every citation is looked up here by its stable key

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
        def fill(m: re.Match) -> str:
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


# ------------------------------------------------------------------------------------------ conversion


def _type_name(t) -> str:
    return {str: "text", int: "a whole number", bool: "true or false", Decimal: "a decimal number as a string",
            date: "a date (YYYY-MM-DD)", datetime: "a date and time with a time zone"}.get(t, str(t))


def _convert(value, tp, key: str):
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise RegulationError(f"{key}: expected a table, got {value!r}")
        return _build(tp, value, key)
    if origin is FrozenTable:
        (inner,) = typing.get_args(tp)
        if not isinstance(value, dict):
            raise RegulationError(f"{key}: expected a table, got {value!r}")
        return FrozenTable({k: _convert(v, inner, f"{key}.{k}") for k, v in value.items()})
    if origin is tuple:
        (inner, _ellipsis) = typing.get_args(tp)
        if not isinstance(value, list):
            raise RegulationError(f"{key}: expected a list, got {value!r}")
        return tuple(_convert(v, inner, f"{key}[{i}]") for i, v in enumerate(value))
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(inner) != 1:
            raise RegulationError(f"{key}: unsupported type")
        return None if value is None else _convert(value, inner[0], key)
    if tp is bool:
        if not isinstance(value, bool):
            raise RegulationError(f"{key}: expected true or false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise RegulationError(f"{key}: expected {_type_name(int)}, got {value!r}")
        return value
    if tp is str:
        if not isinstance(value, str) or not value.strip():
            raise RegulationError(f"{key}: expected non-empty text, got {value!r}")
        return value
    if tp is Decimal:
        if not isinstance(value, str):
            raise RegulationError(
                f"{key}: expected {_type_name(Decimal)} (for example \"0.20\"), got {value!r}")
        try:
            d = Decimal(value)
        except InvalidOperation:
            raise RegulationError(f"{key}: {value!r} is not a decimal number") from None
        if not d.is_finite():
            raise RegulationError(f"{key}: {value!r} is not a finite number")
        return d
    if tp is datetime:
        if isinstance(value, str):
            try:
                value = datetime.fromisoformat(value)
            except ValueError:
                raise RegulationError(f"{key}: {value!r} is not a date and time") from None
        if not isinstance(value, datetime) or value.tzinfo is None:
            raise RegulationError(f"{key}: expected {_type_name(datetime)}, got {value!r}")
        return value.astimezone(UTC)
    if tp is date:
        if isinstance(value, str):
            try:
                value = date.fromisoformat(value)
            except ValueError:
                raise RegulationError(f"{key}: {value!r} is not a date (YYYY-MM-DD)") from None
        if isinstance(value, datetime) or not isinstance(value, date):
            raise RegulationError(f"{key}: expected {_type_name(date)}, got {value!r}")
        return value
    raise RegulationError(f"{key}: unsupported type {tp!r}")


def _build(cls, data: dict, prefix: str = ""):
    hints = typing.get_type_hints(cls)
    derived = ("snapshot", "sha256", "text") if cls is Regulation else ()
    fields = {f.name: f for f in dataclasses.fields(cls) if f.name not in derived}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        names = ", ".join(f"{prefix}{'.' if prefix else ''}{k}" for k in unknown)
        raise RegulationError(f"{names}: unknown key")
    kwargs = {}
    for name, f in fields.items():
        key = f"{prefix}.{name}" if prefix else name
        if name not in data:
            if f.default is not dataclasses.MISSING:
                continue
            raise RegulationError(f"{key}: missing")
        kwargs[name] = _convert(data[name], hints[name], key)
    return cls(**kwargs)


def _jsonable(value):
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, datetime):
        # A datetime without a zone stays without one, so _convert can refuse it by name.
        return value.astimezone(UTC).isoformat() if value.tzinfo else value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    return value


# ---------------------------------------------------------------------------------------- value checks


def _fail(key: str, why: str):
    raise RegulationError(f"{key}: {why}")


def _check_share(key: str, value: Decimal):
    if not (0 <= value <= 1):
        _fail(key, f"a share must lie between 0 and 1, got {value}")


def _check_amount(key: str, value: Decimal):
    if value < 0:
        _fail(key, f"an amount cannot be negative, got {value}")
    if value != value.quantize(Decimal("0.01")):
        _fail(key, f"an amount has at most two decimals, got {value}")


def _validate(reg: Regulation) -> None:
    if reg.format != FORMAT_VERSION:
        _fail("format", f"this Gambit reads format {FORMAT_VERSION}, the file says {reg.format}")
    if not reg.event.slug.replace("-", "").isalnum() or reg.event.slug != reg.event.slug.lower():
        _fail("event.slug", f"use lower-case letters, digits and hyphens, got {reg.event.slug!r}")
    if reg.event.currency != "EUR":
        _fail("event.currency", f"only EUR is supported, got {reg.event.currency!r}")
    if len(reg.players) != 2:
        _fail("players", f"a match has two players, the file names {len(reg.players)}")
    for i, p in enumerate(reg.players):
        if len(p.federation) != 3 or not p.federation.isupper():
            _fail(f"players[{i}].federation", f"a FIDE code is three capital letters, got {p.federation!r}")
        if len(p.country) != 2 or not p.country.isupper():
            _fail(f"players[{i}].country", f"an ISO country code is two capital letters, got {p.country!r}")
    s = reg.schedule
    if s.window_end < s.window_start:
        _fail("schedule.window_end", f"{s.window_end} is before schedule.window_start {s.window_start}")
    bad = [d for d in s.days if d not in DAY_KINDS]
    if bad:
        _fail("schedule.days", f"unknown kind of day {bad[0]!r} (use {', '.join(DAY_KINDS)})")
    if not s.days or s.days[0] != "opening" or "game" not in s.days:
        _fail("schedule.days", "the schedule starts with the opening ceremony and has at least one game")
    if not s.closing_days_after_last_day or min(s.closing_days_after_last_day) < 1:
        _fail("schedule.closing_days_after_last_day", "the closing ceremony comes at least one day after")
    hh, _, mm = s.round_time.partition(":")
    if not (hh.isdigit() and mm.isdigit() and int(hh) < 24 and int(mm) < 60):
        _fail("schedule.round_time", f"expected HH:MM, got {s.round_time!r}")
    if not reg.possible_opening_dates():
        _fail("schedule.window_end", "the window is too short for the schedule of days and the closing ceremony")
    pf = reg.prize_fund
    for name in ("minimum", "maximum", "target"):
        _check_amount(f"prize_fund.{name}", getattr(pf, name))
    if pf.minimum <= 0:
        _fail("prize_fund.minimum", f"must be above zero, got {pf.minimum}")
    if not (pf.minimum < pf.target <= pf.maximum):
        _fail("prize_fund.target", f"must lie above the minimum and at most the maximum, got {pf.target}")
    _check_share("fide_contribution.min_share_of_prize_fund", reg.fide_contribution.min_share_of_prize_fund)
    sp = reg.prize_split
    for name in ("regular_winner_share", "tiebreak_winner_share", "home_opponent_share"):
        _check_share(f"prize_split.{name}", getattr(sp, name))
    for name in ("regular_winner_share", "tiebreak_winner_share"):
        if getattr(sp, name) < Decimal("0.5"):
            _fail(f"prize_split.{name}", f"the winner's share cannot be below half, got {getattr(sp, name)}")
    _check_amount("prize_split.advance_per_player", sp.advance_per_player)
    if sp.balance_due_days_after_completion < 0:
        _fail("prize_split.balance_due_days_after_completion", "cannot be negative")
    ob = reg.obligations
    _check_share("obligations.commercial_rights_share", ob.commercial_rights_share)
    for name in ("wcoc_budget", "signal_blocker_cap", "home_compensation", "travel_contribution_per_team"):
        _check_amount(f"obligations.{name}", getattr(ob, name))
    for i, st in enumerate(ob.stipends):
        _check_amount(f"obligations.stipends[{i}].amount", st.amount)
    if not (1 <= reg.hotel.min_stars <= 5):
        _fail("hotel.min_stars", f"hotel categories run from 1 to 5 stars, got {reg.hotel.min_stars}")
    if reg.inspection.min_inspectors < 0:
        _fail("inspection.min_inspectors", "cannot be negative")
    for i, c in enumerate(reg.guarantee.must_cover):
        if c not in GUARANTEE_COVERS:
            _fail(f"guarantee.must_cover[{i}]", f"unknown item {c!r} (use {', '.join(GUARANTEE_COVERS)})")
    if reg.signatures.unsigned_letter not in UNSIGNED_POLICIES:
        _fail("signatures.unsigned_letter",
              f"use {' or '.join(UNSIGNED_POLICIES)}, got {reg.signatures.unsigned_letter!r}")
    for plan in ("with_guarantee", "without_guarantee"):
        insts = getattr(reg.payments, plan)
        for i, inst in enumerate(insts):
            _check_share(f"payments.{plan}[{i}].prize_fund_share", inst.prize_fund_share)
            if i and inst.due <= insts[i - 1].due:
                _fail(f"payments.{plan}[{i}].due", "instalments must be listed in date order")
        if insts:
            total = sum((inst.prize_fund_share for inst in insts), Decimal(0))
            if total != 1:
                _fail(f"payments.{plan}", f"the prize fund shares must add up to 1, they add up to {total}")
            if sum(1 for inst in insts if inst.rest_of_obligations) != 1 or not insts[-1].rest_of_obligations:
                _fail(f"payments.{plan}", "exactly the last instalment carries rest_of_obligations = true")
    sc = reg.scoring
    if not (sc.scale_min < sc.scale_max) or sc.step <= 0:
        _fail("scoring.scale_max", "the scale needs scale_min < scale_max and a positive step")
    for i, a in enumerate(sc.anchors):
        if not (sc.scale_min <= a.score <= sc.scale_max):
            _fail(f"scoring.anchors[{i}].score", f"{a.score} lies outside the scale")
    if sc.dirichlet_samples < 1 or sc.dirichlet_concentration <= 0:
        _fail("scoring.dirichlet_samples", "sampling needs at least one sample and a positive concentration")
    if not (0 < sc.robust_share <= 1):
        _fail("scoring.robust_share", f"a share of first places lies above 0 and at most 1, got {sc.robust_share}")
    if not (0 <= sc.robust_shift_points <= 100):
        _fail("scoring.robust_shift_points",
              f"percentage points of the total weight lie between 0 and 100, got {sc.robust_shift_points}")
    keys = [c.key for c in reg.criteria]
    if not keys:
        _fail("criteria", "at least one criterion")
    if len(set(keys)) != len(keys):
        _fail("criteria", f"each key once, got {', '.join(keys)}")
    for i, c in enumerate(reg.criteria):
        if c.weight < 0:
            _fail(f"criteria[{i}].weight", f"a weight cannot be negative, got {c.weight}")
    if sum(c.weight for c in reg.criteria) <= 0:
        _fail("criteria", "the weights add up to zero")
    for i, k in enumerate(sc.red_flag_criteria):
        if k not in keys:
            _fail(f"scoring.red_flag_criteria[{i}]", f"no criterion {k!r}")
    if reg.payments.with_guarantee and reg.event.bid_deadline.date() >= reg.payments.with_guarantee[0].due:
        _fail("event.bid_deadline", "the bid deadline must come before the first payment deadline")


def _validate_provenance(reg: Regulation, data: dict) -> None:
    """Issue 13: a key belongs to one kind only; a procedure rule or a check names fields the file has."""
    kinds = {"citations": set(reg.citations), "procedure.rules": set(reg.procedure.rules),
             "sanity_checks": set(reg.sanity_checks)}
    names = list(kinds)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            both = sorted(kinds[a] & kinds[b])
            if both:
                _fail(f"{b}.{both[0]}", f"is also in [{a}]: a rule has one source")
    for key, art in reg.citations.items():
        if not art[:1].isdigit():
            _fail(f"citations.{key}", f"an article number starts with a digit, got {art!r}")
    for table, rules in (("procedure.rules", reg.procedure.rules), ("sanity_checks", reg.sanity_checks)):
        for key, rule in rules.items():
            for i, path in enumerate(rule.fields):
                node = data
                for part in path.split("."):
                    if not isinstance(node, dict) or part not in node:
                        _fail(f"{table}.{key}.fields[{i}]", f"the call file has no {path!r}")
                    node = node[part]
    if len(reg.regulations_text.sha256) != 64 or any(c not in "0123456789abcdef" for c in reg.regulations_text.sha256):
        _fail("regulations_text.sha256", "expected 64 lower-case hexadecimal digits")


# ------------------------------------------------------------------------------------------ public API


def regulation_from_dict(data: dict) -> Regulation:
    """Build and validate a Regulation from parsed TOML or a stored snapshot.

    Raises RegulationError naming the key when a key is unknown or missing, a type is wrong, or a value
    is impossible.
    """
    if not isinstance(data, dict):
        raise RegulationError("the file must be a table of keys")
    canonical = json.dumps(_jsonable(data), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    reg = _build(Regulation, json.loads(canonical))
    _validate(reg)
    _validate_provenance(reg, json.loads(canonical))
    _validate_extras(reg)
    digest = hashlib.sha256(canonical.encode()).hexdigest()
    return dataclasses.replace(reg, snapshot=canonical, sha256=digest)


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


def regulation_from_snapshot(snapshot: str) -> Regulation:
    """Rebuild a Regulation stored with an event; raises RegulationError if the snapshot is corrupt."""
    try:
        data = json.loads(snapshot)
    except json.JSONDecodeError as exc:
        raise RegulationError(f"stored regulation is not valid JSON: {exc}") from None
    return regulation_from_dict(data)


SEED_DIR = Path(__file__).resolve().parent.parent / "seed_data"


def default_event_file(slug: str = "fwwcm-2015") -> Path:
    return SEED_DIR / "events" / f"{slug}.toml"


# ----------------------------------------------------- issue 13: checks and derived facts of the optional tables


def _validate_extras(reg: Regulation) -> None:
    """Value checks of the optional tables (in-kind obligations, pre-match days, results, deductions)."""
    for i, d in enumerate(reg.pre_match):
        if d.days_before_first_game < 1:
            _fail(f"pre_match[{i}].days_before_first_game", f"at least 1, got {d.days_before_first_game}")
    if len({d.key for d in reg.pre_match}) != len(reg.pre_match):
        _fail("pre_match", "each key once")
    sr = reg.schedule_rules
    if sr is not None and sr.closing_latest_days_after_end < 1:
        _fail("schedule_rules.closing_latest_days_after_end", "the closing ceremony comes at least one day after")
    r = reg.result
    if r is not None and not (0 < r.winning_score <= reg.number_of_games):
        _fail("result.winning_score", f"must lie above 0 and at most the {reg.number_of_games} games, got "
                                      f"{r.winning_score}")
    for i, d in enumerate(reg.deductions):
        if d.amount is None and d.share is None:
            _fail(f"deductions[{i}]", "give an amount or a share")
        if d.amount is not None:
            _check_amount(f"deductions[{i}].amount", d.amount)
        if d.share is not None:
            _check_share(f"deductions[{i}].share", d.share)
    if len({d.key for d in reg.deductions}) != len(reg.deductions):
        _fail("deductions", "each key once")
    if len({a.key for a in reg.amendment_authorities}) != len(reg.amendment_authorities):
        _fail("amendment_authorities", "each key once")


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


def closing_latest_offset(reg: Regulation) -> int | None:
    """The latest distance, in days, from the opening ceremony to the closing ceremony that the closing rule of
    the ceremonies article allows ("not later than one day after the end of the event", counted from the last
    scheduled day), or None when the file has no such rule. Raises nothing."""
    sr = reg.schedule_rules
    return None if sr is None else reg.last_scheduled_day_offset + sr.closing_latest_days_after_end


def compliant_opening_dates(reg: Regulation) -> list[date]:
    """The opening-ceremony dates for which every dated rule holds: the whole schedule and a closing ceremony
    allowed by both closing rules fit the window, and (when the file says so) every pre-match day falls in it.
    Raises nothing."""
    s = reg.schedule
    latest = closing_latest_offset(reg)
    closings = [n for n in reg.closing_offsets() if latest is None or n <= latest]
    out = []
    for opening in reg.possible_opening_dates():
        if not any(opening + timedelta(days=n) <= s.window_end for n in closings):
            continue
        sr = reg.schedule_rules
        if sr is not None and sr.pre_match_within_window and any(
                not (s.window_start <= day <= s.window_end) for _, day in pre_match_days(reg, opening)):
            continue
        out.append(opening)
    return out
