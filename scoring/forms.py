"""The WCOC's forms (conflicts, scorecard) and the secretariat's (weights, admission). The criteria, the scale and
its anchors come from the call's regulation; the checks of a scorecard are scoring.rules.score_problems."""

from __future__ import annotations

import functools
import re
from decimal import Decimal

from wtforms import BooleanField, DecimalField, HiddenField, RadioField, SelectField, SelectMultipleField, TextAreaField
from wtforms.validators import DataRequired, InputRequired, Length
from wtforms.widgets import CheckboxInput, ListWidget

from core.forms import BaseForm, choices
from events.regulation import Regulation

COMMENT_MAX_CHARS = 4000
REASON_MAX_CHARS = 2000


def score_text(value: Decimal | int) -> str:
    """5, 0.5, 2.5: a score as people write it, and as the form's options carry it."""
    return f"{Decimal(value).normalize():f}"


def scale(reg: Regulation) -> list[Decimal]:
    """Every score on the scale of Art. 15.5, lowest first."""
    sc = reg.scoring
    out, value = [], sc.scale_min
    while value <= sc.scale_max:
        out.append(value)
        value += sc.step
    return out


class MultiCheckboxField(SelectMultipleField):
    widget = ListWidget(prefix_label=False)
    option_widget = CheckboxInput()


def _revision(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return -1  # refused as stale, never matched


# ------------------------------------------------------------------------------------------- scorecard


class ScorecardForm(BaseForm):
    """One field pair per criterion, `score_<key>` and `comment_<key>`, added by `scorecard_form`."""

    revision = HiddenField(filters=[_revision])

    criteria: tuple = ()

    def score_field(self, key: str):
        return self[f"score_{key}"]

    def comment_field(self, key: str):
        return self[f"comment_{key}"]

    def scores(self) -> dict[str, Decimal | None]:
        return {c.key: (Decimal(v) if (v := self.score_field(c.key).data) else None) for c in self.criteria}

    def comments(self) -> dict[str, str]:
        return {c.key: self.comment_field(c.key).data or "" for c in self.criteria}

    def fill(self, scores: dict, comments: dict, revision: int) -> None:
        """Show a saved scorecard (on a GET)."""
        for c in self.criteria:
            value = scores.get(c.key)
            self.score_field(c.key).data = "" if value is None else score_text(value)
            self.comment_field(c.key).data = comments.get(c.key, "")
        self.revision.data = revision

    def add_problems(self, problems: dict[str, str]) -> None:
        """Put each message of score_problems beside its field: the comment when the score is given (a comment
        is missing), the score otherwise."""
        for key, message in problems.items():
            if f"score_{key}" not in self._fields:
                self.form_errors.append(message)
                continue
            target = self.comment_field(key) if self.score_field(key).data else self.score_field(key)
            target.errors = [*target.errors, message]


@functools.lru_cache(maxsize=8)
def _scorecard_class(reg: Regulation) -> type[ScorecardForm]:
    sc = reg.scoring
    anchors = {a.score: a.label for a in sc.anchors}
    options = [("", "Not scored yet")] + [
        (score_text(v), f"{score_text(v)} — {anchors[v]}" if v in anchors else score_text(v)) for v in scale(reg)]
    required = [score_text(s) for s in sc.comment_required_for]
    needs = " or ".join([", ".join(required[:-1]), required[-1]] if len(required) > 1 else required)
    attrs = {"criteria": reg.criteria}
    for c in reg.criteria:
        attrs[f"score_{c.key}"] = SelectField(f"({c.key}) {c.label}: score", choices=choices(options),
                                              default="")
        attrs[f"comment_{c.key}"] = TextAreaField(
            f"({c.key}) {c.label}: comment", validators=[Length(max=COMMENT_MAX_CHARS)],
            description=f"Required for a score of {needs}." if needs else "")
    return type("RegulationScorecardForm", (ScorecardForm,), attrs)


def scorecard_form(reg: Regulation, **kwargs) -> ScorecardForm:
    """The scorecard form of a call: its criteria, and a select of its scale whose options show the anchors."""
    return _scorecard_class(reg)(**kwargs)


# ------------------------------------------------------------------------------------------- conflicts

CONFLICT_CHOICES = [("no", "I have no conflict of interest with any of the bids listed"),
                    ("yes", "I have a conflict of interest with the bids I tick below")]


class ConflictsForm(BaseForm):
    has_conflict = RadioField("Your declaration", choices=choices(CONFLICT_CHOICES),
                              validators=[DataRequired("Choose whether you have a conflict of interest.")])
    bids = MultiCheckboxField("Bids you have a conflict of interest with", coerce=int, choices=[])
    reason = TextAreaField("What the conflict of interest is", validators=[Length(max=REASON_MAX_CHARS)],
                           description="Required when you declare a conflict; shown with the ranking.")
    confirm = BooleanField("I confirm that this declaration is complete and true, and that I will declare any "
                           "conflict that arises later.",
                           validators=[DataRequired("Confirm the declaration to continue.")])

    def __init__(self, *args, bid_choices=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.bids.choices = choices(bid_choices)


# ------------------------------------------------------------------------------------------ secretariat


class WeightsForm(BaseForm):
    """One `weight_<key>` per criterion, added by `weights_form`; relative weights (they need not add to 100)."""

    based_on = HiddenField(filters=[_revision])
    reason = TextAreaField("Reason for the change", validators=[Length(max=REASON_MAX_CHARS)])

    criteria: tuple = ()

    def weights(self) -> dict[str, Decimal]:
        return {c.key: self[f"weight_{c.key}"].data for c in self.criteria}

    def fill(self, weights: dict[str, Decimal], based_on: int) -> None:
        for c in self.criteria:
            self[f"weight_{c.key}"].data = weights[c.key]
        self.based_on.data = based_on


WEIGHT_MAX = Decimal(1000)


class WeightField(DecimalField):
    """A relative weight as typed: plain digits with an optional decimal part, 0 to WEIGHT_MAX. NaN, sNaN,
    Infinity and exponents (1e308) are refused here, where the message can repeat what was typed."""

    def process_formdata(self, valuelist):
        raw = valuelist[0].strip() if valuelist else ""
        self.data = None
        if not raw:
            return
        if raw.startswith("-") and re.fullmatch(r"-\d+(\.\d+)?", raw):
            raise ValueError(f"A weight cannot be negative (you entered '{raw}').")
        if not re.fullmatch(r"\d{1,4}(\.\d{1,4})?", raw) or Decimal(raw) > WEIGHT_MAX:
            raise ValueError(f"A weight is a number from 0 to {WEIGHT_MAX} with at most 4 decimals, like 12.5 "
                             f"(you entered '{raw[:40]}'). Weights are relative, so Gambit's limit of "
                             f"{WEIGHT_MAX} leaves room for any split.")
        self.data = Decimal(raw)


@functools.lru_cache(maxsize=8)
def _weights_class(reg: Regulation) -> type[WeightsForm]:
    attrs = {"criteria": reg.criteria}
    for c in reg.criteria:
        attrs[f"weight_{c.key}"] = WeightField(
            f"({c.key}) {c.label}", places=None,
            validators=[InputRequired(f"Give a weight for ({c.key}); 0 leaves the criterion out.")])
    return type("RegulationWeightsForm", (WeightsForm,), attrs)


def weights_form(reg: Regulation, **kwargs) -> WeightsForm:
    return _weights_class(reg)(**kwargs)


class AdmitForm(BaseForm):
    reason = TextAreaField("Why this bid is scored although it failed the compliance gate",
                           validators=[DataRequired("Say why this bid is scored although it failed the compliance "
                                                    "gate; the reason is shown with the ranking."),
                                       Length(max=REASON_MAX_CHARS)])
