"""A dossier or board pack is found by the hash of its inputs or rendered and stored through one path
(board.services.make_documents, then keep), whether a page asks for it or the background worker makes it; the
board's reads are board.queries, and board.services holds only what changes rows."""

from __future__ import annotations

import inspect

from sqlalchemy import func, select

from board import queries, services
from board.jobs import render_all
from board.models import Dossier
from core.db import db
from events.models import Event
from tests.conftest import utcnow


def _functions(module) -> set[str]:
    return {name for name, obj in vars(module).items()
            if inspect.isfunction(obj) and obj.__module__ == module.__name__ and not name.startswith("_")}


def test_the_worker_and_the_request_make_and_find_the_same_documents(app, scored):
    with app.app_context():
        pack_id = render_all(scored["event"], None, None)  # the worker's way: each dossier, then the pack
        made = db.session.scalar(select(func.count(Dossier.id)))
        assert made == 4  # three dossiers and the pack, each once
        event = db.session.get_one(Event, scored["event"])
        pack, dossiers = services.ensure_pack(event, actor=None, now=utcnow(), upload_dir=app.config["UPLOAD_DIR"])
        assert pack.id == pack_id and db.session.scalar(select(func.count(Dossier.id))) == made  # found, not made
        assert queries.stored_current(event, None)[1].id == pack_id
        assert sorted(d.bid_id for d in dossiers) == sorted([scored["lviv"], scored["tbilisi"], scored["madrid"]])
        assert queries.missing_dossiers(event) == [] and queries.current_pack(event) == (pack, dossiers)
        # The worker asked for one bid's dossier finds it too.
        lviv = next(d for d in dossiers if d.bid_id == scored["lviv"])
        assert render_all(scored["event"], scored["lviv"], None) == lviv.id


def test_the_services_only_change_rows_and_the_reads_are_queries():
    assert _functions(services) == {
        "make_documents", "keep", "ensure_dossier", "ensure_pack", "record_president_ruling", "record_view",
        "cast_vote", "record_decision", "store_minutes", "mark_notified"}
    assert {"stored_current", "missing_dossiers", "reviewed_documents", "current_decision", "current_tally",
            "bids_before_board", "votes_fingerprint", "dossier_dir", "minutes_copy"} <= _functions(queries)
    assert "upload_dir" not in inspect.signature(services.record_decision).parameters
