"""Issue 25, "not yet tried": header injection through every field a person types that reaches an email.

What reaches a message (every message goes through operations.outbox.queue; operations.outbox.build sets From from the
settings, To from the recipients, Subject, Date, Message-ID, Auto-Submitted):
* registration: the email (To), the contact name and the organisation (body; a name is one line, so refused);
* a rejection: the bid's contact email (To), its contact name (body), the rejection reason (body), the call's title
  (Subject; from the call's file, loaded by `flask events load`);
* the decision's notices and the payment reminders use the same contact fields and the call's title.
Each is given CR/LF followed by "Bcc: x@evil.example" through the form that takes it; the message is delivered to
the real SMTP server (the smtp fixture), and the envelope and the parsed headers are checked: no Bcc, no recipient
but the expected ones, and the hostile text only ever in the body.
"""

from __future__ import annotations

import pytest
from sqlalchemy import select

from core.db import db
from tests.conftest import DEMO_PASSWORD
from tests.security.hostile import ADMIN_EMAIL, World

EVIL = "x@evil.example"
HOSTILE = f"Eve\r\nBcc: {EVIL}\r\nX-Injected: yes"
HEADERS = {"From", "To", "Subject", "Date", "Message-ID", "Auto-Submitted", "MIME-Version", "Content-Type",
           "Content-Transfer-Encoding"}


@pytest.fixture
def envelopes(smtp):
    """The smtp fixture's inbox, also recording each message's envelope recipients (what the server delivers to,
    whatever the headers say)."""
    import email
    import email.policy

    smtp.envelopes = []

    async def handle_DATA(server, session, envelope):
        smtp.messages.append(email.message_from_bytes(envelope.content, policy=email.policy.default))
        smtp.envelopes.append(list(envelope.rcpt_tos))
        return "250 OK"

    smtp.handle_DATA = handle_DATA
    return smtp


def _clean(inbox, expected: set[str]) -> None:
    messages = inbox.deliver()
    assert messages, "no message was delivered"
    for message, rcpts in zip(messages, inbox.envelopes, strict=True):
        assert set(rcpts) <= expected, rcpts
        assert EVIL not in rcpts
        assert set(message.keys()) <= HEADERS, message.keys()
        assert message["Bcc"] is None and message["X-Injected"] is None
        for name, value in message.items():
            assert "\n" not in str(value) and "\r" not in str(value), (name, value)
            assert EVIL not in str(value) or name == "Subject", (name, value)


def test_registration_fields_reach_no_header(client, app, envelopes):
    response = client.post("/register", data={
        "organisation": HOSTILE, "applicant_type": "federation", "federation": "UKR", "name": HOSTILE,
        "email": f"eve@example.org\r\nBcc: {EVIL}", "password": DEMO_PASSWORD, "confirm": DEMO_PASSWORD})
    assert response.status_code == 422  # an address with a line break is not an address
    with app.app_context():
        from operations.outbox import OutboxMessage

        assert db.session.scalars(select(OutboxMessage)).all() == []
    # A name or an organisation is one line (issue 35): refused on the form, nothing written to the outbox.
    response = client.post("/register", data={
        "organisation": HOSTILE, "applicant_type": "federation", "federation": "UKR", "name": HOSTILE,
        "email": "eve@example.org", "password": DEMO_PASSWORD, "confirm": DEMO_PASSWORD})
    assert response.status_code == 422
    with app.app_context():
        from operations.outbox import OutboxMessage

        assert db.session.scalars(select(OutboxMessage)).all() == []


def test_the_contact_fields_of_a_bid_are_refused_or_kept_out_of_the_headers(app, make, event, practice):
    """The bid form: a contact email or a contact name with a line break is refused (kept on the page, not
    saved)."""
    world = World(app, make, event, practice)
    bid_id = world.draft_bid()
    from tests.security.hostile import OWNER_EMAIL

    owner = world.client(OWNER_EMAIL)
    from tests.bids.web import revision

    data = {"revision": revision(owner, bid_id, "applicant"), "applicant_type": "federation",
            "applicant_name": "Ukrainian Chess Federation", "host_federation": "UKR", "contact_name": HOSTILE,
            "contact_email": f"c@example.org\r\nBcc: {EVIL}"}
    response = owner.post(f"/bids/{bid_id}/edit/applicant", data=data)
    assert response.status_code == 422
    with app.app_context():
        from bids.models import Bid

        assert EVIL not in (db.session.get(Bid, bid_id).contact_email or "")


def test_a_rejection_with_hostile_fields_reaches_only_its_recipients(app, make, event, practice, envelopes):
    from bids.models import Bid

    world = World(app, make, event, practice)
    bids = world.scoring_call()
    with app.app_context():
        bid = db.session.get(Bid, bids[0])
        # What a bidder could have saved through the form (above): a hostile name, a valid address.
        bid.contact_name, bid.contact_email = HOSTILE, "contact@example.org"
        owner = bid.owner.email
        db.session.commit()
    admin = world.client(ADMIN_EMAIL)
    world.admin_declared("")
    response = admin.post(f"/bids/{bids[0]}/reject", data={"reason": HOSTILE})
    assert response.status_code == 302, response.status_code
    _clean(envelopes, {"contact@example.org", owner})
    assert "Bcc: x@evil.example" in envelopes.messages[0].get_content()  # in the body, as typed


def test_a_call_title_with_a_line_break_reaches_no_header(app, make, runner, tmp_path, envelopes, reg):
    """The call's title comes from its file (`flask events load`): a line break in it is refused by the loader or
    folded into the one-line subject."""
    from events.regulation import default_event_file

    text = default_event_file().read_text(encoding="utf-8")
    title_line = next(line for line in text.splitlines() if line.startswith("title"))
    hostile = text.replace(title_line, 'title = "Championship\\r\\nBcc: x@evil.example"', 1)
    hostile = hostile.replace('slug = "fwwcm-2015"', 'slug = "fwwcm-hostile"', 1)
    path = tmp_path / "hostile.toml"
    path.write_text(hostile, encoding="utf-8")
    result = runner.invoke(args=["events", "load", str(path)])
    if result.exit_code != 0:
        assert "Traceback" not in result.output
        return
    from core.db import utcnow
    from events.models import Event
    from operations.outbox import queue

    with app.app_context():
        event = db.session.scalars(select(Event).where(Event.slug == "fwwcm-hostile")).one()
        queue("someone@example.org", f"Your bid for {event.title} was rejected", "body", kind="test", now=utcnow())
        db.session.commit()
    _clean(envelopes, {"someone@example.org"})
