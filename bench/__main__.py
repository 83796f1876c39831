"""`make bench` (`python -m bench`): pages under load, PDFs, scoring. Writes bench/results.md and prints it.

The machine is shared and noisy, so every figure that is judged is a ratio to a reference measured side by side in
the same run (for pages: `/healthz`, the bare route `/livez` and a plain reference page; plain text for PDFs);
absolute figures are shown for context only.
Everything runs on 127.0.0.1 in a temporary folder that is removed at the end, servers included.

Options: `--quick` (shorter bursts and fewer rounds, a 15 s load test), `--output FILE`, `--parts`,
`--code DIR` (serve and import the app of another tree: the code before a change, e.g. a `git worktree` of an
older commit; the benchmark itself stays this one), `--json FILE` (the judged figures, for a later comparison) and
`--before FILE` (a `--json` of the code before: the summary puts both side by side, with the ratios after ÷ before).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import secrets
import signal
import sqlite3
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.ratios import (
    NO_ETAG,
    PAGE_AIM,
    REFERENCE_AIM,
    REVISIT_AIM,
    Measured,
    Revisit,
    against,
    describe,
    describe_cost,
    within,
)

HERE = Path(__file__).resolve().parent
# (bids, WCOC members) of the page sites; `/healthz`, the bare route and the reference page are measured at each.
SITES = ((5, 3), (50, 3), (200, 3), (200, 15))
QUICK_SITES = ((5, 3), (50, 3), (200, 15))
PDF_AIM = 1.5  # a PDF takes at most 1.5 times plain text's time per page
SCORING_AIM_S = 0.010  # ranking + sensitivity for 20 bids x 15 members x 10 criteria
FIGURES: dict = {}  # what --json writes: the judged figures of this run
NOTES: list[str] = []  # --note: said under the before/after table (how the two runs were made)


def _terminate(signum, frame):  # SIGTERM unwinds like Ctrl-C: servers stopped, temporary folder removed
    raise SystemExit(128 + signum)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def _mib(n_bytes: float) -> str:
    return f"{n_bytes / 1_048_576:.1f} MiB"


def _ratio(x: float) -> str:
    return f"{x:.2f}"


def _r(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


def _verdict(ok: bool) -> str:
    return "**met**" if ok else "**not met**"


def machine() -> str:
    import weasyprint

    nproc = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (f"nproc {nproc}, {platform.system()} {platform.release()} {platform.machine()}, "
            f"Python {sys.version.split()[0]}, "
            f"SQLite {sqlite3.sqlite_version}, WeasyPrint {weasyprint.__version__}")


def part_pages(tmp: Path, quick: bool, out: list[str], aims: list[str]) -> None:
    from bench.data import build_site
    from bench.load import (
        BARE,
        REFERENCE,
        YARDSTICK,
        computed_name,
        load_pages,
        pages,
        query_counts,
        revisit_name,
        short,
    )

    rounds, seconds, concurrency, cap = (2, 1.0, 4, 500) if quick else (5, 1.5, 4, 2000)
    sites = QUICK_SITES if quick else SITES
    results = {}
    for n, members in sites:
        site = build_site(tmp / f"call-{n}-bids-{members}-members", n, members=members)
        counts = query_counts(site)
        measured = load_pages(site, tmp, rounds=rounds, seconds=seconds, concurrency=concurrency,
                              max_requests=cap)
        results[(n, members)] = (site, counts, measured)
        print(f"pages: {n} bids x {members} members measured", file=sys.stderr)

    missing = {k: r[2].bare_missing for k, r in results.items() if r[2].bare_missing}
    out += ["## 1. Pages under load", "",
            "gunicorn, 2 sync workers (with the served tree's `gunicorn.conf.py`, as `make serve`), on 127.0.0.1; a "
            "temporary SQLite database holding the 2015 call in scoring with "
            + ", ".join(f"{n} bids × {m} WCOC members" for n, m in sites)
            + " (submitted, compliant bids, and 2 drafts: the demo's Spanish bid and a practice-call draft; the demo's "
              "3 WCOC members, one recused by federation, one by a declared conflict, a weights version and every "
              "scorecard, one left as a draft; more members score every bid). Logged in as the secretariat "
              f"(`admin@example.org`) through the login form, CSRF token included. Load: a pure-Python generator, "
            f"{concurrency} threads, one new connection per request (sync workers close every connection), {rounds} "
            f"round(s) of a {seconds:g} s burst per route (at most {cap} requests), routes interleaved and their "
            "order reversed every other round. Latency is measured by the client; only 200 answers count (304 for a "
            "revisit). The Board's page (`/board/<slug>`) is not among the pages: these sites stay in scoring, and "
            "the Board's page opens its dossiers, votes and tally only once scoring is closed (deliberation), so here "
            "it would measure a near-empty page.", "",
            "Three measures in the same rounds at every site: **`/healthz`**, the yardstick (it reaches the "
            "database, and as a logged-in caller loads the session's user); the **bare route `/livez`**, the floor "
            "(no session, no database: what Flask, gunicorn and the app's request hooks cost; the same cookie is "
            f"sent and ignored); and the **{REFERENCE}** (`bench/reference.py`, its own gunicorn with 2 workers), "
            "what a page showing as much as the bid list costs with nothing of Gambit's around it. A page's cost "
            "against the reference is the reference's req/s ÷ the page's (and the page's server CPU per request ÷ "
            "the reference's): 1.5 means the page costs 1.5 times the plain page.",
            "",
            "**Kept and computed**: the versioned pages (operations/page_cache.py) keep each page a process computed "
            "until the audit chain's head (any change) or the day moves on, so the page rows, asked again and again "
            "while nothing changes, measure a visit answered from that copy. The **computed** rows ask the same "
            "pages of a second gunicorn, on the same database, with `PAGE_CACHE=false`: each request computes its "
            "page, as the first visit after any change does. Both are judged on the aims.",
            "",
            "**Revisits**: each page is read once, its `ETag` kept, then in the rounds asked again with "
            "`If-None-Match: <that ETag>`, as a browser revisiting it does; only a 304 counts, any other answer is "
            "an error of that row. A page that gives no ETag has its row marked *no ETag* and is not measured.",
            *(["", f"The bare route was not measured: {next(iter(missing.values()))} at every site (the code "
                   "measured has no bare route), so the ÷ bare route columns are empty."]
              if len(missing) == len(sites) and len(set(missing.values())) == 1 else
              [""] + [f"The bare route was not measured at {k[0]} × {k[1]}: {why} (the code measured has no bare "
                      "route), so the ÷ bare route columns are empty there." for k, why in missing.items()]
              if missing else []),
            "",
            "The generator shares the 2 cores with the server; while it loads `/healthz` it uses "
            + ", ".join(f"{results[k][2].generator_share * 100:.0f}% of a core at {k[0]} × {k[1]}" for k in sites)
            + ", so the fastest routes are held back more than the slower pages and the throughput ratios flatter "
              "the pages a little.", "",
            "The last three columns are the gunicorn workers' CPU time per request (from /proc) as a ratio to "
            "`/healthz`'s, the bare route's and the reference page's (its own workers'): the cost of a page, much "
            "less exposed to the neighbours' load than wall-clock figures.", "",
            "| bids × members | route | requests | req/s | req/s ÷ `/healthz` | req/s ÷ bare route | cost ÷ reference "
            "page (its req/s ÷ the route's) | p50 | p99 | errors | server CPU per request ÷ `/healthz` | ÷ bare "
            "route | ÷ reference page |",
            "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    below: list[str] = []  # pages under PAGE_AIM of /healthz, by throughput or by server CPU
    over: list[str] = []  # pages over REFERENCE_AIM times the reference page's cost
    revisits: list[tuple[str, Revisit]] = []
    scale: list[str] = []
    for key in sites:
        n, members = key
        site, counts, measured = results[key]
        samples = measured.samples
        yardstick = _measured(samples[YARDSTICK[0]])
        bare = _measured(samples[BARE[0]]) if BARE[0] in samples else None
        reference = _measured(samples[REFERENCE])
        page_names = [name for name, _ in pages(site)]
        judged_pages = {*page_names, *(computed_name(p) for p in page_names)}
        revisit_of = {revisit_name(name): name for name in page_names}
        rows = list(samples)
        for name in page_names:  # a page without an ETag: its revisit row says so, right after the pages
            if measured.etags.get(name) is None:
                rows.insert(rows.index(REFERENCE), revisit_name(name))
        for name in rows:
            where = f"{short(name)} at {n} × {members}"
            if name not in samples:
                revisits.append((f"{short(revisit_of[name])} at {n} × {members}", Revisit(etag=None)))
                FIGURES.setdefault("pages", {})[f"{short(name)} @ {n}×{members}"] = {"no_etag": True}
                out.append(f"| {n} × {members} | {name} | {NO_ETAG} | – | – | – | – | – | – | – | – | – | – |")
                continue
            s = samples[name]
            m = _measured(s)
            vs_y, vs_b, vs_r = against(m, yardstick), against(m, bare), against(m, reference)
            FIGURES.setdefault("pages", {})[f"{short(name)} @ {n}×{members}"] = {
                "rps_ratio": vs_y.rps, "cpu_ratio": vs_y.cpu_as_rps, "p99_ms": s.percentile(99) * 1000,
                "bare_rps_ratio": vs_b.rps, "bare_cpu_ratio": vs_b.cpu_as_rps,
                "ref_cost_rps": vs_r.cost_by_rps, "ref_cost_cpu": vs_r.cpu, "errors": s.errors}
            out.append(f"| {n} × {members} | {name} | {len(s.latencies)} | {s.rps:.1f} | {_r(vs_y.rps)} | "
                       f"{_r(vs_b.rps)} | {_r(vs_r.cost_by_rps)} | {_ms(s.percentile(50))} | "
                       f"{_ms(s.percentile(99))} | {s.errors} | {_r(vs_y.cpu)} | {_r(vs_b.cpu)} | {_r(vs_r.cpu)} |")
            if name in judged_pages:
                if within(vs_y, 1 / PAGE_AIM) is False:
                    below.append(f"{where} ({describe(vs_y)})")
                if within(vs_r, REFERENCE_AIM) is False:
                    over.append(f"{where} ({describe_cost(vs_r)})")
            elif name in revisit_of:
                revisits.append((where, Revisit(etag=measured.etags[revisit_of[name]], errors=s.errors,
                                                vs_healthz=vs_y)))
        scale.append(f"at {n} × {members}, "
                     + (f"the bare route {_scale(against(bare, yardstick))}" if bare else
                        f"no bare route ({measured.bare_missing})")
                     + f", the reference page {_scale(against(reference, yardstick))}")
    first, *rest = sites
    out += ["", "SQL statements per request (in-process, Flask test client, the secretariat, second request of "
            "each route, counted with a `before_cursor_execute` listener; a revisit is counted when the page gave "
            "an ETag and answered it with 304), and how throughput changes with the data (req/s ÷ req/s at "
            f"{first[0]} × {first[1]}):", "",
            "| route | " + " | ".join(f"statements, {n} × {m}" for n, m in sites) + " | grows with bids? | "
            + " | ".join(f"req/s at {n} × {m} ÷ at {first[0]} × {first[1]}" for n, m in rest) + " |",
            "|---|" + "---:|" * len(sites) + "---|" + "---:|" * len(rest)]
    growing = _statement_rows(results, sites, out)
    out.append("")
    sizes = ", ".join(f"{n} × {m}" for n, m in sites)
    aims.append(f"- Every page at no less than {PAGE_AIM} of `/healthz` by throughput and by server CPU (its CPU "
                f"per request at most {1 / PAGE_AIM:g}× `/healthz`'s) at {sizes}: {_verdict(not below)}"
                + (f" — below: {'; '.join(below)}." if below else "."))
    aims.append(f"- No page more than {REFERENCE_AIM}× the plain reference page's cost (the reference's req/s ÷ the "
                f"page's, and the page's server CPU per request ÷ the reference's), at every site: "
                f"{_verdict(not over)}" + (f" — over: {'; '.join(over)}." if over else "."))
    judged = [(where, r) for where, r in revisits if r.verdict() is not None]
    failed = [f"{where} ({r.why()})" for where, r in judged if not r.verdict()]
    unmeasured = [where for where, r in revisits if r.verdict() is None]
    aims.append(f"- A revisit with an unchanged version (`If-None-Match`, answered 304) within {REVISIT_AIM}× "
                f"`/healthz`'s cost (req/s ÷ `/healthz` at least {1 / REVISIT_AIM:.2f}, server CPU per request "
                f"÷ `/healthz` at most {REVISIT_AIM}, every answer a 304): "
                + (_verdict(not failed) if judged else "**not measured**")
                + (f" — over: {'; '.join(failed)}" if failed else "")
                + (" — no page gave an ETag (the code measured has none), so no revisit was measured" if not judged
                   else f" — {NO_ETAG}, so not measured: {', '.join(unmeasured)}" if unmeasured else "") + ".")
    aims.append(f"- No page whose SQL statement count grows with the data ({' → '.join(str(n) for n, _ in sites)} "
                f"bids): {_verdict(not growing)}" + (f" — grows: {', '.join(growing)}." if growing else "."))
    aims.append("- For scale, against `/healthz` in the same rounds: " + "; ".join(scale) + ".")


def _statement_rows(results: dict, sites, out: list[str]) -> list[str]:
    """The rows of the SQL statements table, one per route of the first site, appended to `out` (statements at
    each site, and req/s against the first site's); returns the routes whose count grows with the data."""
    from bench.load import short

    first, *rest = sites
    growing = []
    small = results[first]
    for name in small[1]:
        counts = [results[k][1].get(name) for k in sites]
        known = [c for c in counts if c is not None]
        grows = max(known) > known[0]
        if grows:
            growing.append(f"{short(name)} ({' → '.join(str(c) for c in known)})")
        speeds = [_speed(results[k][2].samples.get(name), small[2].samples.get(name)) for k in rest]
        FIGURES.setdefault("statements", {})[short(name)] = counts
        out.append(f"| {name} | " + " | ".join("–" if c is None else str(c) for c in counts)
                   + f" | {'**yes**' if grows else 'no'} | " + " | ".join(_r(x) for x in speeds) + " |")
    return growing


def _scale(a) -> str:
    """The bare route or the reference page against `/healthz`, in words."""
    rps = "n/a" if a.rps is None else f"{a.rps:.2f}"
    cpu = "n/a" if a.cpu is None else f"{a.cpu:.2f}"
    return f"serves {rps}× its req/s at {cpu}× its server CPU per request"


def _measured(s) -> Measured:
    """A route's Sample as the two figures that are judged."""
    return Measured(rps=s.rps, cpu=s.server_cpu_per_request)


def _speed(s, small) -> float | None:
    """req/s of a route at a site ÷ its req/s at the smallest site (None where either was not measured)."""
    return s.rps / small.rps if s is not None and small is not None and small.rps else None


def part_pdfs(tmp: Path, quick: bool, out: list[str], aims: list[str]) -> None:
    from bench.data import build_site
    from bench.pdfs import run_pdfs

    site = build_site(tmp / "call-10-bids", 10, state="deliberation")
    rounds = 2 if quick else 5
    results, facts = run_pdfs(site, tmp, rounds=rounds)
    print("pdfs measured", file=sys.stderr)
    low, high = min(facts["dossier_pages"]), max(facts["dossier_pages"])
    span = f"{low}" if low == high else f"{low}–{high}"
    out += ["## 2. PDFs", "",
            f"The 2015 call with 10 submitted bids, scoring closed (deliberation). `board.services.ensure_pack` made "
            f"the {facts['dossiers']} dossiers ({span} pages each) "
            f"and the board pack ({facts['pack_pages']} pages) in its first call "
            f"({facts['ensure_pack_s']:.1f} s in this run; absolute, for context only). "
            f"Then each document's HTML (from `board.documents` and `templates/pdf/`) and a plain-text document of "
            f"the same page count (paragraphs only, the same `pdf.css`) went through `evidence.pdf.html_to_pdf`, "
            f"{rounds} rounds after a warm-up, each document rendered right next to its plain twin; times are medians, "
            f"and the time ratio is the median of the per-round ratios.", "",
            "Memory: the tracemalloc peak during one render in this process (Python objects only), and the growth "
            "of the peak resident set (VmHWM) of a fresh process rendering the document once after a 1-page "
            "warm-up (includes Pango, HarfBuzz and cairo).", "",
            "| document | pages | render | plain text, same pages | time per page ÷ plain (range over rounds) | "
            "CPU time per page ÷ plain | tracemalloc peak | ÷ plain | peak RSS growth | ÷ plain | "
            "context + template | signing (`evidence.signing.sign_issued`) | signing's share of render + sign |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    over: list[str] = []
    borderline: list[str] = []
    for r in results:
        rss = (f"{r.rss_growth_kib / 1024:.1f} MiB" if r.rss_growth_kib is not None else "n/a")
        rss_ratio = (_ratio(r.rss_growth_kib / r.plain_rss_growth_kib)
                     if r.rss_growth_kib is not None and r.plain_rss_growth_kib else "n/a")
        out.append(f"| {r.name} | {r.pages} | {_ms(r.render_s)} | {_ms(r.plain_render_s)} ({r.plain_pages} p.) | "
                   f"{_ratio(r.time_ratio_per_page)} ({_ratio(min(r.round_ratios))}–{_ratio(max(r.round_ratios))}) | "
                   f"{_ratio(r.cpu_ratio_per_page)} | "
                   f"{_mib(r.tracemalloc_peak)} | "
                   f"{_ratio(r.tracemalloc_peak / r.plain_tracemalloc_peak)} | {rss} | {rss_ratio} | "
                   f"{_ms(r.context_s) if r.context_s is not None else '–'} | "
                   f"{_ms(r.sign_s) if r.sign_s is not None else '–'} | "
                   f"{f'{r.sign_share:.1%}' if r.sign_share is not None else '–'} |")
        if r.name == facts["diagnostic"]:
            continue
        FIGURES.setdefault("pdfs", {})[r.name.split(" (")[0]] = {"time_ratio": r.time_ratio_per_page,
                                                                  "cpu_ratio": r.cpu_ratio_per_page,
                                                                  "sign_ms": (r.sign_s or 0) * 1000,
                                                                  "sign_share": r.sign_share}
        if r.time_ratio_per_page > PDF_AIM:
            over.append(f"{r.name.split(' (')[0]} ({r.time_ratio_per_page:.2f}×; CPU time {r.cpu_ratio_per_page:.2f}×)")
        if min(r.round_ratios) <= PDF_AIM < max(r.round_ratios) or (
                (r.time_ratio_per_page > PDF_AIM) != (r.cpu_ratio_per_page > PDF_AIM)):
            borderline.append(f"{r.name.split(' (')[0]} ({r.time_ratio_per_page:.2f}×, rounds "
                              f"{min(r.round_ratios):.2f}–{max(r.round_ratios):.2f}, CPU time "
                              f"{r.cpu_ratio_per_page:.2f}×)")
    tables = (f"The dossier holds {len(facts['dossier_tables'])} tables "
              f"({', '.join(str(n) for n in facts['dossier_tables'])} rows); the diagnostic row is the same HTML "
              "with them removed, against plain text of its own page count. " if facts["dossier_tables"]
              else "The dossier holds no table (blocks only), so there is no diagnostic row without them. ")
    out += ["",
            tables + "A wide range over rounds means the "
            "neighbours were busy during the run; the CPU-time column is steadier. Signing: the document's own "
            f"PDF signed with the development identity ({rounds} times, median), as `board.services` signs each stored "
            "dossier and pack once; its share is sign ÷ (render + sign).", ""]
    FIGURES["ensure_pack_s"] = facts["ensure_pack_s"]
    aims.append(f"- PDFs at no more than {PDF_AIM}× plain text's time per page: {_verdict(not over)}"
                + (f" — over: {', '.join(over)}." if over else ".")
                + (f" Borderline in this run (the rounds, or wall and CPU time, fall on both sides of {PDF_AIM}×): "
                   f"{', '.join(borderline)}." if borderline else ""))


def part_scoring(quick: bool, out: list[str], aims: list[str]) -> None:
    from bench.scoring_part import run_scoring

    r = run_scoring(runs=10 if quick else 30, page_runs=3 if quick else 5)
    print("scoring measured", file=sys.stderr)
    FIGURES["scoring"] = {"total_ms": r.total_s * 1000, "cpu_total_ms": r.cpu["total"] * 1000,
                          "page_ms": r.page_s * 1000, "page_statements": r.page_queries}
    aims.append(f"- Ranking + sensitivity for {r.bids} bids × {r.members} members × {r.criteria} criteria within "
                f"{SCORING_AIM_S * 1000:.0f} ms: {_verdict(r.total_s <= SCORING_AIM_S)} ({_ms(r.total_s)} median, "
                f"{_ms(r.cpu['total'])} CPU time; an absolute figure, the only one judged so, on a machine that may "
                "be busy). "
                f"The ranking page around it, in-process: {_ms(r.page_s)} "
                f"({r.page_queries} SQL statements).")
    out += ["## 3. Scoring (the criteria, weighted)", "",
            f"{r.bids} bids × {r.members} members × {r.criteria} criteria, {r.samples:,} Dirichlet samples "
            f"(`bench/bench_scoring.py`'s `make_case`); medians of {r.runs} interleaved runs after a warm-up.", "",
            "| case | median | ÷ ranking alone | CPU time, median | ÷ ranking alone |", "|---|---:|---:|---:|---:|",
            f"| ranking (`rank_bids`) | {_ms(r.rank_s)} | 1.00 | {_ms(r.cpu['rank'])} | 1.00 |",
            f"| sensitivity (`assess_sensitivity`) | {_ms(r.sensitivity_s)} | {_ratio(r.sensitivity_s / r.rank_s)} | "
            f"{_ms(r.cpu['sensitivity'])} | {_ratio(r.cpu['sensitivity'] / r.cpu['rank'])} |",
            f"| ranking + sensitivity | {_ms(r.total_s)} | {_ratio(r.total_s / r.rank_s)} | {_ms(r.cpu['total'])} | "
            f"{_ratio(r.cpu['total'] / r.cpu['rank'])} |",
            f"| the ranking page, in-process, {r.bids} bids × {r.members} members (median of {r.page_runs}) | "
            f"{_ms(r.page_s)} | {_ratio(r.page_s / r.rank_s)} | | |", "",
            f"The page costs {_ratio(r.page_s / r.total_s)}× the ranking + sensitivity arithmetic it shows. "
            f"SQL statements of the ranking page: {r.page_queries} at {r.bids} bids × {r.members} members, "
            f"{r.small_page_queries} at {r.small[0]} bids × {r.small[1]} members"
            f" ({'constant' if r.page_queries == r.small_page_queries else '**grows**'}).",
            f"Verdict on the generated data: {r.verdict}", ""]


def part_load(tmp: Path, quick: bool, out: list[str], aims: list[str], seconds: float | None = None) -> None:
    """50 clients for 60 s (15 s with --quick, else --load-seconds): SQLite with 2 workers, PostgreSQL with 4 (when
    it answers; BENCH_PG=off runs SQLite alone)."""
    from bench.data import build_site
    from bench.load import Sample, load_test

    clients, seconds = 50, seconds or (15.0 if quick else 60.0)
    kinds: list[str] = []
    runs = [("SQLite", 2, None)]
    pg = _postgres_database(tmp)
    if pg:
        runs.append(("PostgreSQL", 4, pg))
    rows = []
    for label, workers, url in runs:
        site = build_site(tmp / f"load-{label.lower()}", 50, database_url=url)
        r = load_test(site, tmp, workers=workers, clients=clients, seconds=seconds, label=label.lower())
        print(f"load test on {label} done", file=sys.stderr)
        login = Sample(latencies=r.login_latencies)
        FIGURES.setdefault("load", {})[label] = {"errors": r.errors, "requests": r.requests,
                                                 "p50_ms": r.percentile(50) * 1000, "p99_ms": r.percentile(99) * 1000}
        rows.append(f"| {label} | {workers} | {r.requests} | {r.requests / r.seconds:.1f} | {r.errors} "
                    f"({r.login_failures} logins) | {_ms(r.percentile(50))} | {_ms(r.percentile(99))} | "
                    f"{_ms(login.percentile(50))} | {_ms(login.percentile(99))} | "
                    f"{', '.join(f'{k}: {v}' for k, v in sorted(r.statuses.items()))} |")
        kinds += [f"- {label}, client side: {what} × {n}" for what, n in sorted(r.error_kinds.items())]
        kinds += [f"- {label}, server log: `{line}` × {n}" for line, n in sorted(r.server_errors.items())]
        for line in kinds[-(len(r.error_kinds) + len(r.server_errors)):] if r.error_kinds or r.server_errors else []:
            print(line, file=sys.stderr)
        aims.append(f"- {clients} clients × {seconds:g} s on {label}, {workers} workers: "
                    f"{_verdict(r.errors == 0)} ({r.errors} errors of {r.requests} requests, p50 "
                    f"{_ms(r.percentile(50))}, p99 {_ms(r.percentile(99))}).")
    if not pg:
        aims.append("- PostgreSQL load test: **not run** (no PostgreSQL at 127.0.0.1:5432, or `BENCH_PG` unset).")
    out += ["## 4. Load test", "",
            f"{clients} clients start together; each logs in through the form (CSRF token included, the login "
            f"counted), then requests the bid list, the ranking, a bid and `/healthz` in turn, back to back, for "
            f"{seconds:g} s, on a database of 50 submitted bids × 3 members; gunicorn sync workers, 120 s timeout. "
            "The account's password is hashed with the app's own argon2 settings (each login verifies a real "
            "hash). An error is any answer but 200 (302 for the login) or a failed connection; p50 and p99 are the "
            "pages' latencies (200 answers), the logins' are apart.", "",
            "| database | workers | requests | req/s | errors | p50 | p99 | login p50 | login p99 | statuses |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|", *rows, "",
            "What each error was (client side: the request, the status and the page's title, or no answer within "
            "the client's 120 s; server log: gunicorn's failure lines):", "",
            *(kinds or ["- none"]), ""]


def _postgres_database(tmp: Path) -> str | None:
    """A fresh PostgreSQL database for the load test (BENCH_PG, default the local server), or None."""
    import uuid

    import sqlalchemy as sa

    server = os.environ.get("BENCH_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
    if server == "off":
        return None
    name = f"gambit_bench_{uuid.uuid4().hex[:8]}"
    try:
        admin = sa.create_engine(server, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.exec_driver_sql(f"CREATE DATABASE {name}")
        _CLEANUP.append((admin, name))
        return admin.url.set(database=name).render_as_string(hide_password=False)
    except Exception as exc:  # no server: the part says so
        print(f"PostgreSQL unavailable: {exc}", file=sys.stderr)
        return None


_CLEANUP: list = []


def _drop_databases() -> None:
    for admin, name in _CLEANUP:
        try:
            with admin.connect() as conn:
                conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            admin.dispose()
        except Exception as exc:
            print(f"could not drop {name}: {exc}", file=sys.stderr)


def _commit(tree: Path) -> str | None:
    """The commit checked out in `tree` (a git work tree), or None."""
    import subprocess

    try:
        done = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def _code_label(figures: dict, default: str) -> str:
    """How a run's --json names the code it measured: its commit, else its folder, else `default` (a JSON made
    before the runs recorded it)."""
    code = figures.get("code") or {}
    if code.get("commit"):
        return f"the code at `{code['commit'][:7]}`"
    return f"the code in `{code['path']}`" if code.get("path") else default


def _by_site(key: str) -> tuple:
    """The order of the before/after table: by site (bids, then members, as in part 1), then by route."""
    name, _, site = key.partition(" @ ")
    bids, _, members = site.partition("×")
    return (int(bids), int(members), name) if bids.isdigit() and members.isdigit() else (0, 0, key)


def _shown(value, fmt: str) -> str:
    """A figure of the summary table: n/a when missing, a word as it is (*no ETag*), a number in `fmt`."""
    return "n/a" if value is None else value if isinstance(value, str) else fmt.format(value)


def _revisit_figure(figures: dict, field: str):
    """A revisit's figure, or *no ETag* when the page gave none."""
    return NO_ETAG if figures.get("no_etag") else figures.get(field)


def compare(before: dict, after: dict) -> list[str]:
    """The summary table: each judged figure before and after, and after ÷ before."""
    lines = ["## Before and after", "",
             f"Before: {_code_label(before, 'the code before')}, served from a `git worktree` of it with this "
             f"benchmark (`--code`); after: {_code_label(after, 'this tree')}. Two runs on the same machine: each "
             "ratio is measured within its own run (a page against `/healthz`, the bare route and the reference page, "
             "a PDF against plain text in the same rounds), so the two columns compare ratios, not absolute times. "
             "A figure the code before could not give (no bare route, no ETag) reads n/a or *no ETag*.", "",
             *NOTES,
             "| figure | aim | before | after | after ÷ before |", "|---|---|---:|---:|---:|"]

    def row(name, aim, b, a, fmt="{:.2f}"):
        if a is None and b is None:
            return
        ratio = (f"{a / b:.2f}" if isinstance(a, int | float) and isinstance(b, int | float) and b else "–")
        lines.append(f"| {name} | {aim} | {_shown(b, fmt)} | {_shown(a, fmt)} | {ratio} |")

    page_aim, cost_aim = f"≥ {PAGE_AIM}", f"≤ {REFERENCE_AIM}"
    revisit_aim = f"≥ {1 / REVISIT_AIM:.2f} (cost ≤ {REVISIT_AIM}×)"
    for key in sorted(set(before.get("pages", {})) | set(after.get("pages", {})),
                      key=_by_site):
        kind = key.split(" @ ")[0]
        if kind == "trivial":
            continue
        b, a = before.get("pages", {}).get(key, {}), after.get("pages", {}).get(key, {})
        if kind in ("bare route", "reference page"):  # context: how the floor and the plain page stand
            row(f"{key}: req/s ÷ `/healthz`", "–", b.get("rps_ratio"), a.get("rps_ratio"))
            row(f"{key}: by server CPU (1 ÷ CPU ratio)", "–", b.get("cpu_ratio"), a.get("cpu_ratio"))
        elif kind.endswith(", revisited") and b.get("no_etag") and a.get("no_etag"):
            row(f"{key}: req/s and server CPU ÷ `/healthz`", revisit_aim, NO_ETAG, NO_ETAG)
        elif kind.endswith(", revisited"):
            row(f"{key}: req/s ÷ `/healthz`", revisit_aim, _revisit_figure(b, "rps_ratio"),
                _revisit_figure(a, "rps_ratio"))
            row(f"{key}: by server CPU (1 ÷ CPU ratio)", revisit_aim, _revisit_figure(b, "cpu_ratio"),
                _revisit_figure(a, "cpu_ratio"))
            row(f"{key}: answers not 304", "0", _revisit_figure(b, "errors"), _revisit_figure(a, "errors"), "{:.0f}")
        else:
            row(f"{key}: req/s ÷ `/healthz`", page_aim, b.get("rps_ratio"), a.get("rps_ratio"))
            row(f"{key}: by server CPU (1 ÷ CPU ratio)", page_aim, b.get("cpu_ratio"), a.get("cpu_ratio"))
            row(f"{key}: req/s ÷ bare route", "–", b.get("bare_rps_ratio"), a.get("bare_rps_ratio"))
            row(f"{key}: cost ÷ reference page, by throughput", cost_aim, b.get("ref_cost_rps"),
                a.get("ref_cost_rps"))
            row(f"{key}: cost ÷ reference page, by server CPU", cost_aim, b.get("ref_cost_cpu"),
                a.get("ref_cost_cpu"))
    for key in sorted(set(before.get("statements", {})) | set(after.get("statements", {}))):
        b, a = before.get("statements", {}).get(key), after.get("statements", {}).get(key)
        lines.append(f"| {key}: SQL statements per request (by size) | flat | {b} | {a} | – |")
    for key in sorted(set(before.get("pdfs", {})) | set(after.get("pdfs", {}))):
        b, a = before.get("pdfs", {}).get(key, {}), after.get("pdfs", {}).get(key, {})
        row(f"{key}: time per page ÷ plain text", "≤ 1.5", b.get("time_ratio"), a.get("time_ratio"))
        row(f"{key}: CPU time per page ÷ plain text", "≤ 1.5", b.get("cpu_ratio"), a.get("cpu_ratio"))
        row(f"{key}: signing's share of render + sign", "–", b.get("sign_share"), a.get("sign_share"), "{:.1%}")
    b, a = before.get("scoring", {}), after.get("scoring", {})
    row("ranking + sensitivity, 20 × 15 × 10 (ms)", "≤ 10 ms", b.get("total_ms"), a.get("total_ms"), "{:.1f}")
    row("the ranking page in-process, 20 × 15 (ms)", "–", b.get("page_ms"), a.get("page_ms"), "{:.1f}")
    for db_name in ("SQLite", "PostgreSQL"):
        b, a = before.get("load", {}).get(db_name, {}), after.get("load", {}).get(db_name, {})
        row(f"load test on {db_name}: errors", "0", b.get("errors"), a.get("errors"), "{:.0f}")
        row(f"load test on {db_name}: p50 (ms)", "–", b.get("p50_ms"), a.get("p50_ms"), "{:.0f}")
        row(f"load test on {db_name}: p99 (ms)", "–", b.get("p99_ms"), a.get("p99_ms"), "{:.0f}")
    return lines + [""]


def combine(args) -> int:
    """Results of a run on this code (`--after JSON REPORT`) with the run on the code before beside them (the
    table of `compare`) and in full after them: the two runs can be made one after the other, or at once."""
    after_json, after_report = args.after
    text = after_report.read_text()
    table = compare(json.loads(args.before.read_text()), json.loads(after_json.read_text())) if args.before else []
    marker = "\n## 1. " if "\n## 1. " in text else "\n## "
    head, _, rest = text.partition(marker)
    text = head.rstrip() + "\n\n" + "\n".join(table) + marker + rest
    if args.before_report:
        before = args.before_report.read_text().replace("\n## ", "\n### ").replace("# Benchmarks\n", "", 1)
        text = text.rstrip() + "\n\n## Appendix: the same benchmark on the code before\n\n" + before
    args.output.write_text(text.rstrip() + "\n")
    print(text)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter bursts and fewer rounds")
    parser.add_argument("--output", type=Path, default=HERE / "results.md")
    parser.add_argument("--parts", default="pages,pdfs,scoring,load", help="comma-separated subset to run")
    parser.add_argument("--code", type=Path, default=None, help="serve and import the app of this tree")
    parser.add_argument("--json", type=Path, default=None, help="write the judged figures here")
    parser.add_argument("--before", type=Path, default=None, help="figures (--json) of the code before")
    parser.add_argument("--before-report", type=Path, default=None,
                        help="the results (--output) of the code before, appended in full")
    parser.add_argument("--after", type=Path, nargs=2, metavar=("JSON", "REPORT"), default=None,
                        help="measure nothing: combine this run's figures and results with --before/--before-report")
    parser.add_argument("--load-seconds", type=float, default=None,
                        help="the load test's duration (default 60 s, 15 s with --quick)")
    parser.add_argument("--note", action="append", default=[], help="a paragraph under the before/after table")
    args = parser.parse_args(argv)
    NOTES.extend(line for note in args.note for line in (note, ""))
    if args.after:
        return combine(args)
    parts = set(args.parts.split(","))
    signal.signal(signal.SIGTERM, _terminate)
    started = time.perf_counter()
    out: list[str] = []
    aims: list[str] = []
    with tempfile.TemporaryDirectory(prefix="gambit-bench-") as tmp_name:
        tmp = Path(tmp_name)
        # Before the app is imported (config reads these once): nothing is written outside the temporary folder,
        # every process (this one, the gunicorn workers) signs sessions with the same key, nothing external.
        os.environ.update({"GAMBIT_INSTANCE": str(tmp / "instance"), "SECRET_KEY": secrets.token_hex(32),
                           "RATELIMIT_ENABLED": "false", "MAIL_ENABLED": "false"})
        for name in ("DATABASE_URL", "REDIS_URL", "UPLOAD_DIR"):
            os.environ.pop(name, None)
        code = (args.code or HERE.parent).resolve()
        sys.path.insert(0, str(code))
        FIGURES["code"] = {"path": str(code), "commit": _commit(code)}
        if args.code:
            import bench.load

            bench.load.CODE = code
        try:
            if "pages" in parts:
                part_pages(tmp, args.quick, out, aims)
            if "pdfs" in parts:
                part_pdfs(tmp, args.quick, out, aims)
            if "scoring" in parts:
                part_scoring(args.quick, out, aims)
            if "load" in parts:
                part_load(tmp, args.quick, out, aims, args.load_seconds)
        finally:
            _drop_databases()
    if args.json:
        args.json.write_text(json.dumps(FIGURES, indent=1, sort_keys=True))
    comparison = compare(json.loads(args.before.read_text()), FIGURES) if args.before else []
    head = ["# Benchmarks", "",
            f"Generated by `make bench` (`python -m bench{' --quick' if args.quick else ''}`) on "
            f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC in {time.perf_counter() - started:.0f} s. Machine: {machine()}. "
            "The machine may be shared with other work (other sessions' tests and builds): the figures judged are "
            "ratios to a reference measured side by side in the same run; absolute times are for context only.", "",
            f"Code measured: `{code}`.", "",
            "## Aims (this run)", "", *aims, "", *comparison]
    if args.before_report:
        before = args.before_report.read_text().replace("\n## ", "\n### ").replace("# Benchmarks\n", "", 1)
        out += ["", "## Appendix: the same benchmark on the code before", "", before]
    text = "\n".join(head + out).rstrip() + "\n"
    args.output.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
