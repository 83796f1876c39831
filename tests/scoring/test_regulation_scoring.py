"""The scoring keys of the regulation file: the sensitivity verdict reads its thresholds from them."""

from __future__ import annotations

import dataclasses
import json
from decimal import Decimal

import pytest

from events.regulation import RegulationError, default_event_file, load_regulation_file, regulation_from_dict
from scoring.sensitivity import assess_sensitivity

REG = load_regulation_file(default_event_file())
KEYS = [c.key for c in REG.criteria]


def _with_scoring(**values) -> dict:
    data = json.loads(REG.snapshot)
    data["scoring"].update(values)
    return data


def test_the_2015_file_sets_the_robustness_thresholds():
    assert REG.scoring.robust_share == Decimal("0.90")
    assert REG.scoring.robust_shift_points == Decimal("5")


@pytest.mark.parametrize("key, value, message", [
    ("robust_share", "0", "scoring.robust_share: a share of first places lies above 0 and at most 1, got 0"),
    ("robust_share", "1.5", "scoring.robust_share: a share of first places lies above 0 and at most 1, got 1.5"),
    ("robust_shift_points", "-1", "scoring.robust_shift_points: percentage points of the total weight lie "
                                  "between 0 and 100, got -1"),
    ("robust_share", 0.9, "scoring.robust_share: expected a decimal number as a string"),
])
def test_impossible_robustness_thresholds_are_refused_naming_the_key(key, value, message):
    with pytest.raises(RegulationError) as exc:
        regulation_from_dict(_with_scoring(**{key: value}))
    assert str(exc.value).startswith(message)


def test_a_file_without_the_robustness_thresholds_is_refused_naming_the_key():
    data = json.loads(REG.snapshot)
    del data["scoring"]["robust_shift_points"]
    with pytest.raises(RegulationError, match=r"^scoring\.robust_shift_points: missing$"):
        regulation_from_dict(data)


def _judged_by(**scoring):
    return dataclasses.replace(REG, scoring=dataclasses.replace(REG.scoring, **scoring))


def test_the_verdict_follows_the_thresholds_of_the_regulation():
    # A leads on every criterion but (c), where B is far better: a 10-point rise in the weight of (c) brings B
    # level, and A comes first in 99.37% of the sampled weightings. Robust by the 2015 thresholds (5, 0.90).
    a = {**dict.fromkeys(KEYS, Decimal("4")), "c": Decimal("2.5")}
    b = {**dict.fromkeys(KEYS, Decimal("3.5")), "c": Decimal("4")}
    cards = {"A": dict.fromkeys(("x", "y", "z"), a), "B": dict.fromkeys(("x", "y", "z"), b)}
    verdict = assess_sensitivity(REG, cards)
    assert verdict.robust is True and verdict.critical.shift == Decimal("10.00")
    assert verdict.as_dict()["rule"] == {"robust_share": "0.90", "robust_shift_points": "5"}

    wider = assess_sensitivity(_judged_by(robust_shift_points=Decimal("12")), cards)
    assert wider.robust is False
    assert wider.reasons == ("a 10.00-percentage-point rise in the weight of (c) Playing conditions (from 15.00% "
                             "to 25.00%) brings B level",)
    stricter = assess_sensitivity(_judged_by(robust_share=Decimal("0.995")), cards)
    assert stricter.robust is False
    assert stricter.reasons == ("A comes first in only 99.37% of 10,000 sampled weightings",)
    # Thresholds passed by the caller still win over the regulation's.
    assert assess_sensitivity(REG, cards, robust_shift=Decimal("12")).robust is False
