"""The one helper each for CSV cells, canonical hashing and storing a file (core.exports, evidence.hashing,
evidence.storage.store_file)."""

import hashlib
import re

import pytest

from core.exports import csv_cell
from evidence.hashing import canonical_json, canonical_sha256
from evidence.storage import store_file


@pytest.mark.parametrize(("value", "cell"), [
    ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"),
    ("+1", "'+1"), ("-1", "'-1"), ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"), ("\rx", "'\rx"),
    ("Lviv, UA", "Lviv, UA"), ("", ""), (None, ""), (3, "3"),
])
def test_csv_cell_keeps_a_formula_from_running(value, cell):
    assert csv_cell(value) == cell


def test_canonical_hash_ignores_key_order_and_keeps_utf8():
    assert canonical_json({"b": 1, "a": "Kyiv–Lviv"}) == '{"a":"Kyiv–Lviv","b":1}'
    assert canonical_sha256({"b": 1, "a": [1, 2]}) == canonical_sha256({"a": [1, 2], "b": 1}) == hashlib.sha256(
        b'{"a":[1,2],"b":1}').hexdigest()


def test_store_file_names_the_file_itself(tmp_path):
    name = store_file(tmp_path / "bids" / "7", b"%PDF-1.7 data")
    assert re.fullmatch(r"[0-9a-f]{32}\.pdf", name)
    assert (tmp_path / "bids" / "7" / name).read_bytes() == b"%PDF-1.7 data"
    assert store_file(tmp_path / "bids" / "7", b"other") != name


PLAIN_DIGEST = "c614f557046cfc1d2dacc96328b0af646841bb459c45c5ab39fdc5d3d0977f35"


def test_the_plain_form_is_the_one_bid_versions_were_always_fingerprinted_in():
    # The digest below was computed with the code before evidence.hashing existed:
    # hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()
    value = {"data": {"venue_city": "Kyiv–Lviv", "prize_fund_eur": "200000.00"}, "documents": [{"kind": "guarantee"}]}
    assert canonical_json(value, compact=False) == (
        '{"data": {"prize_fund_eur": "200000.00", "venue_city": "Kyiv\\u2013Lviv"}, '
        '"documents": [{"kind": "guarantee"}]}')
    assert canonical_sha256(value, compact=False) == PLAIN_DIGEST
    assert canonical_sha256(value) != PLAIN_DIGEST
