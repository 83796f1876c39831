"""Issue 14 item 3: the field macro marks a field invalid only when it has an error (a screen reader announces
"invalid entry" for aria-invalid="None" too), and points it at its error message."""

import re

from flask import render_template_string


def test_a_field_without_error_has_no_aria_invalid_and_no_none_attribute(client):
    html = client.get("/login").get_data(as_text=True)
    assert "aria-invalid" not in html
    assert not re.search(r'="None"', html)


def test_a_field_with_an_error_is_invalid_and_described_by_its_error(client):
    html = client.post("/login", data={"email": "", "password": ""}).get_data(as_text=True)
    email = re.search(r"<input[^>]*id=\"email\"[^>]*>", html).group(0)
    assert 'aria-invalid="true"' in email
    assert 'aria-describedby="email-err"' in email
    assert 'id="email-err"' in html
    assert not re.search(r'="None"', html)


def test_a_checkbox_and_a_radio_group_carry_no_empty_aria_attributes(app):
    from wtforms import BooleanField, RadioField

    from core.forms import BaseForm, choices

    class Form(BaseForm):
        agree = BooleanField("Agree")
        choice = RadioField("Choice", choices=choices([("a", "A"), ("b", "B")]))

    with app.test_request_context():
        form = Form(meta={"csrf": False})
        html = render_template_string('{% from "_macros/forms.html" import field %}{{ field(f.agree) }}'
                                      '{{ field(f.choice) }}', f=form)
    assert "aria-invalid" not in html and "aria-describedby" not in html and "None" not in html


def test_the_csrf_token_of_each_form_has_no_id_so_two_forms_on_a_page_repeat_none(app):
    """A page with two forms (the account page: a new token and the password) printed id="csrf_token" twice, an
    HTML error; the hidden token, which no label points to, has no id. An id asked for is still given."""
    from core.forms import BaseForm

    with app.test_request_context():
        first, second = BaseForm(meta={"csrf": True}), BaseForm(meta={"csrf": True})
        html = render_template_string("{{ a.csrf_token }}{{ b.csrf_token() }}", a=first, b=second)
        asked = str(first.csrf_token(id="token-one"))
    tokens = re.findall(r"<input[^>]*>", html)
    assert len(tokens) == 2 and all(re.fullmatch(r'<input name="csrf_token" type="hidden" value="[^"]+">', t)
                                    for t in tokens), tokens
    assert asked.startswith('<input id="token-one" name="csrf_token" type="hidden"')
