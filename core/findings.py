"""The one shape of a rule's verdict: it feeds the form error, the compliance report, the dossier and the API."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Outcome(enum.StrEnum):
    PASS = "pass"
    FAIL = "fail"
    NOT_APPLICABLE = "n/a"
    # A required document that is not attached yet (the JSON import cannot carry files).
    PENDING = "pending"
    # A sanity check of a figure (not a rule): shown so the figure is checked, never a refusal.
    WARNING = "warning"

    @property
    def blocks_submission(self) -> bool:
        """A failed check, or a document still to attach: a bid cannot be submitted while one remains."""
        return self in _BLOCKS_SUBMISSION

    @property
    def shows_entered_value(self) -> bool:
        """A failure or a sanity check's warning repeats what was entered, so the person can see what to change."""
        return self in _SHOWS_ENTERED_VALUE

    @property
    def label(self) -> str:
        """The words of the outcome's badge on the compliance report."""
        return _LABELS[self]

    @property
    def css_class(self) -> str:
        """The badge's CSS class ("n/a" is not a class name)."""
        return "na" if self is Outcome.NOT_APPLICABLE else self.value


_BLOCKS_SUBMISSION = frozenset({Outcome.FAIL, Outcome.PENDING})
_SHOWS_ENTERED_VALUE = frozenset({Outcome.FAIL, Outcome.WARNING})
_LABELS = {Outcome.PASS: "Passes", Outcome.FAIL: "Fails", Outcome.NOT_APPLICABLE: "Does not apply",
           Outcome.PENDING: "To attach", Outcome.WARNING: "Check the figure"}


@dataclass(frozen=True)
class Finding:
    """One item of the compliance report.

    `article` cites the regulations ("15.2(c)"), only for a rule the regulations contain ("" otherwise);
    `source` says where the rule comes from as shown ("Art. 15.2(c)", "Bidding procedure: bank guarantee terms",
    "Sanity check: prize fund figure") and `kind` which of the three it is; `field` names the form field it
    belongs to (so the form can show the message beside it), `message` is a sentence a person understands,
    `value` is what was entered, formatted for display ("" when nothing was entered).
    """

    code: str
    article: str
    field: str
    outcome: Outcome
    message: str
    value: str = ""
    source: str = ""
    kind: str = "regulation"

    @property
    def cite(self) -> str:
        """How the finding cites its source: "Art. 15.2(c)", "Bidding procedure: …" or "Sanity check: …"."""
        return self.source or (f"Art. {self.article}" if self.article else "")

    @property
    def failed(self) -> bool:
        return self.outcome is Outcome.FAIL

    @property
    def pending(self) -> bool:
        """A required document not attached yet."""
        return self.outcome is Outcome.PENDING

    @property
    def blocks_submission(self) -> bool:
        """A failed check, or a document still to attach: the bid cannot be submitted while one remains."""
        return self.outcome.blocks_submission

    @property
    def shows_entered_value(self) -> bool:
        """The report repeats what was entered (a failure, or a sanity check's warning) when something was."""
        return bool(self.value) and self.outcome.shows_entered_value

    @property
    def entered_text(self) -> str:
        """The report's "Entered" cell: what was entered, else why nothing is there ("not attached yet" for a
        document to attach, "nothing entered" for a failed check or a warning, a dash where no figure belongs).
        Raises nothing."""
        if self.value:
            return self.value
        if self.outcome is Outcome.PENDING:
            return "not attached yet"
        if self.outcome in _SHOWS_ENTERED_VALUE:
            return "nothing entered"
        return "—"

    def as_text(self) -> str:
        """"Art. 15.2(c): ... (you entered €150,000.00)." as shown in a form and printed by the CLI."""
        text = f"{self.cite}: {self.message}"
        if self.shows_entered_value:
            text = text.rstrip(".") + f" (you entered {self.value})."
        return text

    @classmethod
    def from_dict(cls, d: dict) -> Finding:
        """A finding as stored by as_dict() (with a submitted version; its "cite" stands for the source, and reads
        the same); keys it does not know are ignored.
        Raises KeyError for a missing code, article, field, outcome or message, ValueError for an unknown outcome."""
        return cls(code=d["code"], article=d["article"], field=d["field"], outcome=Outcome(d["outcome"]),
                   message=d["message"], value=d.get("value", ""), source=d.get("source") or d.get("cite", ""),
                   kind=d.get("kind", "regulation"))

    def as_dict(self) -> dict:
        return {"code": self.code, "article": self.article, "field": self.field,
                "outcome": self.outcome.value, "message": self.message, "value": self.value,
                "kind": self.kind, "cite": self.cite}
