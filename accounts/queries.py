"""Reads about accounts that pages of other packages need, as plain rows."""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import select

from accounts.models import User
from core.db import db


def names_of(ids: list[int]) -> Mapping[int, str]:
    """{user id: full name} of the users among `ids` that still exist (one statement; plain rows, no User objects).
    Raises what the database raises."""
    return {row.id: row.name for row in db.session.execute(select(User.id, User.name).where(User.id.in_(ids)))}
