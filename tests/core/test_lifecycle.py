"""The shared state machine (core.lifecycle) and the compare-and-swap (core.db.swap_state)."""

from __future__ import annotations

import enum

import pytest

from core.lifecycle import Lifecycle, LifecycleError


class Light(enum.StrEnum):
    RED = "red"
    GREEN = "green"


class Move(enum.StrEnum):
    GO = "go"
    STOP = "stop"


LIGHT = Lifecycle("light", Light, Move, {(Light.RED, Move.GO): Light.GREEN, (Light.GREEN, Move.STOP): Light.RED},
                  {Light.RED: "a red light", Light.GREEN: "a green light"}, {Move.GO: "turned green"})


def test_next_follows_the_table_and_accepts_stored_strings():
    assert LIGHT.next(Light.RED, Move.GO) is Light.GREEN
    assert LIGHT.next("green", "stop") is Light.RED


def test_a_move_not_in_the_table_is_refused_in_words():
    with pytest.raises(LifecycleError) as exc:
        LIGHT.next(Light.GREEN, Move.GO)
    assert str(exc.value) == "a green light cannot be turned green"


def test_unknown_states_and_actions_are_named():
    with pytest.raises(LifecycleError, match=r"unknown light status 'blue' \(use red, green\)"):
        LIGHT.next("blue", Move.GO)
    with pytest.raises(LifecycleError, match=r"unknown light action 'honk' \(use go, stop\)"):
        LIGHT.next(Light.RED, "honk")


def test_allowed_and_sources():
    assert LIGHT.allowed(Light.RED) == [Move.GO]
    assert LIGHT.allowed("green") == [Move.STOP]
    assert LIGHT.sources(Move.GO) == {Light.RED}


def test_a_table_of_the_wrong_enums_is_refused_when_declared():
    with pytest.raises(TypeError):
        Lifecycle("bad", Light, Move, {(Light.RED, Light.GREEN): Light.GREEN})


def test_the_domain_error_class_and_refusal_are_used():
    class Nope(ValueError):
        pass

    custom = Lifecycle("light", Light, Move, LIGHT.transitions, error=Nope,
                       refusal=lambda s, a: f"{s.value} light: no {a.value}")
    with pytest.raises(Nope, match="green light: no go"):
        custom.next(Light.GREEN, Move.GO)


def test_every_lifecycle_of_gambit_is_declared_with_the_shared_machine():
    from bids.lifecycle import BID_LIFECYCLE
    from board.lifecycle import DECISION_LIFECYCLE
    from contracts.lifecycle import CONTRACT_LIFECYCLE
    from events.lifecycle import EVENT_LIFECYCLE
    from scoring.lifecycle import SCORECARD_LIFECYCLE

    for machine in (BID_LIFECYCLE, DECISION_LIFECYCLE, CONTRACT_LIFECYCLE, EVENT_LIFECYCLE, SCORECARD_LIFECYCLE):
        assert isinstance(machine, Lifecycle)
        assert machine.transitions
