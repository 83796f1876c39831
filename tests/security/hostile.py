"""Hostile input (issue 8): the bad values, a small parser of the forms a page shows, and the checks run on every
response to a form posted with one bad value.

A form is read the way a browser reads it (html.parser), so the test posts what a person could post: the form's
current values, blanks filled with a plausible value, one field replaced by a bad value. The re-rendered form
is parsed again and each field's value compared with what was typed, so a value dropped, changed or printed
unescaped (which breaks the markup) is found.
"""

from __future__ import annotations

import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import pyotp
from sqlalchemy import select
from werkzeug.exceptions import HTTPException

from core.db import db, utcnow
from tests.conftest import login
from tests.contracts.factories_contracts import ContractFactory
from tests.scoring.factories_scoring import ScoringFactory

ADMIN_EMAIL = "hostile-admin@example.org"
OWNER_EMAIL = "hostile-owner@example.org"

SCRIPT = "<script>alert(1)</script>"
MEGABYTE = "x" * 1_000_000

BAD_VALUES: list[tuple[str, str]] = [
    ("letters", "abc"),
    ("overflow", "1e309"),
    ("nan", "NaN"),
    ("negative", "-5"),
    ("power", "10^15"),
    # Digits only, so they reach the <int:...> routes: past PostgreSQL's integer, past a 64-bit integer.
    ("int32-overflow", str(2**31)),
    ("int64-overflow", str(2**63)),
    ("comma-thousands", "200,000"),
    ("space-thousands", "200 000"),
    ("script", SCRIPT),
    ("sql", "' OR 1=1 --"),
    ("megabyte", MEGABYTE),
    ("impossible-date", "2015-02-30"),
    ("nul", "\x00"),
    ("long-unicode", "Ωμέγα 漢字 ♛ émigré 🏆 " * 400),
    ("empty", ""),
    ("whitespace", "   \t  "),
    # Issue 12: what Decimal and float read but no figure means, digits past Python's int limit, text that
    # shows other than it is (bidi override), and line breaks and controls meant for an email header or a CSV.
    ("snan", "sNaN"),
    ("infinity", "Infinity"),
    ("huge-exponent", "1e308"),
    ("5000-digits", "9" * 5000),
    ("bidi", "invoice\u202efdp.exe"),
    ("line-break", "a@example.org\r\nBcc: x@example.org"),
    ("control", "bell\x07 escape\x1b[31m"),
]

# Values too long to expect back in the page (the request is refused whole: 413).
NOT_ECHOED = {"megabyte"}

TEXT_TYPES = {"text", "email", "number", "date", "password", "search", "tel", "url"}

FILLERS = {
    "email": "filler.person@example.org",
    "number": "3",
    "date": "2015-10-12",
    "password": "a filler password of some length",
}


PRESIDENT_EMAIL = "hostile-president@example.org"
# A bidder with an authenticator app, signed in with it; another left half signed in (password checked, code not
# yet); a WCOC member made to enrol at sign-in (World.setup_page makes the role require a second factor).
TOTP_EMAIL = "hostile-totp@example.org"
PENDING_EMAIL = "hostile-pending@example.org"
SETUP_EMAIL = "hostile-setup@example.org"


class World:
    """Builds the rows a target needs; every helper commits (the test's outer transaction is rolled back)."""

    def __init__(self, app, make, event, practice):
        self.app, self.make, self.event, self.practice = app, make, event, practice
        self.sf = ScoringFactory(app, make)
        self.cf = ContractFactory(app, make)
        self.secrets: dict[str, str] = {}
        self.monkeypatch = None  # the test's, when a target changes a setting (test_hostile_input's world fixture)
        self.admin_id = make.user(roles=("admin", "board", "wcoc"), email=ADMIN_EMAIL,
                                  name="Hostile Admin")

    def client(self, email: str | None = ADMIN_EMAIL):
        client = self.app.test_client()
        if email:
            assert login(client, email).status_code == 302
        if email == TOTP_EMAIL:
            code = pyotp.TOTP(self.secrets[email]).at(utcnow() + timedelta(seconds=30))
            assert client.post("/login/second-factor", data={"code": code}).status_code == 302
        return client

    # ---- the second factor

    def with_totp(self, email: str) -> None:
        """An account with an authenticator app set up (its secret kept here to compute codes)."""
        from accounts import two_factor
        from accounts.models import User

        self.make.user(roles=("bidder",), email=email, name="Hostile Totp")
        secret = pyotp.random_base32()
        with self.app.app_context():
            user = db.session.scalars(select(User).where(User.email == email)).one()
            two_factor.enrol_totp(user, secret=secret, code=pyotp.TOTP(secret).now(),
                                  policy=two_factor.policy_from(self.app.config), actor=user, now=utcnow())
            db.session.commit()
        self.secrets[email] = secret

    def account_with_totp(self) -> str:
        self.with_totp(TOTP_EMAIL)
        return "/account"

    def second_step_page(self) -> str:
        self.with_totp(PENDING_EMAIL)
        return "/login/second-factor"

    def setup_page(self) -> str:
        """The forced enrolment of a role that requires a second factor (the setting changed for this test)."""
        self.monkeypatch.setitem(self.app.config, "TWO_FACTOR_REQUIRED_ROLES", "wcoc")
        self.make.user(roles=("wcoc",), email=SETUP_EMAIL, name="Hostile Setup")
        return "/login/second-factor/setup"

    # ---- accounts

    def password_reset_page(self) -> str:
        """The page an emailed link to set the admin's password leads to (with no field filled in, every post
        of one bad value is refused, so the link stays good for the next)."""
        from accounts.models import User
        from accounts.services import password_reset_token
        from core.db import db, utcnow

        with self.app.app_context():
            token = password_reset_token(db.session.get(User, self.admin_id), secret=self.app.config["SECRET_KEY"],
                                         now=utcnow())
        return f"/password/reset/{token}"

    # ---- bids

    def admin_declared(self, url: str, *, event: int | None = None) -> str:
        """`url`, after the admin (who also holds the WCOC role) has declared no conflict in the call (`event`, else
        the 2015 call): a WCOC role binds its account's other roles at the declaration gate
        (scoring.queries.declaration_required)."""
        self.sf.declare(event or self.event, self.admin_id)
        return url

    def draft_bid(self) -> int:
        """A draft bid of the practice call holding every value of a valid bid, owned by a plain bidder."""
        from accounts.models import User
        from bids import services
        from events.models import Event
        from tests.bids.factories import valid_bid

        owner_id = self.make.user(roles=("bidder",), email=OWNER_EMAIL)
        with self.app.app_context():
            owner = db.session.get(User, owner_id)
            event = db.session.get(Event, self.practice)
            bid = services.create_bid(event, owner=owner, actor=owner, now=utcnow())
            services.apply_data(bid, valid_bid(event.regulation))
            db.session.commit()
            return bid.id

    # ---- scoring and the board

    def late_draft_bid(self) -> int:
        """A draft of the 2015 call (open, its deadline passed) owned by a plain bidder: the secretariat may admit it
        late. Made directly: the guard refuses to start an online draft after the deadline."""
        from bids.models import Bid

        owner_id = self.make.user(roles=("bidder",), email=OWNER_EMAIL)
        with self.app.app_context():
            bid = Bid(event_id=self.event, owner_id=owner_id, status="draft", version=0, revision=1,
                      created_at=utcnow(), updated_at=utcnow(), consultation="pending")
            db.session.add(bid)
            db.session.commit()
            return bid.id

    def scoring_call(self, *, compliant: bool = True) -> list[int]:
        """The 2015 call in scoring with two submitted bids (the second non-compliant unless `compliant`)."""
        bids = [self.sf.bid(self.event, city="Lviv", host="UKR"),
                self.sf.bid(self.event, city="Tbilisi", host="GEO", compliant=compliant)]
        self.sf.status(self.event, "scoring")
        return bids

    def deliberation_call(self) -> list[int]:
        """As tests/board/conftest.py `scored`: three complete bids scored by three members, scoring closed."""
        from bids.models import Bid
        from bids.services import apply_data
        from tests.bids.factories import valid_bid

        bids = [self.sf.bid(self.event, city=city, host=host, name=name) for city, host, name in (
            ("Lviv", "UKR", "Ukrainian Chess Federation"), ("Tbilisi", "GEO", "Georgian Chess Federation"),
            ("Madrid", "ESP", "Spanish Chess Federation"))]
        with self.app.app_context():
            for bid_id, country in zip(bids, ("UA", "GE", "ES"), strict=True):
                bid = db.session.get(Bid, bid_id)
                apply_data(bid, valid_bid(bid.event.regulation, applicant_name=bid.applicant_name,
                                          host_federation=bid.host_federation, venue_city=bid.venue_city,
                                          venue_country=country))
            db.session.commit()
        self.sf.status(self.event, "scoring")
        members = [self.sf.member(federation=f) for f in ("FIN", "SWE", "NOR")]
        for m in members:
            self.sf.declare(self.event, m)
            for bid_id, score in zip(bids, ("4", "3", "2.5"), strict=True):
                self.sf.score(bid_id, m, score)
        self.sf.status(self.event, "deliberation")
        return bids

    def sponsor_bid(self) -> str:
        """The page of a sponsor's bid in scoring, where the secretariat records the consultation (Art. 15.1)."""
        from bids.models import Bid

        bids = self.scoring_call()
        with self.app.app_context():
            db.session.get(Bid, bids[0]).applicant_type = "sponsor"
            db.session.commit()
        return f"/bids/{bids[0]}"

    def sponsor_consultation_call(self) -> str:
        """A call before the Board whose first bid is a sponsor's, its consultation not recorded (Art. 15.1), and a
        President to decide a case referred under Art. 16; returns the Board's page."""
        from bids.models import Bid

        bids = self.deliberation_call()
        with self.app.app_context():
            bid = db.session.get(Bid, bids[0])
            bid.applicant_type = "sponsor"
            db.session.commit()
        self.make.user(email=PRESIDENT_EMAIL, roles=("board",), federation="FRA", is_president=True)
        return "/board/fwwcm-2015"

    def result_contract(self) -> str:
        """A contract in force with its match result recorded, so deductions from the prize balances can be made;
        returns its result page."""
        from accounts.models import User
        from contracts import results
        from contracts.models import Contract
        from contracts.rules.result import MatchOutcome

        contract_id, _ = self.contract()
        with self.app.app_context():
            results.record_result(db.session.get(Contract, contract_id),
                                  outcome=MatchOutcome("CHN", "regular", date(2015, 10, 26)),
                                  actor=db.session.get(User, self.admin_id), now=utcnow())
            db.session.commit()
        return f"/contracts/{contract_id}/result"

    def withheld_fee_contract(self) -> str:
        """`result_contract` with a deduction its rule returns (the protest fee withheld from a prize balance), so
        its return can be recorded; returns the result page."""
        from accounts.models import User
        from contracts import results
        from contracts.models import Contract

        page = self.result_contract()
        contract_id = int(page.split("/")[2])
        with self.app.app_context():
            contract = db.session.get(Contract, contract_id)
            rule = next(d for d in contract.regulation.deductions if d.returned_if)
            results.record_deduction(contract, federation="UKR", rule_key=rule.key, amount=rule.amount,
                                     reason="A protest after game 6; the fee withheld at her request.",
                                     decided_on=date(2015, 10, 20), actor=db.session.get(User, self.admin_id),
                                     now=utcnow())
            db.session.commit()
        return page

    def decided_call(self) -> list[int]:
        from accounts.models import User
        from accounts.services import create_user
        from bids.models import Bid
        from board.services import cast_vote, ensure_pack, record_decision
        from events.models import Event

        bids = self.deliberation_call()
        with self.app.app_context(), self.app.test_request_context():
            event = db.session.get(Event, self.event)
            admin = db.session.get(User, self.admin_id)
            member = create_user(email="hostile-board@example.org", password="a long enough password", name="B",
                                 roles=["board"], federation="FRA", actor=None, now=utcnow())
            cast_vote(event, member, db.session.get(Bid, bids[0]), now=utcnow())
            ensure_pack(event, actor=admin, now=utcnow(), upload_dir=self.app.config["UPLOAD_DIR"])
            db.session.commit()
            record_decision(event, method="board_vote", selected=db.session.get(Bid, bids[0]),
                            rationale="", decided_on=utcnow().date(), consultations=[], actor=admin, now=utcnow())
            db.session.commit()
        return bids

    # ---- contracts

    def contract(self, *, issue: bool = True, pay: bool = False, event: int | None = None) -> tuple[int, int]:
        """A contract of a selected bid of the 2015 call (or of `event`: one selected bid per call), issued unless
        `issue=False`; returns (contract id, first milestone id), with a payment on that milestone when `pay`."""
        from accounts.models import User
        from contracts import payments
        from contracts.models import Contract

        contract_id = self.cf.contract(event or self.event, admin_id=self.admin_id, issue=issue)
        with self.app.app_context():
            contract = db.session.get(Contract, contract_id)
            first = contract.milestones[0].id if contract.milestones else 0
            if pay:
                payments.record_payment(contract.milestones[0], amount=Decimal("1000.00"),
                                        received_on=date(2015, 6, 10), reference="T-1", note="", idempotency_key="h1",
                                        actor=db.session.get(User, self.admin_id), now=utcnow())
                db.session.commit()
            return contract_id, first


@dataclass
class Control:
    tag: str  # input, textarea, select
    name: str
    type: str = "text"
    value: str = ""
    checked: bool = False
    options: list[tuple[str, bool]] = field(default_factory=list)  # (value, selected) of a select

    @property
    def text_like(self) -> bool:
        return self.tag == "textarea" or (self.tag == "input" and self.type in TEXT_TYPES)


@dataclass
class Form:
    action: str  # a path
    controls: list[Control] = field(default_factory=list)

    def text_fields(self) -> list[Control]:
        return [c for c in self.controls if c.text_like]

    def value_of(self, name: str) -> str | None:
        for c in self.controls:
            if c.name == name and (c.text_like or c.tag == "input" and c.type == "hidden"):
                return c.value
        return None

    def names(self) -> set[str]:
        return {c.name for c in self.controls}


class _FormParser(HTMLParser):
    def __init__(self, page_url: str):
        super().__init__(convert_charrefs=True)
        self.page_url = page_url
        self.forms: list[Form] = []
        self._form: Form | None = None
        self._textarea: Control | None = None
        self._select: Control | None = None
        self._option: list | None = None

    def handle_starttag(self, tag, attrs):
        a = {k: (v if v is not None else "") for k, v in attrs}
        if tag == "form":
            if a.get("method", "get").lower() == "post":
                self._form = Form(action=urlsplit(urljoin(self.page_url, a.get("action") or self.page_url)).path)
                self.forms.append(self._form)
            return
        if self._form is None or "name" not in a and tag != "option":
            return
        if tag == "input":
            self._form.controls.append(Control("input", a["name"], a.get("type", "text").lower() or "text",
                                               a.get("value", ""), "checked" in a))
        elif tag == "textarea":
            self._textarea = Control("textarea", a["name"])
            self._form.controls.append(self._textarea)
        elif tag == "select":
            self._select = Control("select", a["name"], "select")
            self._form.controls.append(self._select)
        elif tag == "option" and self._select is not None:
            self._option = [a.get("value"), "selected" in a, ""]
            self._select.options.append(self._option)

    def handle_endtag(self, tag):
        if tag == "form":
            self._form = None
        elif tag == "textarea":
            self._textarea = None
        elif tag == "select":
            if self._select is not None:
                self._select.options = [(v if v is not None else text.strip(), sel) for v, sel, text in
                                        self._select.options]
            self._select = None
        elif tag == "option":
            self._option = None

    def handle_data(self, data):
        if self._textarea is not None:
            self._textarea.value += data
        elif self._option is not None:
            self._option[2] += data


def parse_forms(html: str, page_url: str) -> list[Form]:
    """Every <form method="post"> of the page, with its controls and their current values."""
    parser = _FormParser(page_url)
    parser.feed(html)
    parser.close()
    return parser.forms


def endpoint_of(app, path: str) -> str | None:
    """The endpoint a form posts to."""
    adapter = app.url_map.bind(app.config["SERVER_NAME"] or "localhost")
    try:
        return adapter.match(path, method="POST")[0]
    except HTTPException:
        return None


def base_values(form: Form, overrides: dict | None = None) -> dict[str, list[str]]:
    """What a person would send: current values, blank text fields filled with something plausible, the checked
    radio (else the first), the selected option (else the first that is not empty), ticked checkboxes."""
    data: dict[str, list[str]] = {}
    radios_done: set[str] = set()
    for c in form.controls:
        if c.text_like:
            data[c.name] = [c.value.strip() or FILLERS.get(c.type, f"Filler for {c.name}")]
        elif c.tag == "select":
            chosen = [v for v, sel in c.options if sel and v] or [v for v, _ in c.options if v][:1]
            data[c.name] = chosen[:1]
        elif c.type == "hidden":
            data.setdefault(c.name, []).append(c.value)
        elif c.type == "radio":
            if c.checked:
                data[c.name] = [c.value]
                radios_done.add(c.name)
            elif c.name not in radios_done and c.name not in data:
                data[c.name] = [c.value]
        elif c.type == "checkbox" and c.checked:
            data.setdefault(c.name, []).append(c.value or "y")
    for name, value in (overrides or {}).items():
        if value is None:
            data.pop(name, None)
        else:
            data[name] = value if isinstance(value, list) else [value]
    return data


def same_form(forms: list[Form], app, endpoint: str, names: set[str]) -> Form | None:
    """The form on a page that posts to `endpoint` and has the most of the given field names."""
    candidates = [f for f in forms if endpoint_of(app, f.action) == endpoint]
    if not candidates:
        return None
    return max(candidates, key=lambda f: len(f.names() & names))


@contextmanager
def undone():
    """Whatever the request commits is undone afterwards: each post starts from the same rows.

    The test session (tests/conftest.py `_rollback`) is bound to one connection inside an outer transaction;
    a savepoint taken here, and rolled back after the request, wraps the savepoint each request's session makes.
    """
    from core.db import db

    connection = db.session.session_factory.kw["bind"]
    savepoint = connection.begin_nested()
    try:
        yield
    finally:
        if savepoint.is_active:
            savepoint.rollback()


def crash_summary(exc: BaseException) -> str:
    """The exception and the app frames it went through, short enough for a report."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/site-packages/" not in f.filename]
    where = " <- ".join(f"{f.filename.rsplit('/main/', 1)[-1]}:{f.lineno} {f.name}" for f in reversed(frames[-4:]))
    return f"{type(exc).__name__}: {str(exc)[:300]} [{where}]"


def shown(value: str) -> str:
    """A value as the form is expected to show it back: every form strips surrounding whitespace."""
    return value.strip().replace("\r\n", "\n")


def describe(value: str) -> str:
    return repr(value if len(value) <= 40 else value[:37] + "...")
