"""events.upgrade, run at the end of every `flask db upgrade`: a stored call is given the call file the release
installed ships, its amendments made again on it, its bids judged again, in the audit log; once is enough."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime

from sqlalchemy import select

from core.db import db
from events.models import Event
from events.regulation import default_event_file
from events.upgrade import bring_forward_calls
from evidence.audit import AuditEntry
from tests.events.test_amendments import OPTIONS, _changed_file

NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
TITLE = "FIDE Women's World Championship Match 2015"


def _release(tmp_path, title: str):
    """A folder of call files as a newer release ships them: the 2015 file with its title reworded."""
    folder = tmp_path / "release" / "events"
    folder.mkdir(parents=True)
    source = default_event_file()
    (folder / source.name).write_text(source.read_text().replace(f'title = "{TITLE}"', f'title = "{title}"', 1))
    shutil.copy(source.with_name("fwwcm-2015-regulations.txt"), folder)
    return folder.parent


def test_a_call_is_brought_forward_once_keeping_its_amendment_and_saying_so(runner, app, tmp_path, event):
    result = runner.invoke(args=["events", "load", str(_changed_file(tmp_path)), *OPTIONS])
    assert result.exit_code == 0, result.output
    release = _release(tmp_path, "FIDE Women's World Championship Match 2015 (reworded)")
    with app.app_context():
        done = bring_forward_calls(now=NOW, seed_dir=release)
        db.session.commit()
        assert [d.line() for d in done] == [
            "call fwwcm-2015: regulation brought forward from version 2 to 3 (the call file this release ships, "
            "1 amendment(s) made again on it); no bid's findings changed"]
        call = db.session.get(Event, event)
        reg = call.regulation
        assert reg.event.title.endswith("(reworded)")
        assert str(reg.prize_fund.minimum) == "220000.00"  # the Board's amendment, made again on the new file
        actions = list(db.session.scalars(select(AuditEntry.action).order_by(AuditEntry.id.desc()).limit(2)))
        assert actions == ["event.bids_judged_again", "event.regulation_upgraded"]
        assert bring_forward_calls(now=NOW, seed_dir=release) == []


def test_a_call_already_on_the_shipped_file_is_left_alone(app, event):
    with app.app_context():
        assert bring_forward_calls(now=NOW) == []


def test_a_call_stored_before_the_list_of_covered_items_is_given_it_on_upgrade(runner, app, tmp_path, event):
    """A call stored by a release whose file had no [[covered]] list (and the President's "not covered" as a ground
    to tick) is given the list on upgrade: the President's amendment of the minimum prize fund is then refused."""
    import re

    from events.regulation import load_regulation_file
    from events.services import load_event
    from tests.events.test_amendments import PRESIDENT

    older = default_event_file().read_text()
    older = re.sub(r'\[\[covered\]\]\nkey = "[^"]+"\n(article = "[^"]+"\n)?\n?', "", older)
    older = re.sub(r'not_covered_only = "[^"]+"\n', '\n[[amendment_authorities.grounds]]\nkey = "not_covered"\n'
                   'label = "grounds that are not covered by the regulations"\n', older)
    folder = tmp_path / "older"
    folder.mkdir()
    (folder / "fwwcm-2015.toml").write_text(older)
    shutil.copy(default_event_file().with_name("fwwcm-2015-regulations.txt"), folder)
    with app.app_context():
        stored, _ = load_event(load_regulation_file(folder / "fwwcm-2015.toml"), actor=None, now=NOW)
        assert stored.regulation.covered == ()
        db.session.commit()
        done = bring_forward_calls(now=NOW)
        db.session.commit()
        assert [d.slug for d in done] == ["fwwcm-2015"]
        covered = {c.key: c.article for c in db.session.get(Event, event).regulation.covered}
        assert covered["prize_fund.minimum"] == "13.1"
    result = runner.invoke(args=["events", "load", str(_changed_file(tmp_path)), *PRESIDENT])
    assert result.exit_code != 0
    assert "prize_fund.minimum is covered by Art. 13.1 (the call's list of covered items)" in result.output
