"""The forms of the contract pages. The checks of substance (dates the contract must set, overpayments, the
match result) are in contracts/rules/ and come back as field errors."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from datetime import date

from flask_wtf.file import FileField
from wtforms import BooleanField, HiddenField, RadioField, SelectField, StringField, TextAreaField
from wtforms.validators import DataRequired, Length

from bids.forms import AmountField, DayField
from contracts.rules.terms import DueSetBy, MilestoneTerm, passed_regulation_dates
from core.federations import federation_name
from core.forms import BaseForm, Present, choices
from core.money import format_day, format_eur
from events.regulation import Regulation
from finance.rules import DECIDED_IN


def one_time_key() -> str:
    """The random key a payment form carries from the moment it is shown, so sending it twice records once."""
    return secrets.token_urlsafe(16)


class ContractOptionsForm(BaseForm):
    """Generating the draft contract. Whether FIDE requires the signal blocker (Art. 14.3) is not asked here: the
    contract follows the call's answer, recorded by the secretariat on the call's page."""

    def __init__(self, *args, reg=None, **kwargs):
        super().__init__(*args, **kwargs)
        if reg is not None:
            self.fill_labels(reg.cite_text)


class CorrectionForm(ContractOptionsForm):
    reason = TextAreaField("What the correction changes, and why", validators=[
        DataRequired("Say what the correction changes and why; the new version records it."), Length(max=5000)])


class SignForm(BaseForm):
    file = FileField("The countersigned contract (PDF)")
    accept_untrusted = TextAreaField(
        "Accept an organizer's signature that is not trusted, because…", validators=[Length(max=2000)],
        description="Only if the organizer's certificate is not on the trust list (nor issued by one on it) and you "
                    "accept the signature all the same: say why. The reason is recorded in the audit log and shown "
                    "with the signature. Leave it empty otherwise.")
    # The version of the contract the page showed (contracts.services.contract_version).
    seen = HiddenField()


class PaymentForm(BaseForm):
    received_on = DayField("Received on", validators=[Present("Enter the day FIDE received the money.")])
    amount = AmountField("Amount received (euros)", validators=[Present("Enter the amount received.")],
                         description="Digits with at most two decimals, for example 100000.00. Part payments are "
                                     "allowed.")
    reference = StringField("Bank reference", validators=[Length(max=200)])
    note = TextAreaField("Note", validators=[Length(max=2000)])
    idempotency_key = HiddenField()


class ReverseForm(BaseForm):
    reason = TextAreaField("Reason for the reversal", validators=[
        DataRequired("Give the reason for the reversal; it stays on record with it."), Length(max=2000)])
    idempotency_key = HiddenField()


def issue_form_class(reg: Regulation, milestones: list[MilestoneTerm], *, today: date | None = None,
                     kept: Mapping[str, date | None] | None = None):
    """A form asking for the date of each milestone whose date the contract sets (Art. 15.6.1), required for
    payments and optional for items paid at cost, with one date that fills every blank left; and, for a contract
    issued on `today`, a new date for each date the regulations fix that has already passed (but those a
    correction keeps from the version it replaces, `kept`)."""

    class IssueForm(BaseForm):
        pass

    passed = passed_regulation_dates(milestones, today=today, kept=kept) if today is not None else []
    needing = [m for m in milestones if m.due_set_by in (DueSetBy.CONTRACT, DueSetBy.OPTIONAL) or m in passed]
    for m in needing:
        optional = m.due_set_by is DueSetBy.OPTIONAL
        label = (f"{m.title[:1].upper()}{m.title[1:]} (Art. {m.article}), "
                 f"{'up to ' if m.is_cap else ''}{format_eur(m.amount)}")
        if m in passed and m.due is not None and today is not None:
            description = (f"{m.payer.name} pays {m.payee.name}. Art. {m.article} fixed {format_day(m.due)}, "
                           f"{(today - m.due).days} days before today: enter the date this contract sets in its "
                           "place.")
        else:
            description = ("Optional: items paid at cost need no deadline." if optional else
                           f"{m.payer.name} pays {m.payee.name}.")
        setattr(IssueForm, f"due_{m.key}", DayField(label, description=description))
    if any(m.due_set_by is DueSetBy.CONTRACT for m in needing):
        IssueForm.same_date = DayField("One date for every payment left blank",
                                       description="Filled into each required date above that is left empty.")
    IssueForm.fields_for = [(m, f"due_{m.key}") for m in needing]
    return IssueForm


class ResultForm(BaseForm):
    # Choices come from the regulation (for_regulation): the players and the split of each way of deciding.
    winner = SelectField("Winner of the match", validators=[DataRequired("Choose the winner of the match.")])
    decided_in = RadioField("Decided in", validators=[Present("Choose how the match was decided.")])
    completed_on = DayField("Completed on", validators=[Present("Enter the day the match was completed.")])
    # Recording the result cannot be undone: it fixes each player's prize and makes the balances milestones.
    confirm = BooleanField(
        "I have checked the winner, how the match was decided and the day: the result is recorded once and cannot "
        "be changed afterwards",
        validators=[DataRequired("Tick the box to confirm the result: once recorded it cannot be changed, and each "
                                 "player's prize balance becomes a milestone FIDE pays.")])

    @classmethod
    def for_regulation(cls, reg: Regulation, **kwargs) -> ResultForm:
        form = cls(**kwargs)
        form.winner.choices = choices([("", "Choose the winner")] +
                                      [(p.federation, f"{p.title} {p.name} ({federation_name(p.federation)})")
                                       for p in reg.players])
        labels = {"regular": f"the regular games (Art. {reg.prize_split.article}: "
                             f"{int(reg.prize_split.regular_winner_share * 100)}/"
                             f"{int((1 - reg.prize_split.regular_winner_share) * 100)})",
                  "tiebreak": f"the tie-break games (Art. {reg.prize_split.article}: "
                              f"{int(reg.prize_split.tiebreak_winner_share * 100)}/"
                              f"{int((1 - reg.prize_split.tiebreak_winner_share) * 100)})"}
        form.decided_in.choices = choices([(d, labels[d]) for d in DECIDED_IN])
        return form


class DeductionForm(BaseForm):
    # Choices come from the regulation (for_regulation): the players and the call's deduction rules.
    player = SelectField("Player", validators=[DataRequired("Choose the player whose prize is reduced.")])
    rule = SelectField("What the deduction is for", validators=[DataRequired("Choose what the deduction is for.")])
    amount = AmountField("Amount deducted (euros)", validators=[Present("Enter the amount deducted.")],
                         description="Digits with at most two decimals, for example 1000.00.")
    decided_on = DayField("Decided on", validators=[Present("Enter the day of the decision (the Chief Arbiter's, "
                                                            "the Appeals Committee's).")])
    reason = TextAreaField("Reason", validators=[Length(max=5000)],
                           description="Who decided, what happened and when; the contract's record shows it.")

    @classmethod
    def for_regulation(cls, reg: Regulation, **kwargs) -> DeductionForm:
        form = cls(**kwargs)
        form.player.choices = choices([("", "Choose the player")] +
                                      [(p.federation, f"{p.title} {p.name} ({federation_name(p.federation)})")
                                       for p in reg.players])
        form.rule.choices = choices([("", "Choose…")] + [(d.key, f"Art. {d.article}: {d.title}")
                                                         for d in reg.deductions])
        return form


class DeductionReturnForm(BaseForm):
    """Returning a deduction its rule returns (a protest fee, when the protest is accepted); one form a deduction,
    prefixed with its id so that several sit on one page."""

    decided_on = DayField("Decided on", validators=[Present("Enter the day of the decision (the Appeals "
                                                            "Committee's).")])
    reason = TextAreaField("Why it is returned", validators=[Length(max=5000)],
                           description="The decision that returns it (the protest accepted) and its date.")

    @classmethod
    def for_deduction(cls, deduction_id: int, **kwargs) -> DeductionReturnForm:
        return cls(prefix=f"return-{deduction_id}", **kwargs)
