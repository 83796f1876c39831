"""What a rendered page offers and shows, read with the standard library's HTML parser: its forms by the URL they
post to, and the cells of a table's rows (so that a test asserts what the template made, not a sentence that a
flash message may carry too)."""

from __future__ import annotations

from html.parser import HTMLParser


class _Forms(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.forms: list[dict] = []  # {"action", "method", "buttons": [text]}
        self._button: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.forms.append({"action": a.get("action") or "", "method": (a.get("method") or "get").lower(),
                               "buttons": []})
        elif tag == "button" and self.forms:
            self._button = []

    def handle_data(self, data):
        if self._button is not None:
            self._button.append(data)

    def handle_endtag(self, tag):
        if tag == "button" and self._button is not None:
            self.forms[-1]["buttons"].append(" ".join("".join(self._button).split()))
            self._button = None


def forms_posting_to(html: str, action: str) -> list[dict]:
    """The forms of the page that post to `action` (a path), each with its buttons' texts."""
    parser = _Forms()
    parser.feed(html)
    return [f for f in parser.forms if f["action"] == action and f["method"] == "post"]


class _Rows(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th") and self.rows:
            self._cell = []

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None


def table_rows(html: str) -> list[list[str]]:
    """Every table row of the page as the texts of its cells."""
    parser = _Rows()
    parser.feed(html)
    return parser.rows
