"""PDFs: a bid's dossier and the board pack of a 10-bid call, each against WeasyPrint rendering a plain-text
document (paragraphs, the same stylesheet, the same page count) through the same function, `evidence.pdf.html_to_pdf`.

Time is the median of interleaved rounds. Memory is measured two ways: the tracemalloc peak (Python objects only;
Pango, HarfBuzz and cairo allocate outside it) in this process, and the growth of the peak resident set size
(VmHWM, as `ru_maxrss` would be) of a fresh process rendering the document once after a small warm-up document
(`python -m bench.pdfs --rss FILE`), which does see the C libraries.
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import re
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_SENTENCES = (
    "The organiser provides a playing hall of at least four hundred seats with air conditioning and quiet lighting.",
    "Each player is accompanied by a second, and the organiser pays their board and lodging for the whole match.",
    "The prize fund is paid net of local taxes within fifteen days of the closing ceremony.",
    "Visas are issued on arrival for the players, their seconds and the officials named by FIDE.",
    "The arbiters check the boards, the clocks and the lighting on the day before the first game.",
    "Television and an international stream carry every game live, with commentary in two languages.",
    "The official hotel is within walking distance of the hall and has rooms for every delegation.",
    "A medical doctor is present in the hall from the start of each game until it ends.",
)


def plain_html(paragraphs: int) -> str:
    """A plain-text document: `paragraphs` paragraphs of sentences, with the PDFs' own stylesheet."""
    body = []
    for i in range(paragraphs):
        words = " ".join(_SENTENCES[(i + j) % len(_SENTENCES)] for j in range(5))
        body.append(f"<p>{i + 1}. {words}</p>")
    return ('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Plain text</title>'
            '<link rel="stylesheet" href="css/pdf.css"></head><body><h1>Plain text</h1>'
            + "".join(body) + "</body></html>")


def page_count(data: bytes) -> int:
    from pypdf import PdfReader

    return len(PdfReader(io.BytesIO(data)).pages)


def plain_for(pages: int, render) -> tuple[str, int]:
    """A plain-text document of `pages` pages: estimated from one render, then moved a paragraph at a time
    (a bounded number of renders). Returns the HTML and its actual page count."""
    probe = 8 * pages
    per_page = probe / page_count(render(plain_html(probe)))
    k = max(1, round(per_page * (pages - 0.5)))
    got = page_count(render(plain_html(k)))
    for _ in range(12):
        if got == pages:
            break
        k = max(1, k + (1 if got < pages else -1))
        got = page_count(render(plain_html(k)))
    return plain_html(k), got


@dataclass
class PdfResult:
    name: str
    pages: int
    context_s: float | None  # building the context and the template (board.documents + Jinja)
    render_s: float  # evidence.pdf.html_to_pdf, median
    plain_pages: int
    plain_render_s: float
    tracemalloc_peak: int
    plain_tracemalloc_peak: int
    rss_growth_kib: int | None
    plain_rss_growth_kib: int | None
    round_ratios: list[float]  # per round: (document / its plain twin rendered next to it), per page
    cpu_ratio_per_page: float  # the same with CPU time (medians), less exposed to the neighbours' load
    sign_s: float | None = None  # evidence.signing.sign_issued on this document's PDF, median

    @property
    def sign_share(self) -> float | None:
        """Signing's share of making the stored PDF (render + sign), as board.services does once per document."""
        return None if self.sign_s is None else self.sign_s / (self.render_s + self.sign_s)

    @property
    def time_ratio_per_page(self) -> float:
        """The median of the per-round ratios: each pairs two renders made one after the other, so a slow
        minute of the shared machine weighs on both sides of a ratio."""
        return statistics.median(self.round_ratios)


def _median_time(fn, runs: int) -> float:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def _tracemalloc_peak(fn) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _rss_growth(html_file: Path) -> int | None:
    """Peak RSS growth (KiB) of a fresh process rendering the file once; None if the child fails."""
    proc = subprocess.run([sys.executable, "-m", "bench.pdfs", "--rss", str(html_file)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        print(proc.stderr[-2000:], file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])["growth_kib"]


def run_pdfs(site, tmp: Path, *, rounds: int) -> tuple[list[PdfResult], dict]:
    """Render the dossier of the first ranked bid and the board pack on a call in deliberation, and the plain-text
    documents of the same page counts; returns one PdfResult per document and facts about the service run."""
    from flask import render_template
    from sqlalchemy import select

    from accounts.models import User
    from bench.data import SLUG, make_app
    from board.documents import dossier_context, pack_context
    from board.queries import bid_inputs, pack_inputs
    from board.rules import inputs_sha256
    from board.services import ensure_pack
    from core.db import db
    from events.services import get_event
    from evidence.pdf import html_to_pdf
    from scoring.queries import build_ranking, load_scoring

    app = make_app(site)
    facts: dict = {}
    with app.app_context(), app.test_request_context():
        event = get_event(SLUG)
        admin = db.session.scalars(select(User).where(User.email == site.admin_email)).one()
        now = event.regulation.event.bid_deadline + timedelta(days=21)
        # The real service first: ten dossiers and the pack, rendered, hashed and stored (not timed as a ratio).
        t0 = time.perf_counter()
        pack, dossiers = ensure_pack(event, actor=admin, now=now, upload_dir=site.upload_dir)
        facts["ensure_pack_s"] = time.perf_counter() - t0
        facts["dossiers"] = len(dossiers)
        facts["dossier_pages"] = sorted(d.pages for d in dossiers)
        facts["pack_pages"] = pack.pages
        db.session.commit()

        report = build_ranking(load_scoring(event))
        bid = report.data.ranked[0]
        ident = "BENCH-0001"

        # The HTML exactly as board.services renders it (the footer carries the hash of the inputs).
        def dossier_source() -> str:
            return render_template("pdf/dossier.html", inputs_sha256=inputs_sha256(bid_inputs(bid, report)),
                                   **dossier_context(bid, report, identifier=ident, now=now))

        def pack_source() -> str:
            return render_template("pdf/board_pack.html",
                                   inputs_sha256=inputs_sha256(pack_inputs(event, report, dossiers)),
                                   **pack_context(event, report, dossiers, identifier=ident, now=now))

        docs = {f"bid dossier ({bid.title})": dossier_source, f"board pack ({len(dossiers)} bids)": pack_source}
        sources = {name: make() for name, make in docs.items()}
        context_s = {name: _median_time(make, rounds) for name, make in docs.items()}
        # Where the dossier's time goes: the same document without its tables (DESIGN.md warns that tables
        # running over many pages render several times slower than blocks). A diagnostic, not judged.
        dossier_src = next(iter(sources.values()))
        facts["dossier_tables"] = [t.count("<tr") for t in re.findall(r"<table.*?</table>", dossier_src, flags=re.S)]
        facts["diagnostic"] = None
        if facts["dossier_tables"]:  # a dossier of blocks only has nothing to take away
            bare_name = "bid dossier without its tables (diagnostic)"
            sources[bare_name] = re.sub(r"<table.*?</table>", "", dossier_src, flags=re.S)
            context_s[bare_name] = None
            facts["diagnostic"] = bare_name

        def render(source: str) -> bytes:
            return html_to_pdf(source, timeout=300)

        pages = {name: page_count(render(src)) for name, src in sources.items()}  # also the warm-up
        plains = {name: plain_for(pages[name], render) for name in sources}
        times: dict[str, list[float]] = {name: [] for name in sources} | {f"plain:{n}": [] for n in sources}
        cpu: dict[str, list[float]] = {key: [] for key in times}
        for r in range(rounds):  # interleaved: a noisy moment hits the document and its plain twin alike
            for name, src in sources.items():
                pair = [(name, src), (f"plain:{name}", plains[name][0])]
                for key, html in (pair if r % 2 == 0 else pair[::-1]):
                    t0, c0 = time.perf_counter(), time.process_time()  # process time counts the pool's thread
                    render(html)
                    times[key].append(time.perf_counter() - t0)
                    cpu[key].append(time.process_time() - c0)

        # Signing's share: each stored dossier and pack is signed once after rendering.
        sign_s: dict[str, float | None] = {name: None for name in sources}
        try:  # a --code tree from before signing has no evidence.signing: the column then says "–"
            from evidence import signing
        except ImportError:
            signing = None
        identity = signing.load_identity() if signing else None
        for name, src in sources.items():
            if signing and name != facts["diagnostic"]:
                pdf = render(src)
                sign_s[name] = _median_time(lambda p=pdf, n=name: signing.sign_issued(p, document=f"bench {n}",
                                                                                   identity=identity), rounds)

        results = []
        for i, (name, src) in enumerate(sources.items()):
            plain_src, plain_pages = plains[name]
            peak = _tracemalloc_peak(lambda s=src: render(s))
            plain_peak = _tracemalloc_peak(lambda s=plain_src: render(s))
            doc_file = tmp / f"pdf-{i}.html"
            plain_file = tmp / f"pdf-{i}-plain.html"
            doc_file.write_text(src)
            plain_file.write_text(plain_src)
            results.append(PdfResult(
                name=name, pages=pages[name], context_s=context_s[name],
                render_s=statistics.median(times[name]), plain_pages=plain_pages,
                plain_render_s=statistics.median(times[f"plain:{name}"]),
                tracemalloc_peak=peak, plain_tracemalloc_peak=plain_peak,
                rss_growth_kib=_rss_growth(doc_file), plain_rss_growth_kib=_rss_growth(plain_file),
                round_ratios=[(d / pages[name]) / (p / plain_pages)
                              for d, p in zip(times[name], times[f"plain:{name}"], strict=True)],
                cpu_ratio_per_page=(statistics.median(cpu[name]) / pages[name])
                / (statistics.median(cpu[f"plain:{name}"]) / plain_pages), sign_s=sign_s[name]))
        db.session.remove()
        db.engine.dispose()
    return results, facts


def peak_rss_kib() -> int:
    """This process's peak resident set size in KiB: VmHWM on Linux (ru_maxrss survives exec on Linux, so a
    child started by a large parent would report the parent's peak), ru_maxrss elsewhere."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _rss_child(html_file: str) -> int:
    """Render a warm-up document (fonts, caches, imports), then the file; print the peak RSS growth."""
    from evidence.pdf import html_to_pdf

    html_to_pdf(plain_html(3), timeout=300)
    gc.collect()
    before = peak_rss_kib()
    html_to_pdf(Path(html_file).read_text(), timeout=300)
    after = peak_rss_kib()
    print(json.dumps({"growth_kib": after - before}))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="child process of the PDF benchmark")
    parser.add_argument("--rss", required=True, help="render this HTML file once and print the ru_maxrss growth")
    raise SystemExit(_rss_child(parser.parse_args().rss))
