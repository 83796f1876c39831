"""Hooks: where a page of an earlier step of the flow shows something a later step owns.

The layers (the import contracts in pyproject.toml) keep a step from importing a later one. When a page must still
show a later step's part (the call's page shows the weights scoring holds; a bid's page asks scoring whether a
WCOC member has declared their conflicts), the earlier module declares a `Hook` and app.py, which assembles the
app and may import every package, provides it.
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

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """Call the provided function. Raises LookupError when nothing was provided (an app not made by
        create_app), and whatever the provided function raises."""
        if self._impl is None:
            raise LookupError(f"hook {self.name} has not been provided (app.create_app provides it)")
        return self._impl(*args, **kwargs)
