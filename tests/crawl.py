"""A crawl of the whole app as its people meet it: every GET route of the app's URL map, asked by every role with
every row it can name, and every link each page shows followed (paging and sort links included), on whatever
database the app is given (tests/test_crawl.py: a fresh one after the whole flow; tests/test_upgrade.py: one built
by the last release and upgraded).

What counts as a failure:
- any 5xx, on any URL;
- a link a page shows (an `<a href>` of the site, or where a redirect leads) that does not answer 2xx or 3xx:
  what a person is offered must open;
- a GET route whose arguments this file does not know how to fill: a new route is crawled by construction, or the
  test fails and says which.

Each URL built from the URL map is also asked with ids no row has, which must answer 404 or refuse the person
(never 5xx, never 200).
"""

from __future__ import annotations

import re
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from html import unescape
from urllib.parse import parse_qsl, urlencode, urlsplit

from sqlalchemy import select

# The demo's people (demo/users.py): every role Gambit knows, including a recused WCOC member and one who declared a
# conflict, a sponsor, and the President.
ROLES: dict[str, str | None] = {
    "anonymous": None,
    "bidder (UKR)": "bidder@example.org",
    "bidder (GEO)": "georgia@example.org",
    "sponsor": "sponsor@example.org",
    "bidder (ESP)": "spain@example.org",
    "WCOC": "wcoc@example.org",
    "WCOC recused": "wcoc2@example.org",
    "WCOC with a conflict": "wcoc3@example.org",
    "Board": "board@example.org",
    "President": "president@example.org",
    "secretariat": "admin@example.org",
}
PASSWORD = "gambit-demo-2015"

# Never followed: it ends the crawler's session.
SKIP_PATHS = ("/logout",)
# How many URLs of one shape (path and the names of its query's keys) are followed from links: enough for paging
# and each sort of a list, not every page of every sort.
PER_SHAPE = 6
NO_ROW = 987654321
# What a URL naming no row may answer: not found, or a refusal of the person before any row is read (a sign-in
# asked for, or a page their role never opens).
NOT_THERE = (302, 401, 403, 404)


def _rows(query, *columns: str) -> Callable[[], list[dict]]:
    def read() -> list[dict]:
        from core.db import db

        return [dict(zip(columns, row, strict=True)) for row in db.session.execute(query()).all()]
    return read


def argument_values() -> dict[frozenset[str], Callable[[], list[dict]]]:
    """For each set of arguments a GET route takes, the values every row of the database gives them."""
    from accounts.models import User
    from bids.models import Bid, BidDocument, BidVersion
    from bids.sections import SECTIONS
    from board.models import Decision, Dossier
    from contracts.models import Contract, Milestone
    from events.models import Event
    from operations.outbox import OutboxMessage

    def sections() -> list[dict]:
        from core.db import db

        return [{"bid_id": b, "section": s} for b in db.session.scalars(select(Bid.id)) for s in SECTIONS]

    def static() -> list[dict]:
        return [{"filename": name} for name in ("css/gambit.css", "no-such-file.css")]

    return {
        frozenset(): lambda: [{}],
        frozenset({"bid_id"}): _rows(lambda: select(Bid.id), "bid_id"),
        frozenset({"bid_id", "doc_id"}): _rows(lambda: select(BidDocument.bid_id, BidDocument.id), "bid_id", "doc_id"),
        frozenset({"bid_id", "number"}): _rows(lambda: select(BidVersion.bid_id, BidVersion.number), "bid_id",
                                               "number"),
        frozenset({"bid_id", "section"}): sections,
        frozenset({"slug"}): _rows(lambda: select(Event.slug), "slug"),
        frozenset({"slug", "bid_id"}): _rows(lambda: select(Event.slug, Bid.id).join(Bid, Bid.event_id == Event.id),
                                             "slug", "bid_id"),
        frozenset({"slug", "decision_id"}): _rows(
            lambda: select(Event.slug, Decision.id).join(Decision, Decision.event_id == Event.id), "slug",
            "decision_id"),
        frozenset({"slug", "dossier_id"}): _rows(
            lambda: select(Event.slug, Dossier.id).join(Dossier, Dossier.event_id == Event.id), "slug", "dossier_id"),
        frozenset({"contract_id"}): _rows(lambda: select(Contract.id), "contract_id"),
        frozenset({"contract_id", "milestone_id"}): _rows(lambda: select(Milestone.contract_id, Milestone.id),
                                                          "contract_id", "milestone_id"),
        frozenset({"message_id"}): _rows(lambda: select(OutboxMessage.id), "message_id"),
        frozenset({"user_id"}): _rows(lambda: select(User.id), "user_id"),
        # A link from a mail Gambit sent, as a person may open it again: a token that is not (or no longer) valid.
        frozenset({"token"}): lambda: [{"token": "not-a-valid-token"}],
        frozenset({"filename"}): static,
    }


@dataclass
class Seeds:
    """The URLs built from the URL map: every GET route with every row's values, and each with ids no row has."""

    urls: list[tuple[str, str]] = field(default_factory=list)      # (endpoint, url)
    missing: list[tuple[str, str]] = field(default_factory=list)   # (endpoint, url) that must answer 404
    unknown: list[str] = field(default_factory=list)               # routes whose arguments are not known


def seeds(app) -> Seeds:
    """Every GET route of `app.url_map`, filled with every row's values (in an application context)."""
    from flask import url_for

    values = argument_values()
    out = Seeds()
    with app.test_request_context():
        for rule in sorted(app.url_map.iter_rules(), key=lambda r: r.rule):
            if "GET" not in (rule.methods or ()):
                continue
            known = values.get(frozenset(rule.arguments))
            if known is None:
                out.unknown.append(f"{rule.rule} ({rule.endpoint}: {', '.join(sorted(rule.arguments))})")
                continue
            rows = known()
            for row in rows:
                out.urls.append((rule.endpoint, url_for(rule.endpoint, **row)))
            ints = [a for a in rule.arguments if _is_int(rule, a)]
            if ints and rows:
                nowhere = {**rows[0], **dict.fromkeys(ints, NO_ROW)}
                out.missing.append((rule.endpoint, url_for(rule.endpoint, **nowhere)))
    return out


def _is_int(rule, argument: str) -> bool:
    return type(rule._converters[argument]).__name__ in ("IdConverter", "IntegerConverter")


_HREF = re.compile(r'<a\b[^>]*?\bhref="([^"]*)"', re.IGNORECASE)


def links(page: str) -> list[str]:
    """The site's own links a page shows (path and query, fragment dropped)."""
    out = []
    for href in _HREF.findall(page):
        href = unescape(href)
        parts = urlsplit(href)
        if parts.scheme and parts.scheme not in ("http", "https"):
            continue  # mailto:, tel:
        if parts.netloc and parts.netloc not in ("gambit.test", "localhost", "127.0.0.1"):
            continue
        if not parts.path and not parts.query:
            continue  # "#fragment" on the same page
        if not parts.path.startswith("/"):
            continue
        out.append(parts.path + (f"?{parts.query}" if parts.query else ""))
    return out


def shape(url: str) -> tuple[str, tuple[str, ...]]:
    parts = urlsplit(url)
    return parts.path, tuple(sorted({k for k, _ in parse_qsl(parts.query, keep_blank_values=True)}))


def normal(url: str) -> str:
    parts = urlsplit(url)
    query = urlencode(sorted(parse_qsl(parts.query, keep_blank_values=True)))
    return parts.path + (f"?{query}" if query else "")


@dataclass
class Report:
    """What the crawl found: each failure in words, how many URLs each role asked, the endpoints asked."""

    failures: list[str] = field(default_factory=list)
    asked: Counter = field(default_factory=Counter)
    statuses: Counter = field(default_factory=Counter)
    endpoints: set[str] = field(default_factory=set)

    def summary(self) -> str:
        return (f"{sum(self.asked.values())} requests ({', '.join(f'{k}: {v}' for k, v in self.asked.items())}); "
                f"statuses {dict(sorted(self.statuses.items()))}")


def login(client, email: str) -> None:
    response = client.post("/login", data={"email": email, "password": PASSWORD})
    assert response.status_code == 302, f"{email} cannot sign in: {response.status_code}"


def crawl(app, roles: Iterable[str] = ROLES, *, per_shape: int = PER_SHAPE) -> Report:
    """Crawl `app` as each of `roles`; returns the Report. The app must hold the demo's people (ROLES)."""
    with app.app_context():
        seeded = seeds(app)
    report = Report()
    report.failures += [f"a GET route the crawl cannot fill: {u}" for u in seeded.unknown]
    adapter = app.url_map.bind("gambit.test")
    for role in roles:
        client = app.test_client()
        email = ROLES[role]
        if email:
            login(client, email)
        _crawl_as(app, adapter, client, role, seeded, report, per_shape)
    return report


def _endpoint(adapter, url: str) -> str | None:
    try:
        endpoint, _ = adapter.match(urlsplit(url).path, method="GET")
    except Exception:
        return None
    return endpoint


def _crawl_as(app, adapter, client, role: str, seeded: Seeds, report: Report, per_shape: int) -> None:
    seen: set[str] = set()
    shapes: Counter = Counter()
    # (url, what it is: "route" from the URL map, "link" shown on `source`, "missing" must be 404, source)
    queue: deque[tuple[str, str, str]] = deque()
    for _, url in seeded.urls:
        queue.append((url, "route", ""))
    for _, url in seeded.missing:
        queue.append((url, "missing", ""))
    while queue:
        url, kind, source = queue.popleft()
        key = normal(url)
        if key in seen or urlsplit(url).path in SKIP_PATHS:
            continue
        if kind == "link":
            if shapes[shape(url)] >= per_shape:
                continue
            shapes[shape(url)] += 1
        seen.add(key)
        response = client.get(url)
        # Read whole and closed at once: a file sent from disk (a PDF, the static files) is otherwise left open.
        body = response.get_data(as_text=response.mimetype == "text/html")
        response.close()
        report.asked[role] += 1
        report.statuses[response.status_code] += 1
        endpoint = _endpoint(adapter, url)
        if endpoint:
            report.endpoints.add(endpoint)
        where = f"{role}: GET {url}" + (f" (a link on {source})" if source else "")
        problem = _problem(kind, response.status_code)
        if problem:
            report.failures.append(f"{where} {problem}")
            continue
        queue.extend(_followed(response, body, url, seen))


def _problem(kind: str, status: int) -> str | None:
    """What is wrong with the answer to a URL of this kind (see _crawl_as's queue), after its "where"; or None."""
    if status >= 500:
        return f"answered {status}"
    if kind == "missing" and status not in NOT_THERE:
        return f"(no such row) answered {status}, not 404 (or a refusal)"
    if kind == "link" and status >= 400:
        return f"answered {status}: a link shown that does not open"
    return None


def _followed(response, body, url: str, seen: set[str]) -> list[tuple[str, str, str]]:
    """The links to visit next from the answer to `url`: where a redirect within the site leads, or the links of
    an HTML page not seen yet."""
    if 300 <= response.status_code < 400 and response.location:
        target = urlsplit(response.location)
        if not target.netloc or target.netloc == "gambit.test":
            return [(target.path + (f"?{target.query}" if target.query else ""), "link", url)]
        return []
    if response.mimetype == "text/html" and response.status_code == 200:
        return [(link, "link", url) for link in links(body) if normal(link) not in seen]
    return []
