"""BaseForm: every form strips surrounding whitespace and carries CSRF (Flask-WTF), its hidden token without an id;
no field takes a NUL, and no single-line text field a line break or a control character."""

from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import FieldList, FormField, HiddenField, PasswordField, StringField, TextAreaField
from wtforms.csrf.core import CSRFTokenField
from wtforms.fields.choices import SelectChoice
from wtforms.validators import StopValidation

from core.validators import one_line_problem


def strip(value):
    return value.strip() if isinstance(value, str) else value


def choices(pairs) -> list[SelectChoice]:
    """(value, label) pairs as WTForms 3.3 wants select options (tuples are deprecated)."""
    return [SelectChoice(value, label) for value, label in pairs]


class Present:
    """Required, after the BaseForm strip: an empty or whitespace-only value gets `message`; a value the field
    could not read keeps the field's own message (DataRequired would replace it)."""

    field_flags = {"required": True}

    def __init__(self, message: str):
        self.message = message

    def __call__(self, form, field):
        if field.process_errors:
            raise StopValidation()
        if field.data is None or (isinstance(field.data, str) and not field.data.strip()):
            raise StopValidation(self.message)


NUL_MESSAGE = "Remove the invisible control character (NUL) from this field; it cannot be stored."


def _text_fields(form):
    for field in form:
        if isinstance(field, FieldList):
            for entry in field:
                yield from (_text_fields(entry.form) if isinstance(entry, FormField) else [entry])
        elif isinstance(field, FormField):
            yield from _text_fields(field.form)
        else:
            yield field


def is_single_line(field) -> bool:
    """A text field a person types one line into: every StringField but a text area, a password (never quoted back
    on a page) and a hidden field (written by the page, not typed), whose value is text (an amount field's is a
    Decimal, and its own parser refuses what is not an amount). Raises nothing."""
    return (isinstance(field, StringField) and not isinstance(field, (TextAreaField, PasswordField, HiddenField))
            and (field.data is None or isinstance(field.data, str)))


class BaseForm(FlaskForm):
    class Meta(FlaskForm.Meta):
        def bind_field(self, form, unbound_field, options):
            if issubclass(unbound_field.field_class, (FieldList, FormField)):
                return unbound_field.bind(form=form, **options)  # their inner fields strip for themselves
            filters = list(unbound_field.kwargs.get("filters") or [])
            if strip not in filters:
                filters.insert(0, strip)
            return unbound_field.bind(form=form, filters=filters, **options)

        def render_field(self, field, render_kw):
            # The CSRF token is a hidden input no label points to: it is rendered without an id, so a page with two
            # forms (or one form shown twice) does not repeat id="csrf_token" (an HTML error).
            if isinstance(field, CSRFTokenField):
                render_kw = {"id": False, **render_kw}
            return super().render_field(field, render_kw)

    def fill_labels(self, fill) -> None:
        """Pass every field's label and description through `fill` (text -> text), for labels written once in
        code with placeholders a call fills (events.regulation.Regulation.cite_text). Raises what `fill` does."""
        for f in self:
            if isinstance(f.description, str):
                f.description = fill(f.description)
            f.label.text = fill(f.label.text)

    def validate(self, extra_validators=None) -> bool:
        """The fields' own checks, then two for every form, so that a new form has them by construction: no NUL
        character in any field (PostgreSQL cannot store it), and no line break or control character in a
        single-line text field (is_single_line: core.validators.one_line_problem)."""
        valid = super().validate(extra_validators)
        for field in _text_fields(self):
            raw = field.raw_data[0] if field.raw_data else None
            if isinstance(raw, str) and "\x00" in raw:
                field.errors = [*field.errors, NUL_MESSAGE]
                valid = False
            elif isinstance(raw, str) and is_single_line(field):
                # What is kept once surrounding whitespace is stripped (a trailing newline is harmless).
                problem = one_line_problem(field.data if isinstance(field.data, str) else raw.strip())
                if problem:
                    field.errors = [*field.errors, problem]
                    valid = False
        return valid

    def error_list(self) -> list[tuple[str, str, str]]:
        """(field id, label, message) for the summary at the top of the form."""
        out = []
        for name, errors in self.errors.items():
            field = self[name] if name in self._fields else None
            for index, message in enumerate(errors if isinstance(errors, list) else [errors]):
                if isinstance(message, dict) and field is not None:  # FieldList of FormFields: link to the line's field
                    entry = field.entries[index].form
                    for sub_name, sub in message.items():
                        sub_field = entry[sub_name]
                        for m in sub if isinstance(sub, list) else [sub]:
                            out.append((sub_field.id, f"{field.label.text}, line {index + 1}: {sub_field.label.text}",
                                        str(m)))
                    continue
                out.append((field.id if field else name, field.label.text if field else name, str(message)))
        return out
