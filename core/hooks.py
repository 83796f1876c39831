"""Hooks: where an earlier step of the flow lets a later step take part, the one way it does.

The layers (the import contracts in pyproject.toml) keep a step from importing a later one. When a page must still
show a later step's part (the call's page shows the weights scoring holds; a bid's page asks scoring whether a
WCOC member has declared their conflicts), or a service's change must be followed by a later step's change in the
same transaction (an amendment of the call: bids judged again; a correction of the decision: the old winner's
contract closed), the earlier module declares a `Hook` and app.py (create_app), which assembles the app and may
import every package, provides it. Nothing is provided at import: what runs does not depend on which modules
happen to have been imported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


class Hook(Generic[P, R]):
    """A function declared by the module that calls it and provided by app.py (create_app)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._impl: Callable[P, R] | None = None

    def provide(self, impl: Callable[P, R]) -> None:
        """Set the function the hook calls (again on every create_app: the same function each time). Raises
        nothing."""
        self._impl = impl

    @property
    def provided(self) -> Callable[P, R] | None:
        """The function provided (None before create_app). Raises nothing."""
        return self._impl

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """Call the provided function. Raises LookupError when nothing was provided (an app not made by
        create_app), and whatever the provided function raises."""
        if self._impl is None:
            raise LookupError(f"hook {self.name} has not been provided (app.create_app provides it)")
        return self._impl(*args, **kwargs)
