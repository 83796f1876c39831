"""Issue 14: every kind of page, as every role that sees it, at a desktop's and a phone's width, passes axe-core
with no critical, serious or moderate violation, and never makes the document wider than a 390 px phone.

One live Gambit serves the whole module from one database filled once by the demo seed (`flask seed --demo`: a
decided 2015 call with submitted bids, scorecards, dossiers, a decision and a signed contract with payments; a
practice call open for bids with a draft). One Chromium, one page per role, logged in once and reused. Forms are
also checked in their error state: each is sent empty or with a wrong value and axe runs on the page that comes
back. axe-core is the npm package pinned in package.json (installed by `make test`, or `npm ci`). The HTML the
server sent for each of those pages must also have no error for the Nu HTML checker (vnu.jar: npm's vnu-jar, run on
Debian's Java runtime), all pages in one run of it.

The list of pages is checked against the app's URL map: a new GET page must be visited here or excluded with a
reason, so it cannot be forgotten. Screenshots and axe's results are kept in test-artifacts/e2e/axe/.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.e2e.conftest import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, live_config, serving

pytestmark = [pytest.mark.e2e, pytest.mark.no_db]

AXE_JS = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
FAILING_IMPACTS = ("critical", "serious", "moderate")
WIDTHS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
TIMEOUT_MS = 20_000
OUT = ARTIFACTS / "axe"

# The people who use Gambit, as the demo seed makes them (demo/seed.py DEMO_USERS). None: not logged in.
ROLES = {
    "visitor": None,
    "federation": "bidder@example.org",   # a bid not selected in 2015, a draft in the practice call
    "sponsor": "sponsor@example.org",     # the selected 2015 bid and its contract
    "wcoc": "wcoc@example.org",
    "board": "board@example.org",
    "president": "president@example.org",
    "secretariat": "admin@example.org",
}
REVIEWERS = ("wcoc", "board", "president", "secretariat")
BOARD = ("board", "president", "secretariat")
LOGGED_IN = tuple(r for r in ROLES if r != "visitor")
EVERYONE = tuple(ROLES)


@dataclass(frozen=True)
class Invalid:
    """An error state: in the form holding the button `submit`, type `fill` (label -> value; "" empties a
    field), then press the button. Browser validation is turned off first, as the server's is the one tested."""

    submit: str
    fill: dict[str, str] = field(default_factory=dict)
    check: tuple[str, ...] = ()  # labels of checkboxes to tick before sending


@dataclass(frozen=True)
class Visit:
    kind: str             # a name for the kind of page, used in messages and screenshot names
    endpoint: str         # the Flask endpoint it exercises (checked against app.url_map)
    path: str             # with {placeholders} filled from the seeded data (Site.facts)
    roles: tuple[str, ...]
    status: int = 200
    invalid: Invalid | None = None


VISITS: list[Visit] = [
    Visit("home", "core.home", "/", EVERYONE),
    Visit("calls", "events.index", "/events/", EVERYONE),
    Visit("call (decided)", "events.public", "/events/{slug}", EVERYONE),
    Visit("call (open)", "events.public", "/events/{practice}", EVERYONE),
    Visit("not found", "events.public", "/events/no-such-call", ("visitor", "federation"), status=404),
    Visit("login", "accounts.login", "/login", ("visitor",)),
    Visit("login, refused", "accounts.login", "/login", ("visitor",), status=422,
          invalid=Invalid("Log in", {"Email": "nobody@example.org", "Password": ""})),
    Visit("register", "accounts.register", "/register", ("visitor",)),
    Visit("register, refused", "accounts.register", "/register", ("visitor",), status=422,
          invalid=Invalid("Create the account")),
    Visit("email confirmation, bad link", "accounts.confirm_email", "/register/confirm/not-a-token", ("visitor",),
          status=400),
    Visit("forgotten password", "accounts.forgot_password", "/password/forgot", ("visitor",)),
    Visit("new password, bad link", "accounts.reset_password", "/password/reset/not-a-token", ("visitor",),
          status=400),
    Visit("account", "accounts.account", "/account", LOGGED_IN),
    Visit("account, password refused", "accounts.account", "/account", ("federation",), status=422,
          invalid=Invalid("Change the password")),
    Visit("set up an authenticator app", "accounts.enrol_totp", "/account/two-factor", ("federation", "secretariat")),
    Visit("set up an authenticator app, wrong code", "accounts.enrol_totp", "/account/two-factor", ("federation",),
          status=422, invalid=Invalid("Set up the app", {"Code from the app": "12345"})),
    Visit("users", "accounts.users", "/admin/users", ("secretariat",)),
    Visit("new user", "accounts.new_user", "/admin/users/new", ("secretariat",)),
    Visit("new user, refused", "accounts.new_user", "/admin/users/new", ("secretariat",), status=422,
          invalid=Invalid("Save")),
    Visit("edit user", "accounts.edit_user", "/admin/users/{federation_user}", ("secretariat",)),
    Visit("edit user, bidder and reviewer refused", "accounts.edit_user", "/admin/users/{federation_user}",
          ("secretariat",), status=422, invalid=Invalid("Save", check=("WCOC member",))),
    Visit("bids", "bids.index", "/bids/", LOGGED_IN),
    Visit("bid (submitted)", "bids.view", "/bids/{federation_bid}", ("federation", "secretariat")),
    Visit("bid (selected)", "bids.view", "/bids/{sponsor_bid}", ("sponsor",)),
    Visit("bid (draft)", "bids.view", "/bids/{federation_draft}", ("federation", "secretariat")),
    Visit("bid version", "bids.version", "/bids/{federation_bid}/versions/1", ("federation", "secretariat")),
    *[Visit(f"bid section {s}", "bids.edit", f"/bids/{{federation_draft}}/edit/{s}", ("federation",))
      for s in ("applicant", "dates_venue", "money", "commitments", "hotel", "inspection", "guarantee",
                "signature", "evaluation")],
    Visit("bid section, on behalf", "bids.edit", "/bids/{federation_draft}/edit/money", ("secretariat",)),
    Visit("bid section, refused", "bids.edit", "/bids/{federation_draft}/edit/money", ("federation",), status=422,
          invalid=Invalid("Save", {"Prize fund": "two hundred thousand"})),
    Visit("paper bid", "bids.paper", "/admin/events/{practice}/paper-bid", ("secretariat",)),
    Visit("scoring", "scoring.index", "/scoring/", REVIEWERS),
    Visit("scoring admin", "scoring.admin_index", "/admin/scoring", REVIEWERS),
    Visit("conflicts", "scoring.conflicts", "/events/{slug}/scoring/conflicts", ("wcoc",)),
    Visit("my scorecards", "scoring.my_scorecards", "/events/{slug}/scoring/", ("wcoc",)),
    Visit("scorecard", "scoring.scorecard", "/events/{slug}/scoring/bids/{scored_bid}", ("wcoc",)),
    Visit("ranking", "scoring.ranking", "/events/{slug}/scoring/ranking", REVIEWERS),
    Visit("ranking (not yet)", "scoring.ranking", "/events/{practice}/scoring/ranking", ("secretariat",)),
    Visit("weights", "scoring.weights", "/events/{practice}/scoring/weights", ("secretariat",)),
    Visit("weights, refused", "scoring.weights", "/events/{practice}/scoring/weights", ("secretariat",), status=422,
          invalid=Invalid("Record new weights", {"__first_number__": "-1"})),
    Visit("admission", "scoring.admission", "/events/{slug}/scoring/admission", ("secretariat",)),
    Visit("board", "board.index", "/board/", BOARD),
    Visit("board call", "board.call", "/board/{slug}", BOARD),
    Visit("decision", "board.decision", "/board/{slug}/decision", BOARD + ("wcoc",)),
    Visit("contracts", "contracts.index", "/contracts/", ("secretariat",)),
    Visit("my contracts", "contracts.mine", "/my/contracts", ("sponsor", "federation")),
    Visit("contract", "contracts.view", "/contracts/{contract}", ("sponsor", "secretariat")),
    Visit("contract preview", "contracts.preview", "/contracts/{contract}/preview", ("sponsor", "secretariat")),
    Visit("milestone", "contracts.milestone", "/contracts/{contract}/milestones/{milestone}",
          ("sponsor", "secretariat")),
    Visit("milestone, payment refused", "contracts.milestone", "/contracts/{contract}/milestones/{open_milestone}",
          ("secretariat",), status=422, invalid=Invalid("Record the payment")),
    Visit("contract correction", "contracts.correct", "/contracts/{contract}/correct", ("secretariat",)),
    Visit("contract correction, refused", "contracts.correct", "/contracts/{contract}/correct", ("secretariat",),
          status=422, invalid=Invalid("Prepare the correction")),
    Visit("match result", "contracts.result", "/contracts/{contract}/result", ("secretariat",)),
    Visit("match result, refused", "contracts.result", "/contracts/{contract}/result", ("secretariat",),
          status=422, invalid=Invalid("Record the result")),
    Visit("new contract, refused", "contracts.new", "/bids/{federation_bid}/contract/new", ("secretariat",),
          status=409),
    Visit("articles applied", "events.articles", "/events/{slug}/articles", ("visitor", "secretariat")),
    Visit("verify a PDF", "signatures.verify", "/verify", EVERYONE),
    Visit("verify a PDF, refused", "signatures.verify", "/verify", ("visitor",), status=422,
          invalid=Invalid("Verify")),
    Visit("outbox", "outbox.index", "/admin/outbox/", ("secretariat",)),
    Visit("outbox, one message", "outbox.view", "/admin/outbox/{message}", ("secretariat",)),
    Visit("trust list", "signatures.trust_list", "/admin/trust", ("secretariat",)),
    Visit("audit log", "audit.index", "/admin/audit/", ("secretariat",)),
    Visit("audit log, sign-ins shown, second page", "audit.index", "/admin/audit/?signins=show&page=2&sort=actor",
          ("secretariat",)),
    Visit("audit log, refused filters", "audit.index", "/admin/audit/?action=%25%25&from=2015-02-30&sort=action",
          ("secretariat",), status=400),
    Visit("trust list, refused", "signatures.trust_list", "/admin/trust", ("secretariat",), status=422,
          invalid=Invalid("Add to the trust list")),
]

# GET rules of the app that are not HTML pages a person reads, each with the reason it is not visited.
EXCLUDED: dict[str, str] = {
    "static": "static files",
    "core.favicon": "the site's icon",
    "core.livez": "a plain-text liveness probe (no session, no database)",
    "core.healthz": "a JSON health check for the load balancer",
    "core.readyz": "a JSON readiness check for the load balancer or the orchestrator",
    "bids.document": "an uploaded PDF, sent as a download",
    "board.dossier": "a PDF",
    "board.pack": "a PDF",
    "board.stored": "a PDF",
    "board.minutes": "a PDF",
    "contracts.pdf": "a PDF",
    "contracts.signed_pdf": "a PDF",
    "contracts.calendar": "an iCalendar feed",
    "contracts.export_milestones": "a CSV download",
    "contracts.export_payments": "a CSV download",
    "scoring.export_csv": "a CSV download",
    "events.regulations_text": "the regulations' text, served as plain text",
    "signatures.certificate": "Gambit's signing certificate, a PEM download",
    "contracts.for_bid": "no page of its own: a redirect to the bid's contract page (visited), to its new-contract "
                         "page (visited only in its 409 refusal state so far) or, for the selected bidder, to "
                         "My contracts (visited); anyone else gets 404",
    # NOT YET CHECKED (issue 14 audit): a GET of an issued contract redirects to the contract page, but a draft's
    # GET is the issue form, and the demo seed has no draft contract, so that form is never reached by axe.
    "contracts.issue": "not reached yet: the demo has no draft contract, whose GET is the issue form (a GET of an "
                       "issued contract only redirects to the contract page, which is visited)",
}
# Pages of a sign-in half made (the password checked, the second step to come), which the walk's signed-in people
# never see: tests/e2e/test_second_factor.py opens both at a phone's width and runs axe on them.
EXCLUDED.update({
    "accounts.second_factor": "the second step of a sign-in: axe-checked at 390 px by tests/e2e/test_second_factor.py",
    "accounts.second_factor_setup": "the forced enrolment of a sign-in: axe-checked at 390 px by "
                                    "tests/e2e/test_second_factor.py",
})
EXCLUDED_PREFIXES = {"api.": "the JSON API"}


def _excluded(endpoint: str) -> bool:
    return endpoint in EXCLUDED or any(endpoint.startswith(p) for p in EXCLUDED_PREFIXES)


def test_every_get_page_is_visited_or_excluded_with_a_reason(tmp_path):
    """A new GET page must be added to VISITS (or to EXCLUDED, with the reason it is no page a person reads)."""
    from app import create_app

    app = create_app(live_config(tmp_path))
    get_endpoints = {rule.endpoint for rule in app.url_map.iter_rules() if "GET" in (rule.methods or ())}
    visited = {v.endpoint for v in VISITS}
    forgotten = sorted(e for e in get_endpoints if e not in visited and not _excluded(e))
    assert not forgotten, f"GET pages neither visited by the accessibility test nor excluded: {forgotten}"
    stale = sorted((visited | set(EXCLUDED)) - get_endpoints)
    assert not stale, f"listed in the accessibility test but not routes of the app: {stale}"
    assert not visited & set(EXCLUDED), "a page cannot be both visited and excluded"
    for role in ROLES:
        assert any(role in v.roles for v in VISITS), f"no page is visited as {role}"


# ----------------------------------------------------------------------------------------------------------------
# the site: one server, one seeded database, one browser, one page per role


@dataclass
class Site:
    url: str
    facts: dict[str, object]
    browser: object = None
    pages: dict[str, object] = field(default_factory=dict)
    # (role, kind of page) -> (URL, the HTML the server sent), kept by the axe walk for the HTML checker's test
    sent: dict[tuple[str, str], tuple[str, bytes]] = field(default_factory=dict)

    def login(self, page, role: str) -> None:
        """Log `page` in as `role`'s demo account, through the login form."""
        from demo.users import DEMO_PASSWORD

        page.goto("/login")
        page.get_by_label("Email").fill(ROLES[role])
        page.get_by_label("Password").fill(DEMO_PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(re.compile(r"/$"))


def _facts(app) -> dict[str, object]:
    """The ids the page paths need, looked up in the seeded database."""
    from sqlalchemy import select

    from accounts.services import find_user_by_email
    from bids.models import Bid
    from board.queries import current_decision
    from contracts.models import Contract
    from core.db import db
    from events.services import get_event
    from operations.outbox import OutboxMessage
    from scoring.models import Scorecard

    with app.app_context():
        event, practice = get_event("fwwcm-2015"), get_event("fwwcm-practice")
        federation = find_user_by_email(ROLES["federation"])
        wcoc = find_user_by_email(ROLES["wcoc"])

        def bid_of(user, ev):
            return db.session.scalars(select(Bid).where(Bid.owner_id == user.id, Bid.event_id == ev.id)).one()

        selected = current_decision(event).selected_bid
        contract = db.session.scalars(select(Contract).where(Contract.bid_id == selected.id)).one()
        scored = db.session.scalars(select(Scorecard).where(Scorecard.member_id == wcoc.id)).first()
        facts = {
            "slug": event.slug, "practice": practice.slug, "federation_user": federation.id,
            "federation_bid": bid_of(federation, event).id, "federation_draft": bid_of(federation, practice).id,
            "sponsor_bid": selected.id, "contract": contract.id,
            "milestone": next(m.id for m in contract.milestones if m.payments),
            # the demo pays the milestone above in full, and a fully paid one offers no payment form (issue 36)
            "open_milestone": next(m.id for m in contract.milestones if not m.payments and not m.is_cap),
            "scored_bid": scored.bid_id,
            "message": db.session.scalars(select(OutboxMessage.id).order_by(OutboxMessage.id)).first(),
        }
        db.session.remove()
    return facts


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Gambit with the demo data, served for the whole module; Chromium with one logged-in page per role."""
    from playwright.sync_api import sync_playwright

    from core.db import db, utcnow
    from demo.seed import seed_demo, seed_events

    assert AXE_JS.is_file(), f"axe-core is missing ({AXE_JS}): run `make node-deps` (npm ci)"
    OUT.mkdir(parents=True, exist_ok=True)
    folder = tmp_path_factory.mktemp("axe")
    # A walk of the pages that sends no mail: its messages wait in the outbox, no delivery thread outlives a test.
    # Pages of 3 rows, so that the demo's lists (bids, ranking, contracts' entries, outbox) show their pagers.
    with serving(live_config(folder, OUTBOX_DISPATCH="manual", PAGE_SIZE=3)) as live:
        with live.app.app_context():
            now = utcnow()
            seed_events(now=now)
            seed_demo(now=now)
            db.session.commit()
            db.session.remove()
        site = Site(url=live.url, facts=_facts(live.app))
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            site.browser = browser
            try:
                for role, email in ROLES.items():
                    # axe is injected as an inline script, which the app's Content-Security-Policy rightly refuses.
                    context = browser.new_context(base_url=live.url, viewport=WIDTHS["desktop"], bypass_csp=True)
                    context.set_default_timeout(TIMEOUT_MS)
                    context.add_init_script(path=str(AXE_JS))
                    page = context.new_page()
                    page.on("dialog", lambda d: d.dismiss())
                    if email:
                        site.login(page, role)
                    site.pages[role] = page
                yield site
            finally:
                browser.close()


# ----------------------------------------------------------------------------------------------------------------
# axe


def run_axe(page) -> list[dict]:
    """axe-core's violations on the page as it is now (axe is injected if the page does not have it yet)."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE_JS))  # the site's pages have it from their init script
    result = page.evaluate("""async () => {
        const r = await axe.run(document, {resultTypes: ['violations']});
        return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
            targets: v.nodes.map(n => n.target.join(' '))}));
    }""")
    return result


def document_overflow(page) -> tuple[int, list[str]]:
    """How many CSS pixels the document is wider than the viewport (0: no horizontal scroll), and the innermost
    elements that stick out to the right (to say what to fix)."""
    return page.evaluate("""() => {
        const width = document.documentElement.clientWidth;
        const over = document.documentElement.scrollWidth - width;
        if (over <= 0) return [0, []];
        const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '')
            + (typeof el.className === 'string' && el.className.trim()
               ? '.' + el.className.trim().split(/\\s+/).join('.') : '');
        const sticksOut = (el) => el.getBoundingClientRect().right > width + 1;
        const scrolled = (el) => {  // inside a box of its own that scrolls or clips: it does not widen the page
            if (['absolute', 'fixed'].includes(getComputedStyle(el).position)) return false;  // may escape it
            for (let e = el.parentElement; e && e !== document.body; e = e.parentElement) {
                if (getComputedStyle(e).overflowX !== 'visible') return true;
            }
            return false;
        };
        const wide = [...document.body.querySelectorAll('*')].filter((el) => !scrolled(el) && (
            (sticksOut(el) && ![...el.children].some(sticksOut))  // an element too wide for the page
            || (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX === 'visible'
                && ![...el.children].some((c) => c.scrollWidth > el.clientWidth))));  // text that does not wrap
        return [over, wide.slice(0, 4).map((el) => {
            const path = [];
            for (let e = el; e && e !== document.body && path.length < 4; e = e.parentElement) path.unshift(name(e));
            return path.join(' > ');
        })];
    }""")


def make_invalid(page, invalid: Invalid):
    """Fill the form of `invalid.submit` as told, switch off browser validation, and send it; returns the response
    to the form."""
    form = page.locator("form", has=page.get_by_role("button", name=invalid.submit, exact=True)).first
    form.evaluate("f => { f.noValidate = true; }")
    for label, value in invalid.fill.items():
        if label == "__first_number__":
            form.locator("input[type=number], input[inputmode=decimal]").first.fill(value)
        else:
            form.get_by_label(label, exact=False).first.fill(value)
    for label in invalid.check:
        form.get_by_label(label, exact=True).check()
    # A form that asks first (data-confirm: the match result) is answered yes, as the person sending it would (the
    # walk's pages dismiss every dialog); the next page has its own window.confirm again.
    page.evaluate("() => { window.confirm = () => true; }")
    with page.expect_navigation() as navigation:
        form.get_by_role("button", name=invalid.submit, exact=True).click()
    return navigation.value


def open_visit(page, visit: Visit, facts: dict[str, object]):
    """Open `visit`'s page in `page` and, for an error state, send its form; returns the URL visited and the
    response (Playwright's) whose document the page now shows."""
    url = visit.path.format(**facts)
    response = page.goto(url)
    if visit.invalid is not None:
        response = make_invalid(page, visit.invalid)
    return url, response


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def check_pages(site: Site, role: str) -> list[str]:
    """Visit every page of `role` (sending the forms of error states), and check each at a desktop's width and
    then, without reloading, at a phone's; returns the problems found (empty: all clean)."""
    page = site.pages[role]
    problems: list[str] = []
    record = []
    for visit in VISITS:
        if role not in visit.roles:
            continue
        page.set_viewport_size(WIDTHS["desktop"])
        started = time.perf_counter()
        url, response = open_visit(page, visit, site.facts)
        site.sent[(role, visit.kind)] = (url, response.body())
        if visit.invalid is not None and not page.locator("[aria-invalid=true], .error-summary").count():
            problems.append(f"{visit.kind} ({url}): the form came back without an error to show")
        status = page.evaluate("performance.getEntriesByType('navigation')[0].responseStatus") \
            if visit.invalid is not None else response.status
        if status != visit.status:
            problems.append(f"{visit.kind} ({url}): status {status}, expected {visit.status}")
        seconds = {"load": round(time.perf_counter() - started, 3)}
        for width, viewport in WIDTHS.items():
            started = time.perf_counter()
            if width != "desktop":
                page.set_viewport_size(viewport)
                # the page's resize handlers run before the next frames, as they would for a person turning a tablet
                page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
            violations = run_axe(page)
            for v in violations:
                if v["impact"] in FAILING_IMPACTS:
                    problems.append(f"{visit.kind} at {width} width ({page.url}): {v['impact']} {v['id']} "
                                    f"({v['help']}) at " + "; ".join(v["targets"][:5])
                                    + (" …" if len(v["targets"]) > 5 else ""))
            if width == "phone":
                over, culprits = document_overflow(page)
                if over > 0:
                    problems.append(f"{visit.kind} ({page.url}): the document is {over}px wider than the phone, "
                                    f"widened by {'; '.join(culprits) or 'something not found'}")
            page.screenshot(path=str(OUT / f"{width}-{role}-{_slug(visit.kind)}.png"), full_page=width == "phone")
            seconds[width] = round(time.perf_counter() - started, 3)
            record.append({"kind": visit.kind, "url": url, "width": width, "violations": violations})
        record[-1]["seconds"] = seconds
    (OUT / f"results-{role}.json").write_text(json.dumps(record, indent=1))
    return problems


@pytest.mark.parametrize("role", list(ROLES))
def test_pages_pass_axe_and_fit_the_phone(site, role):
    problems = check_pages(site, role)
    assert not problems, f"{len(problems)} problem(s) as {role}:\n" + "\n".join(problems)


# ----------------------------------------------------------------------------------------------------------------
# keyboard, focus ring, phone layout


def _rgb(css: str) -> tuple[float, float, float, float]:
    parts = [float(x) for x in re.findall(r"[\d.]+", css)]
    return (*parts[:3], parts[3] if len(parts) > 3 else 1.0)


def contrast(a: str, b: str) -> float:
    """WCAG's contrast ratio of two CSS rgb() colours."""
    def luminance(css):
        channels = [c / 255 for c in _rgb(css)[:3]]
        r, g, b = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


FOCUS_RING_JS = """() => {
    const el = document.activeElement;
    const style = getComputedStyle(el);
    const rect = el.getBoundingClientRect();
    const reach = parseFloat(style.outlineOffset) + parseFloat(style.outlineWidth) / 2;
    // what lies under the ring: the element just beside the focused one, where the outline is drawn
    let x = rect.right + reach;
    if (x >= document.documentElement.clientWidth) x = rect.left - reach;
    const y = Math.min(Math.max(rect.top + rect.height / 2, 0), window.innerHeight - 1);
    const under = document.elementsFromPoint(Math.max(x, 0), y).find((e) => e !== el && !el.contains(e));
    let bg = 'rgb(255, 255, 255)';
    for (let e = under; e; e = e.parentElement) {
        const c = getComputedStyle(e).backgroundColor;
        if (c && c !== 'transparent' && !/rgba\\(.*, 0\\)$/.test(c)) { bg = c; break; }
    }
    const name = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + ' '
        + (el.textContent || '').trim().slice(0, 30);
    return {name,
            style: style.outlineStyle, width: parseFloat(style.outlineWidth), color: style.outlineColor, bg};
}"""


def tab_until(page, predicate: str, rings: list, limit: int = 80) -> None:
    """Press Tab until `predicate` (JavaScript, on document.activeElement as `el`) holds, noting each focus ring."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        rings.append(page.evaluate(FOCUS_RING_JS))
        if page.evaluate(f"(() => {{ const el = document.activeElement; return {predicate}; }})()"):
            return
    raise AssertionError(f"Tab never reached {predicate} (last: {rings[-1]['name']})")


def test_login_and_a_bid_section_are_completed_and_saved_with_the_keyboard_alone_focus_visible_at_3_to_1(site):
    """Item 15 and the keyboard: log in and save a section of the bid with Tab, typing, Enter and Space only; every
    element that takes focus on the way shows a ring of at least 2px whose contrast with what is around it is at
    least 3:1 (WCAG 2.2, 1.4.11 and 2.4.7)."""
    from demo.users import DEMO_PASSWORD

    context = site.browser.new_context(base_url=site.url, viewport=WIDTHS["desktop"])
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    rings: list[dict] = []
    try:
        page.goto("/login")
        tab_until(page, "el.id === 'email'", rings)
        page.keyboard.type(ROLES["federation"])
        tab_until(page, "el.id === 'password'", rings)
        page.keyboard.type(DEMO_PASSWORD)
        tab_until(page, "el.tagName === 'BUTTON' && el.textContent.trim() === 'Log in'", rings)
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert page.get_by_text(f"Logged in as {ROLES['federation']}.").is_visible()

        page.goto(f"/bids/{site.facts['federation_draft']}/edit/signature")
        tab_until(page, "el.id === 'signatory_name'", rings)
        page.keyboard.press("Control+A")
        page.keyboard.type("Oksana Keyboard")
        tab_until(page, "el.tagName === 'BUTTON' && el.value === 'save'", rings)
        with page.expect_navigation():
            page.keyboard.press("Space")
        assert page.get_by_text("Signature: saved.").is_visible()
        assert page.locator("#signatory_name").input_value() == "Oksana Keyboard"
    finally:
        context.close()
    weak = [f"{r['name']}: {r['style']} {r['width']}px {r['color']} on {r['bg']} "
            f"({contrast(r['color'], r['bg']):.2f}:1)"
            for r in rings if r["style"] == "none" or r["width"] < 2 or contrast(r["color"], r["bg"]) < 3]
    assert len(rings) > 5 and not weak, "focus rings that do not stand out at 3:1:\n" + "\n".join(weak)


def test_the_bid_forms_section_menu_folds_behind_a_button_on_a_phone_even_without_javascript(site):
    """Item 5: on a phone the form comes first and the sections are one button away; on a wide screen the list
    shows beside the form. <details> does it with no script at all."""
    context = site.browser.new_context(base_url=site.url, viewport=WIDTHS["phone"], java_script_enabled=False)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    try:
        site.login(page, "federation")
        page.goto(f"/bids/{site.facts['federation_draft']}/edit/money")
        menu = page.get_by_text("Sections of the bid", exact=False).first
        first_section = page.get_by_role("link", name=re.compile(r"^1\. Applicant"))
        assert menu.is_visible() and not first_section.is_visible()
        assert page.locator("#prize_fund_eur").bounding_box()["y"] < WIDTHS["phone"]["height"], \
            "the form's first field is on the phone's first screen"
        menu.focus()
        page.keyboard.press("Enter")
        assert first_section.is_visible()
        page.set_viewport_size(WIDTHS["desktop"])
        page.reload()
        assert first_section.is_visible() and not menu.is_visible()
    finally:
        context.close()


def test_a_wide_table_scrolls_in_its_own_labelled_box_on_a_phone(site):
    """Item 5: the users table is wider than a phone; it scrolls inside a region named after its heading, which
    takes keyboard focus (the arrow keys scroll it), and the page itself does not scroll sideways."""
    page = site.pages["secretariat"]
    page.set_viewport_size(WIDTHS["phone"])
    page.goto("/admin/users")
    box = page.locator(".table-box").first
    assert box.get_attribute("role") == "region" and box.get_attribute("aria-label") == "Table: Users"
    assert box.get_attribute("tabindex") == "0"
    assert box.evaluate("b => b.scrollWidth > b.clientWidth")
    assert document_overflow(page)[0] == 0
    box.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => document.querySelector('.table-box').scrollLeft > 0")
    page.set_viewport_size(WIDTHS["desktop"])


# ----------------------------------------------------------------------------------------------------------------
# the Nu HTML checker

VNU_JAR = Path(__file__).resolve().parents[2] / "node_modules" / "vnu-jar" / "build" / "dist" / "vnu.jar"
# A page the checker must find fault with, checked with the others: it proves the checker read the folder.
CANARY = ("canary.html", '<!DOCTYPE html><html lang="en"><title>canary</title><p><form></form></p></html>',
          "No “p” element in scope but a “p” end tag seen.")


def vnu_errors(folder: Path) -> list[dict]:
    """The Nu HTML checker's errors (not its warnings) in the .html files of `folder`, from one run of it (one Java
    start for all): each a message of its JSON output (url, lastLine, message, extract)."""
    import shutil
    import subprocess

    java = shutil.which("java")
    assert java, "no Java runtime for the Nu HTML checker: run `make system-deps` (default-jre-headless)"
    assert VNU_JAR.is_file(), f"the Nu HTML checker is missing ({VNU_JAR}): run `make node-deps` (npm ci)"
    run = subprocess.run([java, "-jar", str(VNU_JAR), "--errors-only", "--exit-zero-always", "--format", "json",
                          "--stdout", "--skip-non-html", str(folder)],
                         capture_output=True, text=True, timeout=600, check=True)
    return json.loads(run.stdout)["messages"]


def test_every_page_is_valid_html(site, tmp_path):
    """Every page axe checks, as every role that sees it and in each error state, is HTML in which the Nu HTML
    checker (vnu) finds no error; its warnings are no failure. What the server sent is checked, not the browser's
    DOM, whose parser repairs what it can (it closes a <p> before a <form>). The pages come from the axe walk when
    it ran before in this module, else from a walk of their own; one run of the checker reads them all."""
    pages: dict[str, str] = {}
    for role in ROLES:
        for visit in VISITS:
            if role not in visit.roles:
                continue
            if (role, visit.kind) not in site.sent:
                url, response = open_visit(site.pages[role], visit, site.facts)
                site.sent[(role, visit.kind)] = (url, response.body())
            url, html = site.sent[(role, visit.kind)]
            name = f"{role}-{_slug(visit.kind)}.html"
            assert name not in pages, f"two kinds of page named {visit.kind!r}"
            (tmp_path / name).write_bytes(html)
            pages[name] = f"{visit.kind} as {role} ({url})"
    canary, html, expected = CANARY
    (tmp_path / canary).write_text(html)
    errors = vnu_errors(tmp_path)
    found = [e for e in errors if not e.get("url", "").endswith("/" + canary)]
    assert [e["message"] for e in errors if e not in found] == [expected], "the checker did not read the pages"
    listed = [f"{pages.get(Path(e.get('url', '')).name, e.get('url'))}, line {e.get('lastLine', '?')}: "
              f"{e['message']}" + (f" [{' '.join(e['extract'].split())}]" if e.get("extract") else "") for e in found]
    assert not listed, f"{len(listed)} HTML error(s) in {len(pages)} pages:\n" + "\n".join(listed)
