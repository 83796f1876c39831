"""Issue 8: every form field and every API parameter is fed a list of bad values (tests/security/hostile.py);
the test fails on any server error, on any value the user typed that the page loses, and on the script tag
printed unescaped.

Forms: each target below is a page that shows a <form method="post"> to a user who may use it, built from real
rows (a draft bid of the practice call, a call in scoring, a call in deliberation, contracts). For each text-like
field the form is posted with its current values and that field set to one bad value; each post is undone
afterwards (hostile.undone), so every bad value meets the same rows. When the answer shows the form again,
every field keeps what was typed; when the answer is a redirect to a page that says the form was refused, the
typed values must be on that page too. Password fields are posted like the others but never shown back (the
browser's password field is never refilled by design).

API: every GET route of /api/v1 with each bad value in each path and query parameter, and as the bearer token.
"""

from __future__ import annotations

import json
import re
from urllib.parse import quote

import pytest
from sqlalchemy import select

from core.db import db, utcnow
from operations import outbox
from tests.conftest import DEMO_PASSWORD
from tests.security.hostile import (
    ADMIN_EMAIL,
    BAD_VALUES,
    NOT_ECHOED,
    OWNER_EMAIL,
    PENDING_EMAIL,
    PRESIDENT_EMAIL,
    SCRIPT,
    SETUP_EMAIL,
    TOTP_EMAIL,
    World,
    base_values,
    crash_summary,
    describe,
    endpoint_of,
    parse_forms,
    same_form,
    shown,
    undone,
)

SECTIONS = ("applicant", "dates_venue", "money", "hotel", "inspection", "guarantee", "signature", "evaluation")

# POST endpoints whose forms have no text-like field (buttons, uploads, radios, checkboxes, selects): nothing to
# feed. test_forms_without_text_fields_have_none checks the claim on the pages that show them.
NO_TEXT_FIELDS = {
    "accounts.logout": "a button",
    "accounts.new_token": "a button",
    "accounts.revoke_token": "a button",
    "accounts.end_session": "a button",
    "accounts.end_other_sessions": "a button",
    "accounts.end_user_sessions": "a button",
    "accounts.edit_user": "roles (checkboxes), federation (select), president (checkbox)",
    "accounts.set_active": "a button",
    "accounts.confirm_user": "a button",
    "accounts.new_recovery_codes": "a button",
    "accounts.remove_passkey": "a button",
    "accounts.reset_two_factor": "a button",
    "accounts.require_two_factor": "a button",
    # Passkeys: JSON that static/js/webauthn.js sends, no form (tests/accounts/test_second_factor.py feeds them).
    "accounts.passkey_register_options": "JSON, no form",
    "accounts.passkey_register": "JSON, no form",
    "accounts.passkey_login_options": "JSON, no form",
    "accounts.passkey_login": "JSON, no form",
    "events.change_status": "buttons",
    "bids.new": "a button",
    "bids.upload": "a file",
    "bids.submit": "a button",
    "bids.withdraw": "a button",
    "bids.reopen": "a button",
    "bids.paper": "a select",
    "board.vote": "radio buttons",
    "scoring.reopen": "a button",
    "contracts.new": "a checkbox",
    "contracts.discard": "a button",
    "contracts.calendar_link": "a button",
    "events.settings": "a checkbox",
    "signatures.verify": "a file",
    "outbox.resend": "a button",
    "outbox.send_due": "a button",
    "signatures.trust_list": "a file",
    "signatures.remove_trusted": "a button",
}


# target id -> (who, how to build the page's URL, endpoint the form posts to, values to send instead of the
# form's own). Several targets may share an endpoint (the bid's sections). SHOWS_SAVED: the targets whose page,
# after a save, shows the form again holding what was saved (a bid's section, a draft scorecard).
def _page(url: str, *setup):
    """A page builder: run the setup steps (World methods), then the URL."""
    def build(w: World) -> str:
        for step in setup:
            step(w)
        return url
    return build


def _scorecard_page(w: World) -> str:
    bids = w.scoring_call()
    w.sf.declare(w.event, w.admin_id)
    return f"/events/fwwcm-2015/scoring/bids/{bids[0]}"


TARGETS = {
    "accounts.login": (None, _page("/login"), "accounts.login", {}),
    "accounts.register": (None, _page("/register"), "accounts.register", {}),
    "accounts.forgot_password": (None, _page("/password/forgot"), "accounts.forgot_password", {}),
    "accounts.reset_password": (None, World.password_reset_page, "accounts.reset_password", {}),
    "accounts.change_password": (ADMIN_EMAIL, _page("/account"), "accounts.change_password",
                                 {"current_password": DEMO_PASSWORD}),
    "accounts.new_user": (ADMIN_EMAIL, _page("/admin/users/new"), "accounts.new_user", {"roles": "bidder"}),
    "accounts.second_factor": (PENDING_EMAIL, World.second_step_page, "accounts.second_factor", {}),
    "accounts.second_factor_setup": (SETUP_EMAIL, World.setup_page, "accounts.second_factor_setup", {}),
    "accounts.enrol_totp": (ADMIN_EMAIL, _page("/account/two-factor"), "accounts.enrol_totp", {}),
    "accounts.remove_totp": (TOTP_EMAIL, World.account_with_totp, "accounts.remove_totp", {}),
    **{f"bids.edit:{s}": (OWNER_EMAIL, lambda w, s=s: f"/bids/{w.draft_bid()}/edit/{s}", "bids.edit", {})
       for s in SECTIONS},
    "bids.reject": (ADMIN_EMAIL, lambda w: w.admin_declared(f"/bids/{w.scoring_call()[0]}"), "bids.reject", {}),
    "bids.consultation": (ADMIN_EMAIL, lambda w: w.admin_declared(w.sponsor_bid()), "bids.consultation", {}),
    "bids.admit_late": (ADMIN_EMAIL, lambda w: w.admin_declared(f"/bids/{w.late_draft_bid()}"), "bids.admit_late",
                        {}),
    "scoring.conflicts": (ADMIN_EMAIL, _page("/events/fwwcm-2015/scoring/conflicts", World.scoring_call),
                          "scoring.conflicts", {"has_conflict": "no", "bids": None, "confirm": "y"}),
    "scoring.scorecard": (ADMIN_EMAIL, _scorecard_page, "scoring.scorecard", {}),
    "scoring.weights": (ADMIN_EMAIL, _page("/events/fwwcm-2015/scoring/weights", World.scoring_call),
                        "scoring.weights", {}),
    "scoring.admit": (ADMIN_EMAIL, _page("/events/fwwcm-2015/scoring/admission",
                                         lambda w: w.scoring_call(compliant=False)), "scoring.admit", {}),
    "board.decide": (ADMIN_EMAIL, _page("/board/fwwcm-2015", World.deliberation_call), "board.decide",
                     {"method": "board_vote"}),
    "board.correct": (ADMIN_EMAIL, _page("/board/fwwcm-2015/decision", World.decided_call), "board.correct",
                      {"method": "board_vote"}),
    "contracts.issue": (ADMIN_EMAIL, lambda w: f"/contracts/{w.contract(issue=False)[0]}/issue", "contracts.issue",
                        {}),
    "contracts.correct": (ADMIN_EMAIL, lambda w: f"/contracts/{w.contract()[0]}/correct", "contracts.correct", {}),
    "contracts.record_payment": (ADMIN_EMAIL, lambda w: "/contracts/{}/milestones/{}".format(*w.contract()),
                                 "contracts.record_payment", {}),
    "contracts.reverse_payment": (ADMIN_EMAIL, lambda w: "/contracts/{}/milestones/{}".format(*w.contract(pay=True)),
                                  "contracts.reverse_payment", {}),
    "contracts.result": (ADMIN_EMAIL, lambda w: f"/contracts/{w.contract()[0]}/result", "contracts.result", {}),
    "contracts.deduction": (ADMIN_EMAIL, World.result_contract, "contracts.deduction", {}),
    "contracts.sign": (ADMIN_EMAIL, lambda w: f"/contracts/{w.contract()[0]}", "contracts.sign", {}),
    "board.president_ruling": (PRESIDENT_EMAIL, World.sponsor_consultation_call, "board.president_ruling",
                               {"grounds": "unforeseen"}),
    "contracts.deduction_return": (ADMIN_EMAIL, World.withheld_fee_contract, "contracts.deduction_return", {}),
}

# Fields made by one loop over the regulation's criteria, members or milestones (a scorecard's ten comments, the
# eight evaluation texts, the WCOC members' advice, the contract's due dates, the room rates, the weights): the
# first of each family gets every bad value, the others share them out (value i goes to member i mod n), so
# each value still meets the family's code twice and a form stays within a few seconds.
FAMILIES = re.compile(r"^(comment_|eval_|advice_|due_|weight_|room_rates-\d+-)")


def feeding_plan(fields) -> list[tuple[object, list[tuple[str, str]]]]:
    """(field, the bad values it is fed) for each text-like field of a form."""
    families: dict[str, list] = {}
    for f in fields:
        m = FAMILIES.match(f.name)
        key = f.name if m is None else re.sub(r"-\d+-", "-N-", f.name) if f.name.startswith("room_rates-") \
            else m.group(1)
        families.setdefault(key, []).append(f)
    plan = []
    for members in families.values():
        n = len(members)
        for k, f in enumerate(members):
            plan.append((f, BAD_VALUES if k == 0 else [v for i, v in enumerate(BAD_VALUES) if i % n == k]))
    return plan


SHOWS_SAVED = {*(f"bids.edit:{s}" for s in SECTIONS), "scoring.scorecard"}


@pytest.fixture
def world(app, make, event, practice, monkeypatch):
    built = World(app, make, event, practice)
    built.monkeypatch = monkeypatch
    return built


@pytest.fixture
def no_weasyprint(monkeypatch):
    """Pages are rendered from their templates as usual, but WeasyPrint is replaced by a one-page PDF: a decision
    or an issued contract renders several PDFs, a second each, and the PDFs are not what this test is about."""
    import io

    from pypdf import PdfWriter

    out = io.BytesIO()
    writer = PdfWriter()
    writer.add_blank_page(width=595, height=842)
    writer.write(out)
    blank = out.getvalue()
    monkeypatch.setattr("evidence.pdf.html_to_pdf", lambda html, *a, **k: blank)


@pytest.fixture
def cheap_dummy_hash(monkeypatch):
    """A login with an unknown email checks the password against a dummy hash made with argon2's production cost
    (half a second, so the answer's timing tells nothing); the test hasher's cost serves here."""
    from accounts import services

    monkeypatch.setattr(services, "_DUMMY_HASH", services.hasher.hash("not a real password"))


def _values_problems(after, sent: dict, fields, *, label: str, bad_field: str, what: str) -> list[str]:
    """The fields of the form shown again whose value is not what was sent."""
    out = []
    for f in fields:
        if f.type == "password" or (f.name == bad_field and label in NOT_ECHOED):
            continue
        typed = sent[f.name][0]
        now = after.value_of(f.name)
        if now is None:
            out.append(f"{what}: field {f.name} is gone (typed {describe(typed)})")
        elif shown(now) != shown(typed):
            out.append(f"{what}: field {f.name} shows {describe(now)}, typed {describe(typed)}")
    return out


def _redirect_problems(app, client, location, *, endpoint, form, sent, field, label, shows_saved) -> list[str]:
    """Problems with the page a redirecting answer leads to: a refusal there keeps what was typed, and a saved
    form shows the value again."""
    if "/login" in location:
        return [f"redirected to the login page ({location})"]
    problems = []
    landing = client.get(location)
    page = landing.get_data(as_text=True)
    if landing.status_code >= 500:
        problems.append(f"the page after the redirect answers {landing.status_code}")
    if SCRIPT in page:
        problems.append("the script tag is printed unescaped on the page after the redirect")
    refused = 'class="flash error"' in page
    again = same_form(parse_forms(page, location), app, endpoint, form.names())
    if refused:
        typed = [f for f in form.text_fields() if f.type != "password" and shown(sent[f.name][0])
                 and not (f.name == field.name and label in NOT_ECHOED)]
        if again is None:
            if typed:
                problems.append(f"refused with a flash and a redirect to {location}; typed values dropped: "
                                + ", ".join(f"{f.name}={describe(sent[f.name][0])}" for f in typed))
        else:
            problems += _values_problems(again, sent, typed, label=label, bad_field=field.name,
                                         what=f"refused with a redirect to {location}")
    elif shows_saved and again is not None and field.type not in ("number", "date") and label not in NOT_ECHOED:
        # Saved: the form shows the value again (an amount may come back normalised, so only a value that
        # came back empty is reported).
        now = again.value_of(field.name)
        if now is not None and shown(sent[field.name][0]) and not shown(now):
            problems.append(f"accepted, but the saved form shows {field.name} empty")
    return problems


def _check_answer(app, client, response, *, endpoint, form, sent, field, label, shows_saved) -> list[str]:
    """Problems with one answer to a form posted with `field` set to the bad value `label`."""
    problems = []
    body = response.get_data(as_text=True)
    status = response.status_code
    if status >= 500:
        problems.append(f"status {status}")
    if SCRIPT in body:
        problems.append("the script tag is printed unescaped")
    texts = form.text_fields()
    if status in (301, 302, 303):
        return problems + _redirect_problems(app, client, response.location, endpoint=endpoint, form=form,
                                             sent=sent, field=field, label=label, shows_saved=shows_saved)
    after = same_form(parse_forms(body, form.action), app, endpoint, form.names())
    if after is None:
        if 400 <= status < 500 and label not in NOT_ECHOED:
            problems.append(f"status {status} without the form: every typed value is lost")
        return problems
    return problems + _values_problems(after, sent, texts, label=label, bad_field=field.name,
                                       what=f"status {status}")


def test_every_post_route_is_a_target_or_has_no_text_field(app):
    posts = {rule.endpoint for rule in app.url_map.iter_rules() if "POST" in (rule.methods or ())}
    targets = {endpoint for _, _, endpoint, _ in TARGETS.values()}
    assert not targets & set(NO_TEXT_FIELDS)
    assert posts == targets | set(NO_TEXT_FIELDS), (
        f"not covered: {sorted(posts - targets - set(NO_TEXT_FIELDS))}; "
        f"stale: {sorted((targets | set(NO_TEXT_FIELDS)) - posts)}")


@pytest.mark.usefixtures("no_weasyprint", "cheap_dummy_hash")
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_form_survives_bad_values(app, world, target):
    who, build, endpoint, overrides = TARGETS[target]
    page = build(world)
    client = world.client(who)
    response = client.get(page)
    assert response.status_code == 200, (page, response.status_code)
    forms = parse_forms(response.get_data(as_text=True), page)
    ours = [f for f in forms if endpoint_of(app, f.action) == endpoint]
    assert ours, f"{page} shows no form posting to {endpoint}"
    others = {endpoint_of(app, f.action) for f in forms if f not in ours and f.text_fields()}
    assert others <= {e for _, _, e, _ in TARGETS.values()}, f"{page}: forms with text fields not tested: {others}"
    problems: list[str] = []
    for form in ours:
        assert form.text_fields(), f"{page}: the form posting to {endpoint} has no text-like field"
        base = base_values(form, overrides)
        for field, values in feeding_plan(form.text_fields()):
            for label, bad in values:
                sent = {**base, field.name: [bad]}
                where = f"POST {form.action} {field.name}={label}"
                with undone():
                    try:
                        answer = client.post(form.action, data=sent)
                    except Exception as exc:  # the test app propagates exceptions: a 500 in production
                        problems.append(f"{where}: server error {crash_summary(exc)}")
                        continue
                    try:
                        found = _check_answer(app, client, answer, endpoint=endpoint, form=form, sent=sent,
                                              field=field, label=label, shows_saved=target in SHOWS_SAVED)
                    except Exception as exc:
                        found = [f"server error on the page after the redirect: {crash_summary(exc)}"]
                    problems += [f"{where}: {p}" for p in found]
    assert not problems, f"{len(problems)} problem(s):\n" + "\n".join(problems)


# Pages showing the forms of NO_TEXT_FIELDS (and others): none may hold a text-like field that no target feeds.
@pytest.mark.usefixtures("no_weasyprint")
def test_forms_without_text_fields_have_none(app, world):
    from accounts.models import User
    from contracts.models import Contract

    draft = world.draft_bid()
    contract_id, milestone_id = world.contract()
    draft_contract = world.contract(issue=False, event=world.practice)[0]
    world.admin_declared("", event=world.practice)
    with app.app_context():
        other = db.session.scalars(select(User).where(User.email == OWNER_EMAIL)).one().id
        bid_of_contract = db.session.get(Contract, contract_id).bid_id
        # a message whose delivery failed: its page offers "Send it again"
        failed = outbox.queue([OWNER_EMAIL], "A notice", "Body", kind="test", now=utcnow())
        failed.status = "failed"
        db.session.commit()
        message = failed.id
        # a registration not yet confirmed: its page offers "Confirm the address and open the account"
        from accounts.services import create_user

        unconfirmed = create_user(email="unconfirmed@example.org", password="a long pass phrase 42", name="Eve",
                                  roles=["bidder"], actor=None, now=utcnow(), confirmed=False).id
        db.session.commit()
    pages = {ADMIN_EMAIL: ["/", "/account", "/admin/users", f"/admin/users/{other}", f"/admin/users/{unconfirmed}",
                           "/events/fwwcm-2015",
                           "/events/fwwcm-practice", "/bids/", f"/bids/{draft}", f"/bids/{draft}/edit/commitments",
                           f"/bids/{draft}/edit/signature", "/admin/events/fwwcm-2015/paper-bid",
                           f"/bids/{bid_of_contract}/contract/new",
                           f"/contracts/{contract_id}", f"/contracts/{draft_contract}", "/contracts/",
                           f"/contracts/{contract_id}/milestones/{milestone_id}", "/scoring/", "/board/",
                           "/verify", "/admin/trust", "/admin/outbox/", f"/admin/outbox/{message}"],
             OWNER_EMAIL: ["/", f"/bids/{draft}", f"/bids/{draft}/edit/commitments", "/events/fwwcm-practice"]}
    targets = {e for _, _, e, _ in TARGETS.values()}
    seen = set()
    world.client(ADMIN_EMAIL)  # a second session of the admin: /account offers to sign it out, and all but this one
    for who, urls in pages.items():
        client = world.client(who)
        for url in urls:
            response = client.get(url)
            assert response.status_code in (200, 409), (who, url, response.status_code)
            for form in parse_forms(response.get_data(as_text=True), url):
                endpoint = endpoint_of(app, form.action)
                seen.add(endpoint)
                assert endpoint in targets or not form.text_fields(), (
                    f"{url}: the form posting to {endpoint} has text fields {[f.name for f in form.text_fields()]}")
    # Not on these pages (they need a submitted bid of an open call, a submitted scorecard, a call in deliberation,
    # a selected bid without a contract): templates/bids/view.html, scoring/scorecard.html, board/call.html and
    # contracts/new.html show them as buttons, radio buttons and a checkbox.
    # templates/accounts/account.html shows a revoke button for each live API token, and the admin has none here;
    # templates/signatures/trust.html a remove button for each trusted certificate, and the list is empty here.
    # bids.upload, a document alone, is posted by no page: a section's page attaches its files through its own form
    # (bids.edit), so that uploading keeps the fields typed beside them.
    # The admin here has no second factor: no recovery codes to renew, no passkey to remove; passkeys' JSON is no form.
    unseen = {"bids.reopen", "bids.withdraw", "scoring.reopen", "board.vote", "contracts.new", "accounts.revoke_token",
              "signatures.remove_trusted", "bids.upload", "accounts.new_recovery_codes", "accounts.remove_passkey",
              "accounts.passkey_register_options", "accounts.passkey_register", "accounts.passkey_login_options",
              "accounts.passkey_login"}
    assert set(NO_TEXT_FIELDS) - seen <= unseen, sorted(set(NO_TEXT_FIELDS) - seen - unseen)


# ------------------------------------------------------------------------------------------------------ API


@pytest.fixture
def api_world(app, world):
    """A call with a submitted bid, a contract with a payment, and an admin's API token."""
    from accounts.models import User
    from accounts.services import issue_api_token

    bid = world.sf.bid(world.event)
    contract_id, _ = world.contract(pay=True)
    with app.app_context():
        token = issue_api_token(db.session.get(User, world.admin_id), actor=None, now=utcnow())
        db.session.commit()
    return {"slug": "fwwcm-2015", "bid_id": bid, "contract_id": contract_id, "token": token}


def _api_routes(app) -> list[tuple[str, list[str]]]:
    """(rule, its path parameters) for every GET route of /api/v1."""
    out = []
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith("/api/v1/") and "GET" in (rule.methods or ()):
            out.append((rule.rule, sorted(rule.arguments)))
    return sorted(out)


QUERY_PARAMETERS = {"/api/v1/contracts/<int:contract_id>/milestones": ["as_of"]}


def _api_problems(response, where: str) -> list[str]:
    problems = []
    if response.status_code >= 500:
        return [f"{where}: status {response.status_code}"]
    if 400 <= response.status_code < 500:
        try:
            body = json.loads(response.get_data(as_text=True))
        except ValueError:
            return [f"{where}: status {response.status_code} is not JSON ({response.content_type})"]
        if not isinstance(body, dict) or "error" not in body:
            problems.append(f"{where}: status {response.status_code} without an 'error' key: {str(body)[:200]}")
    elif not response.is_json:
        problems.append(f"{where}: status {response.status_code} is not JSON ({response.content_type})")
    return problems


def test_api_parameters_survive_bad_values(app, api_world):
    routes = _api_routes(app)
    assert len(routes) >= 9, routes
    assert set(QUERY_PARAMETERS) <= {r for r, _ in routes}
    client = app.test_client()
    auth = {"Authorization": f"Bearer {api_world['token']}"}
    problems = []
    fed = 0
    for rule, params in routes:
        good = {p: str(api_world[p]) for p in params}
        url = rule
        for p in params:
            url = url.replace(f"<int:{p}>", f"<{p}>").replace(f"<{p}>", "{" + p + "}")
        ok = client.get(url.format(**good), headers=auth)
        assert ok.status_code < 500, (url, ok.status_code)
        slots = [(p, "path") for p in params] + [(q, "query") for q in QUERY_PARAMETERS.get(rule, [])]
        for name, where in slots:
            for label, bad in BAD_VALUES:
                fed += 1
                if where == "path":
                    target = url.format(**{**good, name: quote(bad, safe="")})
                    query = None
                else:
                    target, query = url.format(**good), {name: bad}
                try:
                    # An empty segment ("//") is answered by the router's redirect to the merged path: follow it.
                    response = client.get(target, query_string=query, headers=auth, follow_redirects=True)
                except Exception as exc:
                    problems.append(f"GET {rule} {name}={label}: server error {crash_summary(exc)}")
                    continue
                problems += _api_problems(response, f"GET {rule} {name}={label}")
    # The token itself is a parameter every route reads.
    for label, bad in BAD_VALUES:
        if "\n" in bad or "\r" in bad:
            continue  # a line break ends a header: no HTTP client can send one inside it
        try:
            response = client.get("/api/v1/events", headers={"Authorization": f"Bearer {bad}"})
        except Exception as exc:
            problems.append(f"GET /api/v1/events bearer={label}: server error {crash_summary(exc)}")
            continue
        problems += _api_problems(response, f"GET /api/v1/events bearer={label}")
        if response.status_code != 401:
            problems.append(f"GET /api/v1/events bearer={label}: status {response.status_code}, not 401")
    assert fed >= 9 * len(BAD_VALUES)
    assert not problems, f"{len(problems)} problem(s):\n" + "\n".join(problems)
