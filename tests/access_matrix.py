"""Route × role → expected status. Every route of the app must have a row (tests/test_access_matrix.py).

Rows name the URL with placeholders the test fills in: {slug} (the 2015 call), {other_user} (an account that is
not the caller's). Later packages add their rows here. 302 for a logged-out caller means "sent to the login page".
"""

from __future__ import annotations

ROLES = ("anon", "bidder", "wcoc", "board", "admin")


def everyone(status: int) -> dict[str, int]:
    return dict.fromkeys(ROLES, status)


def only(allowed: tuple[str, ...], ok: int = 200, *, anon: int = 302, others: int = 403) -> dict[str, int]:
    return {role: (ok if role in allowed else anon if role == "anon" else others) for role in ROLES}


def logged_in(ok: int = 200) -> dict[str, int]:
    return {"anon": 302, **dict.fromkeys(ROLES[1:], ok)}


# endpoint -> list of (method, url, expected statuses by role)
MATRIX: dict[str, list[tuple[str, str, dict[str, int]]]] = {
    "core.home": [("GET", "/", everyone(200))],
    "core.favicon": [("GET", "/favicon.ico", everyone(200))],
    "core.livez": [("GET", "/livez", everyone(200))],
    "core.healthz": [("GET", "/healthz", everyone(200))],
    "core.readyz": [("GET", "/readyz", everyone(200))],
    "static": [("GET", "/static/css/gambit.css", everyone(200))],
    # Anyone may check a PDF Gambit issued and download its certificate; the trust list is the secretariat's.
    "signatures.verify": [("GET", "/verify", everyone(200)), ("POST", "/verify", everyone(422))],
    "signatures.certificate": [("GET", "/signing/certificate.pem", everyone(200))],
    "signatures.trust_list": [("GET", "/admin/trust", only(("admin",))),
                              ("POST", "/admin/trust", only(("admin",), 422))],
    "signatures.remove_trusted": [("POST", "/admin/trust/999999/remove", only(("admin",), 404))],
    # logged-in users are sent home from the registration page
    "accounts.register": [("GET", "/register", {"anon": 200, **dict.fromkeys(ROLES[1:], 302)}),
                          ("POST", "/register", {"anon": 422, **dict.fromkeys(ROLES[1:], 302)})],
    "accounts.confirm_email": [("GET", "/register/confirm/not-a-token", {"anon": 400,
                                                                        **dict.fromkeys(ROLES[1:], 302)})],
    "accounts.login": [("GET", "/login", everyone(200)), ("POST", "/login", everyone(422))],
    # a forgotten password: whoever is logged in is sent to the account page (change it there); the link answers
    # the same to everyone, and a link that is not one is refused
    "accounts.forgot_password": [("GET", "/password/forgot", {"anon": 200, **dict.fromkeys(ROLES[1:], 302)}),
                                 ("POST", "/password/forgot", {"anon": 422, **dict.fromkeys(ROLES[1:], 302)})],
    "accounts.reset_password": [("GET", "/password/reset/not-a-token", everyone(400)),
                                ("POST", "/password/reset/not-a-token", everyone(400))],
    "accounts.logout": [("POST", "/logout", logged_in(302))],
    "accounts.account": [("GET", "/account", logged_in(200))],
    "accounts.change_password": [("POST", "/account/password", logged_in(422))],
    "accounts.new_token": [("POST", "/account/token", logged_in(200))],
    "accounts.revoke_token": [("POST", "/account/tokens/1/revoke", logged_in(302))],
    # No session of the caller's has this id: not found (another account's session is no more theirs to end).
    "accounts.end_session": [("POST", "/account/sessions/999999/end", logged_in(404))],
    "accounts.end_other_sessions": [("POST", "/account/sessions/end-others", logged_in(302))],
    "accounts.users": [("GET", "/admin/users", only(("admin",)))],
    "accounts.new_user": [("GET", "/admin/users/new", only(("admin",))),
                          ("POST", "/admin/users/new", only(("admin",), 422))],
    "accounts.edit_user": [("GET", "/admin/users/{other_user}", only(("admin",))),
                           ("POST", "/admin/users/{other_user}", only(("admin",), 422)),
                           ("GET", "/admin/users/999999", only(("admin",), 404))],
    "accounts.set_active": [("POST", "/admin/users/{other_user}/active", only(("admin",), 302))],
    "accounts.confirm_user": [("POST", "/admin/users/{other_user}/confirm", only(("admin",), 302))],
    "accounts.end_user_sessions": [("POST", "/admin/users/{other_user}/sessions/end", only(("admin",), 302)),
                                   ("POST", "/admin/users/999999/sessions/end", only(("admin",), 404))],
    # The second step of signing in belongs to a sign-in half made (the password checked): without one, everyone is
    # sent back to the login page. Passkeys' JSON answers 401 to whoever is neither signed in nor half signed in.
    "accounts.second_factor": [("GET", "/login/second-factor", everyone(302)),
                               ("POST", "/login/second-factor", everyone(302))],
    "accounts.second_factor_setup": [("GET", "/login/second-factor/setup", everyone(302)),
                                     ("POST", "/login/second-factor/setup", everyone(302))],
    "accounts.passkey_login_options": [("POST", "/login/passkey/options", everyone(401))],
    "accounts.passkey_login": [("POST", "/login/passkey", everyone(401))],
    "accounts.passkey_register_options": [("POST", "/passkeys/register/options", {"anon": 401,
                                                                                  **dict.fromkeys(ROLES[1:], 200)})],
    "accounts.passkey_register": [("POST", "/passkeys/register", {"anon": 401, **dict.fromkeys(ROLES[1:], 422)})],
    "accounts.enrol_totp": [("GET", "/account/two-factor", logged_in(200)),
                            ("POST", "/account/two-factor", logged_in(422))],
    "accounts.remove_totp": [("POST", "/account/two-factor/remove", logged_in(422))],
    "accounts.new_recovery_codes": [("POST", "/account/recovery-codes", logged_in(302))],
    "accounts.remove_passkey": [("POST", "/account/passkeys/999999/remove", logged_in(302))],
    "accounts.reset_two_factor": [("POST", "/admin/users/{other_user}/two-factor/reset", only(("admin",), 302))],
    "accounts.require_two_factor": [("POST", "/admin/users/{other_user}/two-factor/require", only(("admin",), 302))],
    # The outbox is the secretariat's: every message Gambit wrote, with its delivery.
    "outbox.index": [("GET", "/admin/outbox/", only(("admin",)))],
    "outbox.view": [("GET", "/admin/outbox/999999", only(("admin",), 404))],
    "outbox.resend": [("POST", "/admin/outbox/999999/resend", only(("admin",), 404))],
    "outbox.send_due": [("POST", "/admin/outbox/send", only(("admin",), 302))],
    # The audit log is the secretariat's: every change, who made it, and the chain's head.
    "audit.index": [("GET", "/admin/audit/", only(("admin",))),
                    ("GET", "/admin/audit/?action=%25%25&from=2015-13-45&page=x", only(("admin",), 400))],
    "events.index": [("GET", "/events/", everyone(200))],
    "events.public": [("GET", "/events/{slug}", everyone(200)), ("GET", "/events/no-such-call", everyone(404))],
    "events.regulations_text": [("GET", "/events/{slug}/regulations.txt", everyone(200))],
    "events.articles": [("GET", "/events/{slug}/articles", everyone(200))],
    "events.change_status": [("POST", "/events/{slug}/status", only(("admin",), 302))],
    "events.settings": [("POST", "/events/{slug}/settings", only(("admin",), 302))],
    # bids: {own_bid} belongs to the caller when the caller is a bidder (else to another bidder), {other_bid}
    # to another bidder; both are drafts of the open practice call. Another's draft answers 404, never 403.
    "bids.index": [("GET", "/bids/", logged_in(200))],
    "bids.new": [("POST", "/events/{practice}/bids/new", only(("bidder",), 302))],
    "bids.view": [("GET", "/bids/{own_bid}", {"anon": 302, "bidder": 200, "wcoc": 404, "board": 404, "admin": 200}),
                  ("GET", "/bids/{other_bid}", {"anon": 302, "bidder": 404, "wcoc": 404, "board": 404,
                                                "admin": 200})],
    "bids.edit": [("GET", "/bids/{own_bid}/edit/money",
                   {"anon": 302, "bidder": 200, "wcoc": 404, "board": 404, "admin": 200}),
                  ("POST", "/bids/{other_bid}/edit/money",
                   {"anon": 302, "bidder": 404, "wcoc": 404, "board": 404, "admin": 302}),
                  ("GET", "/bids/{own_bid}/edit/no-such-section",
                   {"anon": 302, "bidder": 404, "wcoc": 404, "board": 404, "admin": 404})],
    "bids.upload": [("POST", "/bids/{other_bid}/documents",
                     {"anon": 302, "bidder": 404, "wcoc": 404, "board": 404, "admin": 302})],
    "bids.document": [("GET", "/bids/{other_bid}/documents/{other_doc}",
                       {"anon": 302, "bidder": 404, "wcoc": 404, "board": 404, "admin": 200})],
    "bids.submit": [("POST", "/bids/{other_bid}/submit",
                     {"anon": 302, "bidder": 404, "wcoc": 404, "board": 404, "admin": 302})],
    "bids.withdraw": [("POST", "/bids/{other_bid}/withdraw",
                       {"anon": 302, "bidder": 404, "wcoc": 404, "board": 404, "admin": 302})],
    "bids.reopen": [("POST", "/bids/{other_bid}/reopen",
                     {"anon": 302, "bidder": 404, "wcoc": 404, "board": 404, "admin": 302})],
    "bids.version": [("GET", "/bids/{other_bid}/versions/1",
                      {"anon": 302, "bidder": 404, "wcoc": 404, "board": 404, "admin": 404})],
    "bids.reject": [("POST", "/bids/{other_bid}/reject", only(("admin",), 422))],
    "bids.consultation": [("POST", "/bids/{other_bid}/consultation", only(("admin",), 422))],
    "bids.admit_late": [("POST", "/bids/{other_bid}/admit-late", only(("admin",), 422))],
    "bids.paper": [("GET", "/admin/events/{slug}/paper-bid", only(("admin",))),
                   ("POST", "/admin/events/{slug}/paper-bid", only(("admin",), 302))],
    "api.bid": [("GET", "/api/v1/bids/{other_bid}",
                 {"anon": 401, "bidder": 404, "wcoc": 404, "board": 404, "admin": 200})],
    "api.bid_obligations": [("GET", "/api/v1/bids/{other_bid}/obligations",
                             {"anon": 401, "bidder": 404, "wcoc": 404, "board": 404, "admin": 409})],
    "api.event_bids": [("GET", "/api/v1/events/{slug}/bids", {"anon": 401, **dict.fromkeys(ROLES[1:], 200)})],
    # board: the 2015 call is open in this test, so the dossiers are closed (403) even to the Board.
    "board.index": [("GET", "/board/", only(("board", "admin")))],
    "board.call": [("GET", "/board/{slug}", only(("board", "admin"))),
                   ("GET", "/board/no-such-call", only(("board", "admin"), 404))],
    "board.dossier": [("GET", "/board/{slug}/bids/{other_bid}/dossier.pdf", only(("board", "admin"), 403))],
    "board.pack": [("GET", "/board/{slug}/pack.pdf", only(("board", "admin"), 403))],
    "board.stored": [("GET", "/board/{slug}/dossiers/1.pdf", only(("board", "admin"), 403))],
    "board.vote": [("POST", "/board/{slug}/vote", only(("board",), 302))],
    # the FIDE President only: a board member who is not the President is refused
    "board.president_ruling": [("POST", "/board/{slug}/bids/{other_bid}/consultation/president",
                                only(("board",), 403))],
    "board.decide": [("POST", "/board/{slug}/decision", only(("board", "admin"), 403))],
    "board.decision": [("GET", "/board/{slug}/decision", only(("board", "admin", "wcoc"), 404))],
    "board.correct": [("POST", "/board/{slug}/decision/correct",
                       {"anon": 302, "bidder": 403, "wcoc": 403, "board": 403, "admin": 404})],
    "board.minutes": [("GET", "/board/{slug}/decision/1/minutes.pdf", only(("board", "admin", "wcoc"), 404))],
    "api.decision": [("GET", "/api/v1/events/{slug}/decision",
                      {"anon": 401, "bidder": 403, "wcoc": 404, "board": 404, "admin": 404})],
    "api.openapi": [("GET", "/api/v1/openapi.json", everyone(200))],
    "api.events": [("GET", "/api/v1/events", {"anon": 401, **dict.fromkeys(ROLES[1:], 200)})],
    "api.event": [("GET", "/api/v1/events/{slug}", {"anon": 401, **dict.fromkeys(ROLES[1:], 200)}),
                  ("GET", "/api/v1/events/no-such-call", {"anon": 401, **dict.fromkeys(ROLES[1:], 404)})],
}

# Scoring (Art. 15.5). The call is open and the caller has declared nothing: a WCOC member is sent to the
# declaration, and the ranking shows them why it is not open to them yet. Bidders never see a score.
REVIEWERS = ("wcoc", "board", "admin")
MATRIX.update({
    "scoring.index": [("GET", "/scoring/", only(REVIEWERS))],
    "scoring.admin_index": [("GET", "/admin/scoring", only(REVIEWERS))],
    "scoring.conflicts": [("GET", "/events/{slug}/scoring/conflicts", only(("wcoc",))),
                          ("POST", "/events/{slug}/scoring/conflicts", only(("wcoc",), 422)),
                          ("GET", "/events/no-such-call/scoring/conflicts", only(("wcoc",), 404))],
    "scoring.my_scorecards": [("GET", "/events/{slug}/scoring/", only(("wcoc",), 302))],
    "scoring.scorecard": [("GET", "/events/{slug}/scoring/bids/999999", only(("wcoc",), 404)),
                          ("POST", "/events/{slug}/scoring/bids/999999", only(("wcoc",), 404))],
    "scoring.reopen": [("POST", "/events/{slug}/scoring/bids/999999/reopen", only(("wcoc",), 404))],
    "scoring.ranking": [("GET", "/events/{slug}/scoring/ranking", only(REVIEWERS)),
                        ("GET", "/events/no-such-call/scoring/ranking", only(REVIEWERS, 404))],
    "scoring.export_csv": [("GET", "/events/{slug}/scoring/scores.csv",
                            {"anon": 302, "bidder": 403, "wcoc": 302, "board": 403, "admin": 200})],
    "api.ranking": [("GET", "/api/v1/events/{slug}/ranking",
                             {"anon": 401, "bidder": 403, "wcoc": 403, "board": 200, "admin": 200}),
                            ("GET", "/api/v1/events/no-such-call/ranking",
                             {"anon": 401, "bidder": 403, "wcoc": 404, "board": 404, "admin": 404})],
    "scoring.weights": [("GET", "/events/{slug}/scoring/weights", only(("admin",))),
                        ("POST", "/events/{slug}/scoring/weights", only(("admin",), 422))],
    "scoring.admission": [("GET", "/events/{slug}/scoring/admission", only(("admin",)))],
    "scoring.admit": [("POST", "/events/{slug}/scoring/bids/999999/admit", only(("admin",), 404))],
})

# Contracts (Art. 15.6). {contract} is an issued contract of another bidder's selected bid, {milestone} and
# {payment} a milestone of it and a payment recorded against it; {own_contract} belongs to the caller when the
# caller is a bidder (else to another bidder), {own_milestone} is one of its milestones. The organizer sees its
# own contract; any other bidder, the WCOC and the Board get 404, never 403.
OWNER_AND_ADMIN = {"anon": 302, "bidder": 200, "wcoc": 404, "board": 404, "admin": 200}
ADMIN_ONLY_404 = {"anon": 302, "bidder": 404, "wcoc": 404, "board": 404, "admin": 200}
MATRIX.update({
    "contracts.index": [("GET", "/contracts/", only(("admin",)))],
    "contracts.mine": [("GET", "/my/contracts", only(("bidder",)))],
    "contracts.for_bid": [("GET", "/bids/{own_contract_bid}/contract", {**OWNER_AND_ADMIN, "bidder": 302,
                                                                         "admin": 302}),
                          ("GET", "/bids/{other_bid}/contract", {**ADMIN_ONLY_404, "admin": 302})],
    # a draft of the practice call is not selected: the secretariat is told why no contract can be made
    "contracts.new": [("GET", "/bids/{other_bid}/contract/new", only(("admin",), 409)),
                      ("POST", "/bids/{other_bid}/contract/new", only(("admin",), 302))],
    "contracts.view": [("GET", "/contracts/{contract}", ADMIN_ONLY_404),
                       ("GET", "/contracts/{own_contract}", OWNER_AND_ADMIN),
                       ("GET", "/contracts/{own_contract}?as_of=2015-13-01", {**OWNER_AND_ADMIN, "bidder": 400,
                                                                               "admin": 400}),
                       ("GET", "/contracts/999999", {**ADMIN_ONLY_404, "admin": 404})],
    "contracts.preview": [("GET", "/contracts/{own_contract}/preview", OWNER_AND_ADMIN),
                          ("GET", "/contracts/{contract}/preview", ADMIN_ONLY_404)],
    "contracts.pdf": [("GET", "/contracts/{own_contract}/contract.pdf", OWNER_AND_ADMIN)],
    "contracts.signed_pdf": [("GET", "/contracts/{own_contract}/signed.pdf", {**OWNER_AND_ADMIN, "bidder": 404,
                                                                              "admin": 404})],
    "contracts.issue": [("GET", "/contracts/{contract}/issue", only(("admin",), 302)),
                        ("POST", "/contracts/{contract}/issue", only(("admin",), 302))],
    "contracts.discard": [("POST", "/contracts/{contract}/discard", only(("admin",), 302))],
    "contracts.sign": [("POST", "/contracts/{contract}/sign", only(("admin",), 422))],
    "contracts.correct": [("GET", "/contracts/{contract}/correct", only(("admin",))),
                          ("POST", "/contracts/{contract}/correct", only(("admin",), 422))],
    "contracts.milestone": [("GET", "/contracts/{own_contract}/milestones/{own_milestone}", OWNER_AND_ADMIN),
                            ("GET", "/contracts/{contract}/milestones/{milestone}", ADMIN_ONLY_404)],
    "contracts.record_payment": [("POST", "/contracts/{contract}/milestones/{milestone}/payments",
                                  only(("admin",), 422))],
    "contracts.reverse_payment": [("POST", "/contracts/{contract}/payments/{payment}/reverse",
                                   only(("admin",), 422))],  # no reason given: the page comes back
    "contracts.result": [("GET", "/contracts/{contract}/result", only(("admin",))),
                         ("POST", "/contracts/{contract}/result", only(("admin",), 422))],
    "contracts.deduction": [("POST", "/contracts/{contract}/deductions", only(("admin",), 422))],
    "contracts.deduction_return": [("POST", "/contracts/{contract}/deductions/999999/return",
                                    only(("admin",), 422))],  # no day given: the page comes back
    "contracts.calendar_link": [("POST", "/contracts/{own_contract}/calendar-link", OWNER_AND_ADMIN),
                                ("POST", "/contracts/{contract}/calendar-link", ADMIN_ONLY_404)],
    # the feed has no login: only its token opens it (tests/contracts checks the right token)
    "contracts.calendar": [("GET", "/contracts/{contract}/calendar.ics", everyone(404)),
                           ("GET", "/contracts/{contract}/calendar.ics?token=wrong", everyone(404))],
    "contracts.export_milestones": [("GET", "/contracts/{own_contract}/milestones.csv", OWNER_AND_ADMIN),
                                    ("GET", "/contracts/{contract}/milestones.csv", ADMIN_ONLY_404)],
    "contracts.export_payments": [("GET", "/contracts/{own_contract}/payments.csv", OWNER_AND_ADMIN),
                                  ("GET", "/contracts/{contract}/payments.csv", ADMIN_ONLY_404)],
    "api.contract": [("GET", "/api/v1/contracts/{own_contract}", {**OWNER_AND_ADMIN, "anon": 401}),
                               ("GET", "/api/v1/contracts/{contract}", {**ADMIN_ONLY_404, "anon": 401})],
    "api.contract_milestones": [
        ("GET", "/api/v1/contracts/{own_contract}/milestones?as_of=2015-06-30", {**OWNER_AND_ADMIN, "anon": 401}),
        ("GET", "/api/v1/contracts/{own_contract}/milestones?as_of=30.06.2015",
         {**OWNER_AND_ADMIN, "anon": 401, "bidder": 400, "admin": 400}),
        # present and empty is not the date the OpenAPI document declares (leaving it out means today)
        ("GET", "/api/v1/contracts/{own_contract}/milestones?as_of=",
         {**OWNER_AND_ADMIN, "anon": 401, "bidder": 400, "admin": 400}),
        ("GET", "/api/v1/contracts/{contract}/milestones", {**ADMIN_ONLY_404, "anon": 401})],
})
