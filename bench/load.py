"""Pages under load: gunicorn (2 sync workers) on loopback and a small load generator in pure Python (threads and
http.client, bounded by a request count and a duration), plus the SQL statement count of each page in-process.

The load generator shares the machine's cores with the server, so absolute figures mean little; every figure is
reported as a ratio to `/healthz` measured in the same run, in interleaved rounds so that noise hits every route.
"""

from __future__ import annotations

import contextlib
import html
import http.client
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from bench.data import SLUG, Site
from bench.ratios import etag_of

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"


YARDSTICK = ("trivial (`/healthz`)", "/healthz")
BARE = ("bare route (`/livez`)", "/livez")  # no session, no database: the floor (absent from older code)


def pages(site: Site) -> list[tuple[str, str]]:
    """(name, path) of the pages measured."""
    return [("bid list (`/bids/`)", "/bids/"),
            ("ranking (`/events/<slug>/scoring/ranking`)", f"/events/{SLUG}/scoring/ranking"),
            ("a bid (`/bids/<id>`)", f"/bids/{site.first_bid_id}")]


def routes(site: Site) -> list[tuple[str, str]]:
    """(name, path) of `/healthz`, the yardstick every other route is compared with, then the pages."""
    return [YARDSTICK, *pages(site)]


def short(name: str) -> str:
    """A route's name without its path: "ranking" for "ranking (`/events/<slug>/scoring/ranking`)"."""
    return name.split(" (")[0]


def computed_name(page: str) -> str:
    """The row of a page asked of a second server that keeps no copy (PAGE_CACHE off): what its first visit after
    a change costs, every time."""
    return f"{short(page)}, computed (no copy kept)"


# The second server's settings: the versioned pages computed on every request (operations.page_cache). Code without
# versioned pages ignores it, and its computed rows measure the same pages again.
COMPUTED_ENV = {"PAGE_CACHE": "false"}


def revisit_name(page: str) -> str:
    """The row of a page asked again with the ETag it gave (If-None-Match), which counts only 304 answers."""
    return f"{short(page)}, revisited (`If-None-Match` → 304)"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def children_cpu_seconds(parent: int) -> float | None:
    """User + system CPU seconds of the processes whose parent is `parent` (gunicorn's workers), read from
    /proc; None where there is no /proc. Server CPU per request does not depend on how busy the neighbours are
    nearly as much as wall-clock figures do."""
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        return None
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for stat in proc.glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # a process that ended meanwhile
        if int(fields[1]) == parent:  # fields[0] is the state; then ppid, ...; utime and stime are 11 and 12
            total += int(fields[11]) + int(fields[12])
    return total / tick


CODE = ROOT  # the tree whose app is served (`python -m bench --code DIR`: the code before a change)


@contextlib.contextmanager
def gunicorn(site: Site | None, *, workers: int = 2, log: Path, app_spec: str = "app:create_app()",
             env: dict[str, str] | None = None, cwd: Path | None = None, config: Path | None = None):
    """Serve the app on a free loopback port with `workers` sync workers on the site's database (gunicorn reads
    the served tree's gunicorn.conf.py, if it has one, as `make serve` does); stop it (the whole process group) on
    the way out, whatever happens. Yields the port and the master's process id."""
    port = free_port()
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-w", str(workers), "-b", f"{HOST}:{port}", "--timeout", "120",
             *(["-c", str(config)] if config else []), app_spec], cwd=cwd or CODE, env=env or site.env(), stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {proc.returncode}:\n{log.read_text()[-2000:]}")
            try:
                if request(port, "/healthz", timeout=2)[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"gunicorn did not answer within 60 s:\n{log.read_text()[-2000:]}")
            time.sleep(0.2)
        yield port, proc.pid
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def request(port: int, path: str, *, method: str = "GET", cookie: str = "", body: bytes | None = None,
            timeout: float = 30, extra: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """One request on a new connection (gunicorn's sync workers close every connection anyway); `extra` headers
    (If-None-Match) besides the cookie. Returns the status, the headers (keyed in lower case) and the body."""
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        headers = {"Cookie": cookie} if cookie else {}
        headers |= extra or {}
        if body is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders() if k.lower() != "set-cookie"} | {
            "set-cookie": "\n".join(v for k, v in resp.getheaders() if k.lower() == "set-cookie")}, data
    finally:
        conn.close()


def _cookies(jar: dict[str, str], set_cookie: str) -> None:
    for line in filter(None, set_cookie.split("\n")):
        parsed = SimpleCookie()
        parsed.load(line)
        for name, morsel in parsed.items():
            jar[name] = morsel.value


class LoginError(RuntimeError):
    """A login that did not succeed; `what` says how (the step, the status and the page's title, or a timeout)."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what


def describe(status: int, body: bytes) -> str:
    """An answer in a few words: its status and its page's title (else the body's first non-blank line)."""
    text = body.decode("utf-8", "replace")
    title = re.search(r"<title[^>]*>(.*?)</title>", text, re.S | re.I)
    line = title.group(1) if title else next((ln for ln in text.splitlines() if ln.strip()), "")
    return f"{status} {' '.join(html.unescape(line).split())[:100]}".rstrip()


def describe_failure(exc: BaseException, timeout: float) -> str:
    """A request that got no answer: a timeout (the client's own limit) or the connection's error."""
    if isinstance(exc, TimeoutError | socket.timeout):
        return f"no answer within {timeout:g} s"
    return f"{type(exc).__name__}: {exc}"[:120]


def login(port: int, email: str, password: str, *, timeout: float = 30) -> str:
    """Log in as a person would, CSRF token included: GET /login, POST it with the token. Returns the Cookie
    header of the logged-in session; raises LoginError (a RuntimeError) saying which step failed and how."""
    jar: dict[str, str] = {}
    try:
        status, headers, body = request(port, "/login", timeout=timeout)
    except OSError as exc:
        raise LoginError(f"GET /login: {describe_failure(exc, timeout)}") from exc
    _cookies(jar, headers["set-cookie"])
    match = re.search(rb'name="csrf_token"[^>]*value="([^"]+)"', body) or re.search(
        rb'value="([^"]+)"[^>]*name="csrf_token"', body)
    if status != 200 or match is None:
        raise LoginError(f"GET /login: {describe(status, body)} (no CSRF token)")
    form = urlencode({"csrf_token": html.unescape(match.group(1).decode()), "email": email,
                      "password": password}).encode()
    try:
        status, headers, body = request(port, "/login", method="POST", body=form,
                                        cookie="; ".join(f"{k}={v}" for k, v in jar.items()), timeout=timeout)
    except OSError as exc:
        raise LoginError(f"POST /login: {describe_failure(exc, timeout)}") from exc
    _cookies(jar, headers["set-cookie"])
    if status != 302:
        raise LoginError(f"POST /login: {describe(status, body)}, not a redirect")
    # Follow the redirect as a browser does: the page it lands on shows the welcome message, and the session the
    # next requests carry has no message left to show (a page showing one is never a kept version).
    landing = urlsplit(headers.get("location", "/"))
    path = (landing.path or "/") + (f"?{landing.query}" if landing.query else "")
    try:
        status, headers, body = request(port, path, cookie="; ".join(f"{k}={v}" for k, v in jar.items()),
                                        timeout=timeout)
    except OSError as exc:
        raise LoginError(f"GET {path} after logging in: {describe_failure(exc, timeout)}") from exc
    if status != 200:
        raise LoginError(f"GET {path} after logging in: {describe(status, body)}")
    if "set-cookie" in headers:
        _cookies(jar, headers["set-cookie"])
    return "; ".join(f"{k}={v}" for k, v in jar.items())


@dataclass
class Sample:
    """What the load generator saw for one route, over every round: an answer of status `ok` counts, any other is
    an error (a revisit counts 304s: a 200 means the page was made again)."""

    ok: int = 200
    latencies: list[float] = field(default_factory=list)
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # this process's CPU time (every thread) while the bursts ran
    server_cpu_seconds: float | None = 0.0  # the gunicorn workers' CPU time while the bursts ran
    errors: int = 0
    statuses: set[int] = field(default_factory=set)

    @property
    def server_cpu_per_request(self) -> float | None:
        done = len(self.latencies) + self.errors
        return self.server_cpu_seconds / done if self.server_cpu_seconds is not None and done else None

    @property
    def rps(self) -> float:
        return len(self.latencies) / self.seconds if self.seconds else 0.0

    def percentile(self, p: float) -> float:
        """Nearest-rank percentile of the latencies (seconds)."""
        xs = sorted(self.latencies)
        if not xs:
            return float("nan")
        rank = max(1, min(len(xs), -(-len(xs) * p // 100)))
        return xs[int(rank) - 1]


def burst(port: int, path: str, cookie: str, *, concurrency: int, seconds: float, max_requests: int,
          sample: Sample, server_pid: int | None = None, extra: dict[str, str] | None = None) -> None:
    """`concurrency` threads request `path` (with the `extra` headers) back to back until `seconds` pass or
    `max_requests` were sent; answers of status `sample.ok` count."""
    lock = threading.Lock()
    sent = 0
    latencies: list[float] = []
    errors = 0
    statuses: set[int] = set()
    server_start = children_cpu_seconds(server_pid) if server_pid else None
    start = time.perf_counter()
    cpu_start = time.process_time()
    stop_at = start + seconds

    def worker():
        nonlocal sent, errors
        while True:
            with lock:
                if sent >= max_requests or time.perf_counter() >= stop_at:
                    return
                sent += 1
            t0 = time.perf_counter()
            try:
                status = request(port, path, cookie=cookie, extra=extra)[0]
            except OSError:
                status = 0
            elapsed = time.perf_counter() - t0
            with lock:
                statuses.add(status)
                if status == sample.ok:
                    latencies.append(elapsed)
                else:
                    errors += 1

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=seconds + 120)
    sample.seconds += time.perf_counter() - start
    sample.cpu_seconds += time.process_time() - cpu_start
    server_end = children_cpu_seconds(server_pid) if server_pid else None
    if server_start is None or server_end is None or sample.server_cpu_seconds is None:
        sample.server_cpu_seconds = None
    else:
        sample.server_cpu_seconds += max(0.0, server_end - server_start)
    sample.latencies += latencies
    sample.errors += errors
    sample.statuses |= statuses


REFERENCE = "reference page (plain Flask + SQLAlchemy + Jinja, 50 rows)"


@contextlib.contextmanager
def reference_server(tmp: Path, label: str = ""):
    """The plain 50-row app of bench/reference.py under gunicorn, 2 workers (always this tree's)."""
    env = {**os.environ, "BENCH_REFERENCE_DB": f"sqlite:///{tmp / 'reference.sqlite3'}"}
    plain = tmp / "reference.conf.py"  # gunicorn's defaults: not this tree's gunicorn.conf.py
    plain.write_text("")
    with gunicorn(None, log=tmp / f"gunicorn-reference{label}.log", app_spec="bench.reference:make_app()",
                  env=env, cwd=ROOT, config=plain) as served:
        yield served


@dataclass
class Rounds:
    """Part 1's rounds on one site: a Sample per route, in the order of the table (`/healthz`, the bare route
    when the code has it, the pages, their revisits where they gave an ETag, the reference page)."""

    samples: dict[str, Sample]
    generator_share: float  # the share of a core the generator itself used while loading `/healthz`
    bare_missing: str | None  # why the bare route was not measured (the code measured has none), else None
    etags: dict[str, str | None]  # page name -> the ETag it gave (None: none, so no revisit was measured)


def load_pages(site: Site, tmp: Path, *, rounds: int, seconds: float, concurrency: int,
               max_requests: int) -> Rounds:
    """Start gunicorn on the site and the reference app beside it, log in as the secretariat, warm every route
    up, read each page's ETag, then run `rounds` rounds of one burst per route (routes interleaved, so a noisy
    moment hits them all): `/healthz`, the bare route `/livez` (if the code has it), each page, each page again
    with If-None-Match and the ETag it gave (only 304 counts), and the reference page."""
    with contextlib.ExitStack() as stack:
        port, master = stack.enter_context(gunicorn(site, log=tmp / f"gunicorn-{site.bids}-{site.folder.name}.log"))
        cookie = login(port, site.admin_email, site.admin_password)
        # name, path, port, cookie, server pid, extra headers, the status that counts
        plan: list[tuple[str, str, int, str, int, dict[str, str] | None, int]] = []
        plan.append((*YARDSTICK, port, cookie, master, None, 200))
        status = request(port, BARE[1], cookie=cookie)[0]
        bare_missing = None if status == 200 else f"`{BARE[1]}` answered {status}"
        if bare_missing is None:
            plan.append((*BARE, port, cookie, master, None, 200))
        plan += [(name, path, port, cookie, master, None, 200) for name, path in pages(site)]
        for _, path, p, c, _, _, _ in plan:  # both workers import what the page needs (numpy for the ranking)
            _warm_up(p, path, c, what=f"GET {path}", who=" as the secretariat")
        # The same pages of a second server that keeps no copy: each request computes its page (beside the rows above,
        # which show what a visit costs while nothing changed). Logged in before the ETags are read: a login is an
        # audited change, which gives every page a new version.
        plain_port, plain_master = stack.enter_context(gunicorn(
            site, log=tmp / f"gunicorn-{site.bids}-{site.folder.name}-computed.log",
            env={**site.env(), **COMPUTED_ENV}))
        plain_cookie = login(plain_port, site.admin_email, site.admin_password)
        for name, path in pages(site):
            plan.append((computed_name(name), path, plain_port, plain_cookie, plain_master, None, 200))
            _warm_up(plain_port, path, plain_cookie, what=f"GET {path}", who=" as the secretariat (no copy kept)")
        etags: dict[str, str | None] = {}
        for name, path in pages(site):
            etags[name] = etag = etag_of(request(port, path, cookie=cookie)[1])
            if etag is not None:
                plan.append((revisit_name(name), path, port, cookie, master, {"If-None-Match": etag}, 304))
                for _ in range(4):  # not checked here: an answer other than 304 is an error of the row
                    request(port, path, cookie=cookie, extra={"If-None-Match": etag})
        ref_port, ref_master = stack.enter_context(reference_server(tmp, f"-{site.folder.name}"))
        plan.append((REFERENCE, "/rows", ref_port, "", ref_master, None, 200))
        _warm_up(ref_port, "/rows", "", what="the reference page")
        samples = _rounds_of(plan, rounds=rounds, seconds=seconds, concurrency=concurrency,
                             max_requests=max_requests)
    base = samples[YARDSTICK[0]]
    return Rounds(samples=samples, generator_share=base.cpu_seconds / base.seconds if base.seconds else 0.0,
                  bare_missing=bare_missing, etags=etags)


def _warm_up(port: int, path: str, cookie: str, *, what: str, who: str = "") -> None:
    """Four GETs of `path`, so that both workers have loaded what it needs; a RuntimeError ("<what> answered
    <status><who>") when one answers other than 200."""
    for _ in range(4):
        status = request(port, path, cookie=cookie)[0]
        if status != 200:
            raise RuntimeError(f"{what} answered {status}{who}")


def _rounds_of(plan: list[tuple[str, str, int, str, int, dict[str, str] | None, int]], *, rounds: int,
               seconds: float, concurrency: int, max_requests: int) -> dict[str, Sample]:
    """`rounds` rounds of one burst per route of the plan, in its order and reversed every other round; a Sample per
    route."""
    samples = {name: Sample(ok=ok) for name, *_, ok in plan}
    for r in range(rounds):
        order = plan if r % 2 == 0 else plan[::-1]
        for name, path, p, c, pid, extra, _ in order:
            burst(p, path, c, concurrency=concurrency, seconds=seconds, max_requests=max_requests,
                  sample=samples[name], server_pid=pid, extra=extra)
    return samples


@dataclass
class LoadResult:
    """The bounded load test: `clients` people each logging in, then reading pages back to back."""

    clients: int
    seconds: float
    requests: int
    errors: int
    login_failures: int
    statuses: dict[int, int]
    latencies: list[float]  # the pages'
    login_latencies: list[float]
    # what each error was ("POST /login: 500 Internal Server Error", "GET /ranking: no answer within 120 s") -> count
    error_kinds: dict[str, int] = field(default_factory=dict)
    # the server log's lines that say why it failed (tracebacks' last lines, worker timeouts) -> count
    server_errors: dict[str, int] = field(default_factory=dict)

    def percentile(self, p: float) -> float:
        return Sample(latencies=self.latencies).percentile(p)


def load_test(site: Site, tmp: Path, *, workers: int, clients: int, seconds: float, label: str) -> LoadResult:
    """`clients` threads start together; each logs in through the form (CSRF token included), then requests the
    bid list, the ranking, a bid and /healthz in turn until `seconds` pass. Every answer but 200 (302 for the
    login) is an error; a failed login leaves that client out, as it would leave a person logged out."""
    paths = [path for _, path in pages(site)] + ["/healthz"]
    lock = threading.Lock()
    latencies: list[float] = []
    login_latencies: list[float] = []
    statuses: dict[int, int] = {}
    errors = 0
    login_failures = 0
    error_kinds: dict[str, int] = {}
    _production_hash(site)
    log = tmp / f"gunicorn-load-{label}.log"
    with gunicorn(site, workers=workers, log=log) as (port, _):
        start = threading.Barrier(clients)
        stop_at = [0.0]

        def client(i: int) -> None:
            nonlocal errors, login_failures
            start.wait()
            if i == 0:
                stop_at[0] = time.perf_counter() + seconds
            t0 = time.perf_counter()
            try:
                cookie = login(port, site.admin_email, site.admin_password, timeout=120)
            except (RuntimeError, KeyError) as exc:  # LoginError says how; anything else by its type
                what = getattr(exc, "what", f"login: {type(exc).__name__}: {exc}"[:120])
                with lock:
                    login_failures += 1
                    errors += 1
                    error_kinds[what] = error_kinds.get(what, 0) + 1
                return
            with lock:
                login_latencies.append(time.perf_counter() - t0)
            k = i
            while time.perf_counter() < (stop_at[0] or time.perf_counter() + 1):
                path = paths[k % len(paths)]
                k += 1
                t0 = time.perf_counter()
                what = ""
                try:
                    status, _, body = request(port, path, cookie=cookie, timeout=120)
                    if status != 200:
                        what = f"GET {path}: {describe(status, body)}"
                except OSError as exc:
                    status, what = 0, f"GET {path}: {describe_failure(exc, 120)}"
                elapsed = time.perf_counter() - t0
                with lock:
                    statuses[status] = statuses.get(status, 0) + 1
                    if status == 200:
                        latencies.append(elapsed)
                    else:
                        errors += 1
                        error_kinds[what] = error_kinds.get(what, 0) + 1

        threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
        began = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=seconds + 300)
        took = time.perf_counter() - began
    return LoadResult(clients=clients, seconds=took, requests=sum(statuses.values()) + clients,
                      errors=errors, login_failures=login_failures, statuses=statuses, latencies=latencies,
                      login_latencies=login_latencies, error_kinds=error_kinds, server_errors=server_errors(log))


# A line of the server's log that says why a request failed: an exception's last line, a worker killed.
_SERVER_ERROR = re.compile(r"^(?:[\w.]+(?:Error|Exception)\b.*|.*\bWORKER TIMEOUT\b.*|.*\bdatabase is locked\b.*)$")


def server_errors(log: Path) -> dict[str, int]:
    """Each distinct failure line of a gunicorn log (timestamps and process ids removed) -> how often it appears."""
    found: dict[str, int] = {}
    for line in log.read_text(errors="replace").splitlines():
        line = re.sub(r"^\[[^\]]*\] \[\d+\] ", "", line.strip())
        if _SERVER_ERROR.match(line):
            key = re.sub(r"\(pid:\d+\)", "", line)[:160]
            found[key] = found.get(key, 0) + 1
    return found


def _production_hash(site: Site) -> None:
    """The secretariat's password hashed with the served app's own (default) argon2 settings, as a real account's
    is: each login of the load test verifies one real hash and rehashes nothing (the seeding used cheap ones)."""
    from argon2 import PasswordHasher
    from sqlalchemy import update

    from accounts.models import User
    from bench.data import make_app
    from core.db import db

    app = make_app(site)
    with app.app_context():
        db.session.execute(update(User).where(User.email == site.admin_email)
                           .values(password_hash=PasswordHasher().hash(site.admin_password)))
        db.session.commit()
        db.session.remove()
        db.engine.dispose()


def query_counts(site: Site) -> dict[str, int]:
    """The SQL statements one request of each route issues, counted in-process (Flask test client, the same
    pages as the secretariat) with a `before_cursor_execute` listener, on the second request of each: `/healthz`,
    the bare route (if the code has it), the pages, and each page's revisit (If-None-Match with the ETag it gave,
    if it gave one and answers it with 304)."""
    from sqlalchemy import event as sa_event

    from bench.data import make_app
    from core.db import db

    app = make_app(site, WTF_CSRF_ENABLED=False)
    client = app.test_client()
    resp = client.post("/login", data={"email": site.admin_email, "password": site.admin_password})
    if resp.status_code != 302:
        raise RuntimeError(f"in-process login answered {resp.status_code}")
    with app.app_context():
        engine = db.engine
    out = {}
    plan: list[tuple[str, str, dict[str, str], int]] = [(*YARDSTICK, {}, 200)]
    if client.get(BARE[1]).status_code == 200:
        plan.append((*BARE, {}, 200))
    for name, path in pages(site):
        plan.append((name, path, {}, 200))
        etag = etag_of({k.lower(): v for k, v in client.get(path).headers.items()})
        if etag is not None and client.get(path, headers={"If-None-Match": etag}).status_code == 304:
            plan.append((revisit_name(name), path, {"If-None-Match": etag}, 304))
    for name, path, headers, expected in plan:
        client.get(path, headers=headers)  # warm-up: anything cached per process is not counted
        statements: list[str] = []

        def count(conn, cursor, statement, *args, _s=statements):
            _s.append(statement)

        sa_event.listen(engine, "before_cursor_execute", count)
        try:
            status = client.get(path, headers=headers).status_code
        finally:
            sa_event.remove(engine, "before_cursor_execute", count)
        if status != expected:
            raise RuntimeError(f"in-process GET {path} answered {status}")
        out[name] = len(statements)
    app.config["PAGE_CACHE"] = False  # each page computed: what its statements are when no copy is kept
    for name, path in pages(site):
        client.get(path)
        computed: list[str] = []

        def note(conn, cursor, statement, *args, _s=computed):
            _s.append(statement)

        sa_event.listen(engine, "before_cursor_execute", note)
        try:
            status = client.get(path).status_code
        finally:
            sa_event.remove(engine, "before_cursor_execute", note)
        if status != 200:
            raise RuntimeError(f"in-process GET {path} (no copy kept) answered {status}")
        out[computed_name(name)] = len(computed)
    with app.app_context():
        db.session.remove()
        db.engine.dispose()
    return out
