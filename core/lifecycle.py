"""One small state machine for every lifecycle (bid, call, scorecard, decision, contract).

A domain's `lifecycle.py` declares its `Lifecycle` once: the (state, action) -> state table and the words for its
states and actions. Its one service-level transition function asks `Lifecycle.next` for the new state (which
refuses a move the table does not list, with a message naming both) and then writes it with `core.db.swap_state`: an
UPDATE ... WHERE state = <the state read>, so that of two changes made at the same moment one wins and the other
gets a clear refusal instead of silently overwriting it. Pages ask `Lifecycle.allowed` which actions to offer.

Pure (the lifecycle modules import it); the compare-and-swap that needs the session is `core.db.swap_state`.
No rule of the regulations lives here.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


class LifecycleError(ValueError):
    """A move the lifecycle's table does not allow; the message is for the person who asked."""


@dataclass(frozen=True)
class Lifecycle:
    """A lifecycle: `transitions` maps (state, action) to the next state; anything not listed is refused.

    `states` and `actions` are the StrEnum classes; `state_phrase` and `action_participle` give the words of the
    refusal ("a withdrawn bid cannot be submitted"); `error` is the exception class raised (a subclass of
    ValueError the domain already uses, so its callers keep catching what they catch).
    """

    name: str
    states: type[enum.StrEnum]
    actions: type[enum.StrEnum]
    transitions: Mapping[tuple[Any, Any], Any]
    state_phrase: Mapping[Any, str] = field(default_factory=dict)
    action_participle: Mapping[Any, str] = field(default_factory=dict)
    error: type[Exception] = LifecycleError
    refusal: Callable[[Any, Any], str] | None = None

    def __post_init__(self) -> None:
        for (state, action), after in self.transitions.items():
            if not isinstance(state, self.states) or not isinstance(after, self.states):
                raise TypeError(f"{self.name}: {state!r} -> {after!r} are not {self.states.__name__}")
            if not isinstance(action, self.actions):
                raise TypeError(f"{self.name}: {action!r} is not a {self.actions.__name__}")

    def state(self, value: Any) -> Any:
        """`value` as a state. Raises `error` for an unknown one, naming the known ones."""
        return self._coerce(self.states, value, "status")

    def action(self, value: Any) -> Any:
        """`value` as an action. Raises `error` for an unknown one, naming the known ones."""
        return self._coerce(self.actions, value, "action")

    def _coerce(self, cls: type[enum.StrEnum], value: Any, what: str) -> Any:
        try:
            return cls(value)
        except ValueError:
            names = ", ".join(m.value for m in cls)
            raise self.error(f"unknown {self.name} {what} {value!r} (use {names})") from None

    def next(self, current: Any, action: Any) -> Any:
        """The state `action` leads to from `current`. Raises `error` when the table does not list the move."""
        current, action = self.state(current), self.action(action)
        try:
            return self.transitions[(current, action)]
        except KeyError:
            raise self.error(self.refused(current, action)) from None

    def refused(self, current: Any, action: Any) -> str:
        """The sentence that refuses `action` from `current`."""
        if self.refusal is not None:
            return self.refusal(current, action)
        state = self.state_phrase.get(current, f"a {self.name} that is {current.value}")
        done = self.action_participle.get(action, action.value)
        return f"{state} cannot be {done}"

    def allowed(self, current: Any, among: Iterable[Any] | None = None) -> list[Any]:
        """The actions the table allows from `current`, in the order of the actions enum (or of `among`)."""
        current = self.state(current)
        return [a for a in (among if among is not None else self.actions) if (current, a) in self.transitions]

    def sources(self, action: Any) -> frozenset[Any]:
        """The states `action` may start from (for a compare-and-swap over several rows)."""
        action = self.action(action)
        return frozenset(s for (s, a) in self.transitions if a is action)
