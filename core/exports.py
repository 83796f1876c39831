"""What every CSV export shares: a cell a spreadsheet reads as text, never as a formula."""

from __future__ import annotations

# A cell starting with one of these is taken for a formula (or for one split over cells) by spreadsheets.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> str:
    """`value` as the text of a CSV cell that a spreadsheet will not run: "" for None, and a leading apostrophe
    when the text starts like a formula ("=HYPERLINK(...)" becomes "'=HYPERLINK(...)"). Raises nothing."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text
