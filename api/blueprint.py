"""The /api/v1 blueprint with every resource's routes on it, as app.py registers it."""

from __future__ import annotations

# api.openapi imports every resource module: each registers its routes on the blueprint when imported.
from api import openapi  # noqa: F401
from api.routing import bp

__all__ = ["bp"]
