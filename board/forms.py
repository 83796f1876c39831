"""The board's forms: a vote, the decision record, a correction."""

from __future__ import annotations

from wtforms import DateField, HiddenField, RadioField, SelectField, TextAreaField
from wtforms.validators import DataRequired, Length, Optional

from bids.consultation import RULING_GROUNDS
from core.forms import BaseForm, choices


def method_choices(selection) -> list[tuple[str, str]]:
    """The two ways of deciding; `selection`: the call's citation of the decision (reg.citation("selection"))."""
    return [("board_vote", "By the vote of the Presidential Board"),
            ("president", "By the FIDE President alone, a Presidential Board meeting being impossible, in "
                          f"consultation with the WCOC ({selection})")]


class VoteForm(BaseForm):
    choice = RadioField("Your vote", validators=[DataRequired("Choose a bid, or abstain.")])


class DecisionForm(BaseForm):
    method = RadioField("How the decision was taken", validators=[DataRequired("Choose how the decision was taken.")],
                        choices=[])  # set per call from its regulation (method_choices), in board.views
    selected = SelectField("Organiser selected", validators=[DataRequired("Choose the selected bid.")])
    decided_on = DateField("Date of the decision", validators=[DataRequired("Enter the date of the decision.")])
    rationale = TextAreaField("Reasons", validators=[Optional(), Length(max=20000)],
                              description="Required when the choice is not the top of the WCOC's ranking or carries "
                                          "a red flag.")
    no_meeting_reason = TextAreaField(
        "If the President decides alone: why no Presidential Board meeting could be held",
        validators=[Optional(), Length(max=5000)],
        description="Required for the President's decision. A tied vote is not a reason: the bidding procedure says "
                    "how a tie is broken.")
    # The votes the page showed (board.queries.votes_fingerprint): refused if they changed before the record.
    votes_seen = HiddenField()


class CorrectionForm(DecisionForm):
    # The decision the page showed in force, the one this correction corrects: a repeat or a stale page is refused.
    corrects = HiddenField()
    correction_reason = TextAreaField("What this correction mends", validators=[
        DataRequired("Say what the correction mends."), Length(max=5000)])


def advice_field_name(member_id: int) -> str:
    return f"advice_{member_id}"


def consulted_on_field_name(member_id: int) -> str:
    return f"consulted_on_{member_id}"


class PresidentRulingForm(BaseForm):
    """Art. 16 ("any grounds that are not covered or any unforeseen event shall be referred to the FIDE President,
    for final decision"), on a sponsor's bid whose consultation has no answer: which ground, and the decision."""

    grounds = RadioField("What is referred to the President", validators=[DataRequired(
        "Say which it is: a ground not covered by the regulations, or an unforeseen event.")],
        choices=choices([(k, v[:1].upper() + v[1:]) for k, v in RULING_GROUNDS.items()]))
    reason = TextAreaField("Why the bid may be selected without the host federation's answer (the President's "
                           "final decision)", validators=[
        DataRequired("Give the President's decision and its reason; the decision record shows it."),
        Length(max=5000)])
