"""Issue 35: every single-line text field of every form (core.forms.is_single_line: a StringField that is not a
text area, a password or a hidden field) refuses a line break or a control character, by construction of
core.forms.BaseForm, with a message that quotes what was typed."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from werkzeug.datastructures import MultiDict

from core.forms import BaseForm, _text_fields, is_single_line
from core.validators import one_line_problem

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "Eve\r\nBcc: evil@example.org"
MESSAGE = ("Write this on one line, without line breaks or control characters "
           "(you entered “Eve\\r\\nBcc: evil@example.org”).")


def _form_classes() -> list[type[BaseForm]]:
    """Every subclass of BaseForm in the packages' forms modules (each package with a forms.py is imported)."""
    for path in sorted(ROOT.glob("*/forms.py")):
        importlib.import_module(f"{path.parent.name}.forms")
    found, todo = [], list(BaseForm.__subclasses__())
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return sorted({c for c in found if c.__module__.split(".")[0] != "tests"},
                  key=lambda c: (c.__module__, c.__qualname__))


def _single_line_fields(app, cls) -> list[str]:
    with app.test_request_context(method="POST", data={}):
        return [f.name for f in _text_fields(cls()) if is_single_line(f)]


def test_the_walk_finds_the_forms_and_fields_that_take_names(app):
    fields = {(c.__name__, name) for c in _form_classes() for name in _single_line_fields(app, c)}
    # Not the whole list (a new field joins the walk by itself), but the ones the issue names must be in it.
    assert {("RegistrationForm", "name"), ("RegistrationForm", "organisation"), ("UserForm", "name"),
            ("ApplicantForm", "contact_name"), ("HotelForm", "room_rates-0-room_type"),
            ("PaymentForm", "reference")} <= fields
    assert not {(c, n) for c, n in fields if n in ("password", "csrf_token", "revision")}


def test_every_single_line_field_of_every_form_refuses_a_line_break(app):
    checked, wrong = 0, []
    for cls in _form_classes():
        for name in _single_line_fields(app, cls):
            with app.test_request_context(method="POST", data=MultiDict({name: HOSTILE})):
                form = cls()
                for f in _text_fields(form):
                    if getattr(f, "choices", ()) is None:  # a select its view fills (a call's bids, payments)
                        f.choices = []
                assert not form.validate()
                [field] = [f for f in _text_fields(form) if f.name == name]
                if MESSAGE not in field.errors:
                    wrong.append(f"{cls.__module__}.{cls.__name__}.{name}: {field.errors}")
                checked += 1
    assert checked >= 20 and not wrong, "\n".join(wrong)


def test_a_text_area_keeps_its_line_breaks(app):
    from bids.forms import RejectForm

    with app.test_request_context(method="POST", data={"reason": "First line.\r\nSecond line."}):
        form = RejectForm()
        form.validate()
        assert not form.reason.errors


@pytest.mark.parametrize(("typed", "quoted"), [
    ("Eve\nBcc: x", "Eve\\nBcc: x"), ("tab\there", "tab\\there"), ("esc\x1b[31m", "esc\\x1b[31m"),
    ("next\x85line", "next\\x85line"), ("line\u2028sep", "line\\u2028sep"), ("para\u2029sep", "para\\u2029sep"),
])
def test_a_one_line_text_refuses_each_kind_of_break_and_quotes_it(typed, quoted):
    assert one_line_problem(typed) == ("Write this on one line, without line breaks or control characters "
                                       f"(you entered “{quoted}”).")


@pytest.mark.parametrize("typed", ["Oksana Example", "Žofie Nováková", "Федерація", "O’Brien & Co.", ""])
def test_a_one_line_text_takes_any_printable_name(typed):
    assert one_line_problem(typed) is None


def test_a_long_entry_is_quoted_cut_short():
    problem = one_line_problem("x" * 300 + "\n")
    assert problem is not None and "x" * 80 + "…”" in problem and "x" * 81 not in problem
