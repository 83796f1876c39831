"""`flask bids import FILE.json --event SLUG [--check]`: the same rules as the web form, for paper bids."""

import json

from sqlalchemy import select

from bids.models import Bid
from core.db import db
from tests.bids.factories import valid_bid_json


def _write(tmp_path, data, name="bid.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return str(path)


def test_check_of_a_good_file_lists_documents_to_attach_and_exits_0(runner, tmp_path, event, reg, make):
    make.user(roles=("admin",))
    result = runner.invoke(args=["bids", "import", _write(tmp_path, valid_bid_json(reg)), "--event", "fwwcm-2015",
                                 "--check"])
    assert result.exit_code == 0, result.output
    assert "ATTACH  Art. 15.2(k)" in result.output and "0 failed" in result.output
    with runner.app.app_context():
        assert db.session.scalars(select(Bid)).all() == []


def test_check_prints_each_failure_with_its_article_and_exits_1(runner, tmp_path, event, reg):
    data = valid_bid_json(reg)
    data["prize_fund_eur"] = "150000.00"
    result = runner.invoke(args=["bids", "import", _write(tmp_path, data), "--event", "fwwcm-2015", "--check"])
    assert result.exit_code == 1
    assert ("FAIL    Art. 15.2(c): the prize fund must be at least €200,000.00 net of local taxes "
            "(you entered €150,000.00).") in result.output


def test_import_stores_a_draft_even_after_the_deadline(runner, tmp_path, event, reg, make):
    make.user(roles=("admin",), email="sec@example.org")
    result = runner.invoke(args=["bids", "import", _write(tmp_path, valid_bid_json(reg)), "--event", "fwwcm-2015"])
    assert result.exit_code == 0, result.output
    assert "stored as draft bid" in result.output
    with runner.app.app_context():
        bid = db.session.scalars(select(Bid)).one()
        assert bid.status == "draft" and bid.venue_city == "Lviv" and bid.entered_by_id is not None
        assert len(bid.room_rates) == 2


def test_a_file_that_is_not_json_is_refused_without_a_traceback(runner, tmp_path, event):
    result = runner.invoke(args=["bids", "import", _write(tmp_path, "{not json"), "--event", "fwwcm-2015"])
    assert result.exit_code == 1
    assert "is not valid JSON" in result.output and "Traceback" not in result.output


def test_a_missing_key_is_named(runner, tmp_path, event, reg):
    data = valid_bid_json(reg)
    del data["venue_city"]
    result = runner.invoke(args=["bids", "import", _write(tmp_path, data), "--event", "fwwcm-2015", "--check"])
    assert result.exit_code == 1
    assert "venue_city" in result.output and "Traceback" not in result.output


def test_an_unknown_call_is_named(runner, tmp_path, reg):
    result = runner.invoke(args=["bids", "import", _write(tmp_path, valid_bid_json(reg)), "--event", "nope",
                                 "--check"])
    assert result.exit_code == 1 and "no call with the slug 'nope'" in result.output


# ------------------------------------------------------------------------- hostile files (issue 12)


def _refused(runner, tmp_path, text):
    result = runner.invoke(args=["bids", "import", _write(tmp_path, text), "--event", "fwwcm-2015"])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)
    with runner.app.app_context():
        assert db.session.scalars(select(Bid)).all() == []
    return result.output


def test_deeply_nested_json_is_refused(runner, tmp_path, event, reg, make):
    make.user(roles=("admin",))
    data = json.dumps(valid_bid_json(reg))
    nested = data.replace('"room_rates": [', '"room_rates": [' + "[" * 100_000, 1)
    assert "is nested too deeply to be a bid" in _refused(runner, tmp_path, nested)
    for depth in (50, 900):
        nested = data.replace('"room_rates": [', '"room_rates": [' + "[" * depth + "]" * depth + ",", 1)
        assert "room_rates[0]: expected an object with room_type, eur_per_night, got a JSON list" in \
            _refused(runner, tmp_path, nested)


def test_a_5000_digit_integer_is_refused(runner, tmp_path, event, reg, make):
    make.user(roles=("admin",))
    data = json.dumps(valid_bid_json(reg) | {"hotel_stars": 0})
    data = data.replace('"hotel_stars": 0', '"hotel_stars": ' + "9" * 5000)
    assert "holds a number too long to read" in _refused(runner, tmp_path, data)


def test_an_integer_too_large_to_store_is_refused(runner, tmp_path, event, reg, make):
    make.user(roles=("admin",))
    output = _refused(runner, tmp_path, valid_bid_json(reg) | {"wcoc_inspectors_invited": 10**40})
    assert ("wcoc_inspectors_invited: expected a whole number of at most 2147483647, got a number of 41 digits"
            in output)


def test_a_nul_character_is_refused_and_named(runner, tmp_path, event, reg, make):
    make.user(roles=("admin",))
    output = _refused(runner, tmp_path, valid_bid_json(reg) | {"venue_name": "Palace\u0000of Chess"})
    assert "venue_name: contains a NUL character, which cannot be stored; remove it" in output


def test_a_line_break_in_the_contact_email_is_refused(runner, tmp_path, event, reg, make):
    make.user(roles=("admin",))
    output = _refused(runner, tmp_path,
                      valid_bid_json(reg) | {"contact_email": "a@example.org\nBcc: x@example.org"})
    assert "contact_email: contains a line break, which has no place in this one-line field; remove it" in output



def test_a_line_break_in_a_name_is_refused_as_on_the_form(runner, tmp_path, event, reg, make):
    make.user(roles=("admin",))
    for field, typed in (("contact_name", "Eve\r\nBcc: evil@example.org"),
                         ("applicant_name", "Federation\u2028Bcc: evil@example.org")):
        output = _refused(runner, tmp_path, valid_bid_json(reg) | {field: typed})
        assert f"{field}: contains a line break, which has no place in this one-line field; remove it" in output
