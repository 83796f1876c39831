"""The bid's section forms. Drafts save with type and format checks only; the submission rules live in
bids/rules.py and are shown beside the fields as the compliance report."""

from __future__ import annotations

import re

from flask_wtf.file import FileField
from wtforms import (
    BooleanField,
    DateField,
    EmailField,
    FieldList,
    Form,
    FormField,
    HiddenField,
    IntegerField,
    RadioField,
    SelectField,
    StringField,
    TextAreaField,
)
from wtforms.validators import DataRequired, Email, Length, NumberRange, Optional, ValidationError

from bids.consultation import CONSULTATION, CONSULTATION_LABELS, check_acceptance
from bids.data import EVALUATION_FIELDS, EVALUATION_MAX_CHARS, TEXT_MAX_CHARS
from bids.lifecycle import LATE_ADMISSION_NEEDS_REASON
from bids.models import DOCUMENT_KINDS
from core.federations import country_choices, federation_choices
from core.forms import BaseForm, choices, strip
from core.validators import NotADateError, parse_amount, parse_day

TEXT = [Optional(), Length(max=TEXT_MAX_CHARS, message=f"Keep this under {TEXT_MAX_CHARS} characters.")]


class AmountField(StringField):
    """Euros as typed; parsed with core.validators.parse_amount. The typed text is shown again when it is wrong."""

    def process_formdata(self, valuelist):
        self.raw = valuelist[0] if valuelist else ""
        if not self.raw.strip():
            self.data = None
            return
        try:
            self.data = parse_amount(self.raw)
        except ValueError as exc:
            self.data = None
            raise ValueError(str(exc)) from None

    def _value(self):
        if self.raw_data:
            return self.raw_data[0]
        return "" if self.data is None else str(self.data)


class DayField(DateField):
    """A date (YYYY-MM-DD, read by core.validators.parse_day) with a message that repeats what was typed."""

    def process_formdata(self, valuelist):
        raw = valuelist[0].strip() if valuelist else ""
        if not raw:
            self.data = None
            return
        try:
            self.data = parse_day(raw)
        except NotADateError:
            self.data = None
            raise ValueError(f"Enter a real date as YYYY-MM-DD, for example 2015-10-12 (you entered '{raw[:40]}')."
                             ) from None


class WholeNumberField(IntegerField):
    def process_formdata(self, valuelist):
        raw = valuelist[0].strip() if valuelist else ""
        if not raw:
            self.data = None
            return
        if not raw.isdigit() or len(raw) > 6:
            self.data = None
            raise ValueError(f"Enter a whole number, for example 2 (you entered '{raw[:40]}').")
        self.data = int(raw)


class SectionForm(BaseForm):
    """A section of the bid. Labels and descriptions cite through placeholders ("{cite:applicant}"), filled
    from the call's regulation (`reg`, events.regulation.Regulation.cite_text) so no article is written here."""

    revision = HiddenField()

    def __init__(self, *args, reg=None, **kwargs):
        super().__init__(*args, **kwargs)
        if reg is not None:
            self.fill_labels(reg.cite_text)


class ApplicantForm(SectionForm):
    applicant_type = RadioField("The applicant is", choices=choices([("federation", "A FIDE member federation"),
                                                                     ("sponsor", "A sponsor")]),
                                validators=[Optional()],
                                description="{cite:applicant}: any member federation or sponsor.")
    applicant_name = StringField("Legal name of the applicant", validators=TEXT)
    host_federation = SelectField("Host federation", validators=[Optional()],
                                  description="The FIDE federation of the country where the match would be held; "
                                              "FIDE consults it about a sponsor's bid ({cite:consultation}).")
    contact_name = StringField("Contact person", validators=TEXT)
    contact_email = EmailField("Contact email", validators=[Optional(), Email("Enter a valid email address, like "
                                                                             "name@example.org."), Length(max=254)])
    ioc_conflict_free = BooleanField(
        "Neither the applicant nor any proposed sponsor is in conflict with the regulations of the International "
        "Olympic Committee", description="{cite:ioc} and {cite:applicant}.")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.host_federation.choices = choices([("", "Choose…"), *federation_choices()])


class DatesVenueForm(SectionForm):
    opening_date = DayField("Opening ceremony", validators=[Optional()])
    closing_date = DayField("Closing ceremony", validators=[Optional()])
    venue_name = StringField("Venue", validators=TEXT, description="The playing hall ({cite:venue}).")
    venue_city = StringField("City", validators=TEXT)
    venue_country = SelectField("Country", validators=[Optional()])

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.venue_country.choices = choices([("", "Choose…"), *country_choices()])


class MoneyForm(SectionForm):
    prize_fund_eur = AmountField("Prize fund (euros)")
    fide_contribution_eur = AmountField("Contribution to FIDE (euros)")
    amounts_net_of_taxes = BooleanField("Both amounts are net of all applicable local taxes")


class CommitmentsForm(SectionForm):
    commits_fide_obligations = BooleanField("We commit to cover all financial obligations to FIDE")
    commits_organisational_costs = BooleanField("We commit to cover all organisational costs")
    accepts_regulations = BooleanField("We accept the regulations of the match without any reservations")


MAX_ROOM_RATES = 20
ROOM_RATES_FULL = (f"A bid lists at most {MAX_ROOM_RATES} room rates (Gambit's limit, to keep the bid readable; "
                   "the regulations set none): group similar rooms in one line ({entered} lines were sent).")


class RoomRateForm(Form):
    room_type = StringField("Room type", validators=TEXT, filters=[strip])
    eur_per_night = AmountField("Euros per night, meals included")


class HotelForm(SectionForm):
    hotel_name = StringField("Name of the official hotel", validators=TEXT,
                             description="Optional: \"name if possible\" ({art:hotel.article}).")
    hotel_stars = WholeNumberField("Category (stars)", validators=[
        Optional(), NumberRange(1, 5, "A hotel category is a whole number of stars from 1 to 5.")])
    room_rates = FieldList(FormField(RoomRateForm), "Special room rates for visitors, meals included", min_entries=1,
                           max_entries=MAX_ROOM_RATES)

    def process(self, formdata=None, obj=None, data=None, extra_filters=None, **kwargs):
        # FieldList keeps the first max_entries rows and drops the rest unseen: count what was posted, so a
        # longer list is refused with a message rather than cut short.
        formdata = self.meta.wrap_formdata(self, formdata)
        self.posted_rates = len({m.group(1) for key in (formdata or {})
                                 if (m := re.match(r"room_rates-(\d+)-", key))})
        super().process(formdata, obj, data=data, extra_filters=extra_filters, **kwargs)

    @property
    def rates_full(self) -> bool:
        return len(self.room_rates.entries) >= MAX_ROOM_RATES

    def validate_room_rates(self, field):
        if self.posted_rates > MAX_ROOM_RATES:
            raise ValidationError(ROOM_RATES_FULL.format(entered=self.posted_rates))


class InspectionForm(SectionForm):
    wcoc_inspectors_invited = WholeNumberField("WCOC members invited to inspect the venue",
                                               validators=[Optional(), NumberRange(0, 50, "Enter 0 to 50.")])
    inspection_expenses_covered = BooleanField("All their expenses (travel, hotel and every other) are paid by the "
                                               "bidder")


class GuaranteeForm(SectionForm):
    guarantee_offered = RadioField("Do you offer a bank guarantee?", validators=[Optional()],
                                   choices=choices([("yes", "Yes"), ("no", "No")]))
    guarantee_bank = StringField("Bank", validators=TEXT)
    guarantee_amount_eur = AmountField("Amount guaranteed (euros)")
    guarantee_valid_until = DayField("Valid until", validators=[Optional()])


class SignatureForm(SectionForm):
    signatory_name = StringField("Name of the signatory", validators=TEXT)
    signatory_position = StringField("Position of the signatory", validators=TEXT)
    signed_on = DayField("Date signed", validators=[Optional()])


class EvaluationForm(SectionForm):
    pass


for _f in EVALUATION_FIELDS:
    setattr(EvaluationForm, f"eval_{_f.key}", TextAreaField(
        f"{_f.label} ({{criterion:{_f.criterion}}})",
        validators=[Optional(), Length(max=EVALUATION_MAX_CHARS,
                                       message=f"Keep this under {EVALUATION_MAX_CHARS:,} characters; attach a PDF "
                                               "for more.")]))

SECTION_FORMS = {
    "applicant": ApplicantForm, "dates_venue": DatesVenueForm, "money": MoneyForm,
    "commitments": CommitmentsForm, "hotel": HotelForm, "inspection": InspectionForm,
    "guarantee": GuaranteeForm, "signature": SignatureForm, "evaluation": EvaluationForm,
}

# Which documents each section's page offers to upload.
SECTION_DOCUMENTS = {"guarantee": ["guarantee"], "signature": ["signed_letter"], "evaluation": ["supporting"]}


class DocumentForm(BaseForm):
    kind = HiddenField(validators=[DataRequired()])
    file = FileField("PDF file")

    def validate_kind(self, field):
        if field.data not in DOCUMENT_KINDS:
            raise ValidationError("Unknown kind of document.")


class RejectForm(BaseForm):
    """`rejection` is how the call cites the right to reject (reg.citation("rejection")), for the message."""

    reason = TextAreaField("Reason (the bidder is told)", validators=[
        DataRequired("Give the reason for the rejection; the bidder is told."),
        Length(max=5000, message="Keep the reason under 5,000 characters.")])

    def __init__(self, *args, rejection: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        if rejection:
            # A new validator, not the class's shared one: another call may cite another article.
            self.reason.validators = [DataRequired(f"Give the reason for the rejection; the bidder is told "
                                                   f"({rejection})."), *self.reason.validators[1:]]


class LateAdmissionForm(BaseForm):
    reason = TextAreaField("Why the bid is admitted after the deadline (kept with the bid, shown to the WCOC)",
                           validators=[DataRequired(LATE_ADMISSION_NEEDS_REASON),
                                       Length(max=5000, message="Keep the reason under 5,000 characters.")])


class ConsultationForm(BaseForm):
    """The consultation of the host federation on a sponsor's bid ({cite:consultation}); offered on a sponsor's
    bid only. The labels cite through placeholders filled from the call (`reg`)."""

    outcome = RadioField("The host federation's answer", validators=[DataRequired("Choose an answer.")],
                         choices=choices([(c, CONSULTATION_LABELS[c]) for c in CONSULTATION]))
    fide_accepts = BooleanField(
        "FIDE accepts the sponsor's proposal nonetheless",
        description="{cite:consultation}: \"If the federation refuses or is unable to co-operate, FIDE may still "
                    "accept a proposal from a potential sponsor.\" Tick only after a refusal or inability; until "
                    "FIDE accepts it, the bid cannot be selected.")
    note = TextAreaField("Note", validators=[Optional(),
                                             Length(max=5000, message="Keep the note under 5,000 characters.")])

    def __init__(self, *args, reg=None, **kwargs):
        super().__init__(*args, **kwargs)
        if reg is not None:
            self.fill_labels(reg.cite_text)

    def validate_fide_accepts(self, field):
        refused = check_acceptance(self.outcome.data or "", bool(field.data))
        if refused:
            raise ValidationError(refused)


class PaperBidForm(BaseForm):
    owner = SelectField("Bidder account", validators=[Optional()],
                        description="The federation's or sponsor's account, if it has one; otherwise the bid stays "
                                    "with you and you can fill it in on its behalf.")
