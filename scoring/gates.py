"""The first showing of other members' scores to a WCOC member, recorded by the WCOC's pages and the ranking in
the API (api.ranking) alike. Who may read the scores at all is scoring.visibility's rule."""

from __future__ import annotations

from core.db import db, utcnow, writing
from scoring import services
from scoring.queries import ScoringData


def record_first_showing(data: ScoringData, viewer) -> str | None:
    """Before a WCOC member is shown other members' scores for the first time in the call, record it (their
    declaration no longer changes from then on). Returns the refusal when their declaration changed meanwhile.

    Commits: the caller's reading transaction is ended, then the showing is recorded in a short writing one.
    Raises nothing (a refusal of scoring.services.record_scores_shown is returned as its sentence)."""
    decl = data.scores_shown_first_time(viewer)
    if decl is None:
        return None
    declared_at = decl.confirmed_at
    # A `reads_first` view (the ranking) read in a transaction without SQLite's write lock: end it, then record in
    # a short writing one (a compare-and-swap on the declaration read, so the gap between the two is safe).
    db.session.commit()
    with writing():
        try:
            services.record_scores_shown(data.event, viewer, declared_at=declared_at, now=utcnow())
        except services.ScoringError as exc:
            db.session.rollback()
            return str(exc)
        db.session.commit()
    return None
