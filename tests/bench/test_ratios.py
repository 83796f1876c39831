"""Part 1 of `make bench`: the arithmetic that judges a page against `/healthz`, the bare route and the reference
page (bench/ratios.py), the revisit row (304 counts, anything else is an error, no ETag is said), and the
before/after table with a run of older code (no bare route, no ETag). Pure, but for one tiny real HTTP server."""

from __future__ import annotations

import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from bench.__main__ import compare
from bench.load import Sample, burst
from bench.ratios import (
    NO_ETAG,
    PAGE_AIM,
    REFERENCE_AIM,
    REVISIT_AIM,
    Against,
    Measured,
    Revisit,
    against,
    describe,
    describe_cost,
    etag_of,
    within,
)


def test_a_route_against_another_by_throughput_and_by_server_cpu():
    page, healthz = Measured(rps=26.0, cpu=0.021), Measured(rps=100.0, cpu=0.005)
    a = against(page, healthz)
    assert a.rps == pytest.approx(0.26)
    assert a.cpu == pytest.approx(4.2)  # the page's CPU per request ÷ /healthz's
    assert a.cost_by_rps == pytest.approx(1 / 0.26)
    assert a.cpu_as_rps == pytest.approx(1 / 4.2)
    assert describe(a) == "req/s 0.26, server CPU 4.20×"


def test_nothing_to_compare_with_gives_no_figure():
    page = Measured(rps=26.0, cpu=0.02)
    assert against(page, None) == Against(None, None)  # older code without the bare route
    assert against(page, Measured(rps=0.0, cpu=None)) == Against(None, None)
    assert within(Against(None, None), 2) is None
    assert describe(Against(None, None)) == "req/s n/a, server CPU n/a"


def test_a_route_that_served_nothing_is_infinitely_dear():
    a = against(Measured(rps=0.0, cpu=None), Measured(rps=100.0, cpu=0.005))
    assert a.cost_by_rps == math.inf
    assert within(a, 100) is False


@pytest.mark.parametrize(("rps", "cpu", "met"), [
    (0.5, 2.0, True),  # exactly the aim, both ways
    (0.49, 1.0, False),  # short by throughput alone
    (0.9, 2.1, False),  # short by server CPU alone
    (0.6, None, True),  # no /proc: judged by throughput alone
])
def test_the_page_aim_is_half_of_healthz_by_throughput_and_by_server_cpu(rps, cpu, met):
    assert within(Against(rps=rps, cpu=cpu), 1 / PAGE_AIM) is met


def test_the_cost_against_the_reference_page_is_its_req_s_over_the_pages():
    page, reference = Measured(rps=50.0, cpu=0.010), Measured(rps=80.0, cpu=0.007)
    a = against(page, reference)
    assert a.cost_by_rps == pytest.approx(1.6) and a.cpu == pytest.approx(10 / 7)
    assert within(a, REFERENCE_AIM) is False  # 1.6 times dearer by throughput, though 1.43 by CPU
    assert describe_cost(a) == "1.60× by throughput, 1.43× by server CPU"
    assert within(against(Measured(rps=60.0, cpu=0.010), reference), REFERENCE_AIM) is True


def test_a_revisit_without_an_etag_is_not_measured_and_says_so():
    r = Revisit(etag=None)
    assert r.verdict() is None
    assert r.why() == NO_ETAG == "no ETag"


@pytest.mark.parametrize(("rps", "cpu", "errors", "met"), [
    (0.85, 1.15, 0, True),  # within 1.2× both ways
    (1 / REVISIT_AIM, REVISIT_AIM, 0, True),  # exactly the aim
    (0.80, 1.0, 0, False),  # 1.25× /healthz's cost by throughput
    (0.95, 1.3, 0, False),  # 1.3× by server CPU
    (0.95, 1.0, 3, False),  # fast, but 3 answers were not 304: the page was made again
])
def test_a_revisit_is_within_its_aim_only_if_every_answer_was_a_304(rps, cpu, errors, met):
    r = Revisit(etag='"v1"', errors=errors, vs_healthz=Against(rps=rps, cpu=cpu))
    assert r.verdict() is met
    if errors:
        assert r.why() == f"{errors} answers not 304; {describe(r.vs_healthz)}"


@pytest.mark.parametrize(("headers", "etag"), [
    ({"etag": '"abc"'}, '"abc"'), ({"etag": 'W/"abc" '}, 'W/"abc"'), ({"etag": "  "}, None), ({}, None)])
def test_the_etag_is_sent_back_exactly_as_given(headers, etag):
    assert etag_of(headers) == etag


class _Versioned(BaseHTTPRequestHandler):
    """A page whose version is "v1": 304 to If-None-Match "v1", else 200 with the ETag (every connection closed,
    as gunicorn's sync workers do)."""

    def do_GET(self):
        if self.headers.get("If-None-Match") == '"v1"':
            self.send_response(304)
            self.send_header("ETag", '"v1"')
            self.send_header("Connection", "close")
            self.end_headers()
            return
        body = b"the page"
        self.send_response(200)
        self.send_header("ETag", '"v1"')
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def versioned_port():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Versioned)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_a_revisit_burst_counts_the_304s_and_any_other_answer_as_an_error(versioned_port):
    same, stale, page = Sample(ok=304), Sample(ok=304), Sample()
    for sample, extra in ((same, {"If-None-Match": '"v1"'}), (stale, {"If-None-Match": '"v0"'}), (page, None)):
        burst(versioned_port, "/", "", concurrency=2, seconds=5, max_requests=6, sample=sample, extra=extra)
    assert (len(same.latencies), same.errors, same.statuses) == (6, 0, {304})
    assert (len(stale.latencies), stale.errors, stale.statuses) == (0, 6, {200})  # made again: errors of the row
    assert (len(page.latencies), page.errors, page.statuses) == (6, 0, {200})


def test_before_and_after_carry_the_new_figures_and_an_older_runs_gaps():
    before = {"pages": {  # a run of older code: no bare route, no reference cost, no revisit
        "ranking @ 50×3": {"rps_ratio": 0.26, "cpu_ratio": 0.21, "p99_ms": 90.0},
        "bid list, revisited @ 5×3": {"no_etag": True}}}
    after = {"code": {"path": "/x", "commit": "0123456789abcdef"}, "pages": {
        "ranking @ 50×3": {"rps_ratio": 0.52, "cpu_ratio": 0.5, "bare_rps_ratio": 0.3, "bare_cpu_ratio": 0.25,
                           "ref_cost_rps": 1.4, "ref_cost_cpu": 1.6, "errors": 0, "p99_ms": 40.0},
        "ranking, revisited @ 50×3": {"rps_ratio": 0.9, "cpu_ratio": 0.88, "errors": 0},
        "a bid, revisited @ 50×3": {"no_etag": True},
        "bare route @ 50×3": {"rps_ratio": 1.8, "cpu_ratio": 2.5},
        "bid list, revisited @ 5×3": {"no_etag": True}}}
    lines = compare(before, after)
    assert "after: the code at `0123456`" in lines[2] and "Before: the code before" in lines[2]
    table = [line for line in lines if line.startswith(("| ranking", "| a bid", "| bare", "| bid list"))]
    assert table[0] == ("| bid list, revisited @ 5×3: req/s and server CPU ÷ `/healthz` | ≥ 0.83 (cost ≤ 1.2×) | "
                        "no ETag | no ETag | – |")  # 5 bids before 50, one row when neither run had an ETag
    assert "| ranking @ 50×3: req/s ÷ `/healthz` | ≥ 0.5 | 0.26 | 0.52 | 2.00 |" in table
    assert "| ranking @ 50×3: cost ÷ reference page, by server CPU | ≤ 1.5 | n/a | 1.60 | – |" in table
    assert "| ranking, revisited @ 50×3: req/s ÷ `/healthz` | ≥ 0.83 (cost ≤ 1.2×) | n/a | 0.90 | – |" in table
    assert "| a bid, revisited @ 50×3: req/s ÷ `/healthz` | ≥ 0.83 (cost ≤ 1.2×) | n/a | no ETag | – |" in table
    assert "| bare route @ 50×3: req/s ÷ `/healthz` | – | n/a | 1.80 | – |" in table
