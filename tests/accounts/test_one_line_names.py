"""Issue 35: a name is one line, through the registration page and through every path that stores one (the
service, so `flask users create` too): a line break stored in a name would land in every message that greets it."""

from __future__ import annotations

from html import unescape

from sqlalchemy import func, select

from accounts import services
from accounts.models import User
from core.db import db, utcnow
from operations.outbox import OutboxMessage

HOSTILE = "Eve\r\nBcc: evil@example.org"
QUOTED = "Eve\\r\\nBcc: evil@example.org"
FORM_MESSAGE = f"Write this on one line, without line breaks or control characters (you entered “{QUOTED}”)."
GOOD = {"organisation": "Ukrainian Chess Federation", "applicant_type": "federation", "federation": "UKR",
        "name": HOSTILE, "email": "eve@example.org", "password": "a long pass phrase 42",
        "confirm": "a long pass phrase 42"}


def test_registering_with_a_line_break_in_the_name_is_refused_and_stores_nothing(client, app):
    response = client.post("/register", data=GOOD)
    assert response.status_code == 422
    page = unescape(response.get_data(as_text=True))
    assert FORM_MESSAGE in page
    assert 'value="Ukrainian Chess Federation"' in page and 'value="eve@example.org"' in page
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(User)) == 0
        assert db.session.scalar(select(func.count()).select_from(OutboxMessage)) == 0


def test_the_service_refuses_a_name_or_organisation_with_a_line_break(app):
    with app.app_context():
        for field, kwargs in (("name", {"name": HOSTILE}), ("organisation", {"name": "Eve", "organisation": HOSTILE})):
            try:
                services.register_bidder(email="eve@example.org", password="a long pass phrase 42",
                                         organisation=kwargs.get("organisation", "Federation"), name=kwargs["name"],
                                         applicant_type="federation", federation="UKR", now=utcnow())
            except services.AccountError as exc:
                assert exc.field == field
                assert str(exc) == (f"{field.capitalize()}: write it on one line, without line breaks or control "
                                    f"characters (you entered “{QUOTED}”).")
            else:
                raise AssertionError(f"a {field} with a line break was registered")
        assert db.session.scalar(select(func.count()).select_from(User)) == 0
        db.session.rollback()


def test_the_command_line_does_not_store_a_name_with_a_line_break(app, runner):
    result = runner.invoke(args=["users", "create", "eve@example.org", "--role", "admin", "--name", HOSTILE])
    assert result.exit_code != 0
    assert (f"Name: write it on one line, without line breaks or control characters (you entered “{QUOTED}”)."
            in result.output)
    with app.app_context():
        assert db.session.scalars(select(User).where(User.email == "eve@example.org")).first() is None
