"""What a browser would post from a page's form, read with the standard library's HTML parser: ticked boxes,
chosen options and typed values, in the page's order (tests then change one thing and post it back)."""

from __future__ import annotations

from html.parser import HTMLParser


class _Form(HTMLParser):
    def __init__(self, index: int):
        super().__init__(convert_charrefs=True)
        self.index, self.seen, self.inside = index, -1, False
        self.fields: list[tuple[str, str]] = []
        self.buttons: list[dict] = []
        self.ids: set[str] = set()
        self._select: str | None = None
        self._textarea: str | None = None
        self._text = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "form":
            if (a.get("action") or "").endswith("/logout"):  # the header's button, on every page
                return
            self.seen += 1
            self.inside = self.seen == self.index
            return
        if not self.inside:
            return
        name = a.get("name")
        if tag == "input" and name:
            self._input(name, a)
        elif tag == "button":
            self.buttons.append(a)
        elif tag == "select" and name:
            self._select = name
        elif tag == "option" and self._select and "selected" in a:
            self.fields.append((self._select, a.get("value", "")))
        elif tag == "textarea" and name:
            self._textarea, self._text = name, ""

    def _input(self, name: str, a: dict) -> None:
        """A named <input> of the form: a ticked box's value, a button, or a typed value (a file is not read)."""
        kind = a.get("type", "text")
        if kind in ("checkbox", "radio"):
            if "checked" in a:
                self.fields.append((name, a.get("value", "on")))
        elif kind in ("submit", "button", "image"):
            self.buttons.append(a)
        elif kind != "file":
            self.fields.append((name, a.get("value") or ""))

    def handle_endtag(self, tag):
        if tag == "form":
            self.inside = False
        elif tag == "select":
            self._select = None
        elif tag == "textarea" and self._textarea:
            self.fields.append((self._textarea, self._text))
            self._textarea = None

    def handle_data(self, data):
        if self._textarea:
            self._text += data


def read_form(html: str, index: int = 0) -> _Form:
    """The index-th <form> of the page's content (0: the first; the header's log-out form is not counted):
    .fields, .buttons (in DOM order) and .ids of the whole page."""
    parser = _Form(index)
    parser.feed(html)
    return parser


def form_data(html: str, index: int = 0) -> dict[str, list[str]]:
    """The form's values as a browser would post them (a name may repeat: a list per name)."""
    data: dict[str, list[str]] = {}
    for name, value in read_form(html, index).fields:
        data.setdefault(name, []).append(value)
    return data


def page_ids(html: str) -> set[str]:
    """Every id on the page (to check that a link's #anchor exists)."""
    return read_form(html, -2).ids
