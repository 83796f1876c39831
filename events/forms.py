"""The secretariat's settings of a call (the labels cite their articles from the call's regulation)."""

from __future__ import annotations

from wtforms import BooleanField

from core.forms import BaseForm
from events.regulation import Regulation


def signal_blocker_label(reg: Regulation) -> str:
    """The words of the setting: the blocker is owed only "if required by FIDE", with its article. Raises
    nothing."""
    return f"Signal blocker: if required by FIDE (Art. {reg.obligations.signal_blocker_article})"


class CallSettingsForm(BaseForm):
    signal_blocker_required = BooleanField(
        "Signal blocker", default=False,
        description="Ticked, FIDE requires the device blocking mobile signals: every bid's obligations count it "
                    "at its cap. Unticked (the default), it is left out.")

    def for_regulation(self, reg: Regulation) -> CallSettingsForm:
        """Label the field with the call's article. Returns the form."""
        self.signal_blocker_required.label.text = signal_blocker_label(reg)
        return self
