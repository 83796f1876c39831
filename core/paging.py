"""One page of a list that can grow: which page and order the query string asks for, read so that no value can fail
the request, and the page itself, read from the database with a COUNT and LIMIT/OFFSET (never every row) or cut
from a list computed in full elsewhere (the ranking). The template macro `pager` (templates/_macros/paging.html)
renders what a Page holds."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from flask import current_app
from sqlalchemy import Select, func, select

from core.db import db

T = TypeVar("T")

DEFAULT_PAGE_SIZE = 25
ASC, DESC = "asc", "desc"
# A page number longer than this is no page anyone was sent to: it is read as page 1 (and never reaches the SQL).
_MAX_DIGITS = 9


def page_size() -> int:
    """The rows a page shows: the PAGE_SIZE setting (config.py), at least 1."""
    return max(1, int(current_app.config.get("PAGE_SIZE", DEFAULT_PAGE_SIZE)))


@dataclass(frozen=True)
class PageRequest:
    """What the query string asks for, already made valid: a page number from 1, a sort key among the list's own,
    and a direction "asc" or "desc"."""

    page: int
    sort: str
    dir: str
    size: int


def page_request(args: Mapping[str, str], sorts: Sequence[str], *, default_sort: str,
                 default_dirs: Mapping[str, str] | None = None, size: int | None = None) -> PageRequest:
    """Read ?page=&sort=&dir= from `args`. Anything unreadable falls back rather than fails: a page that is not a
    positive number of at most nine digits is page 1, a sort key not in `sorts` is `default_sort`, a direction other
    than asc/desc is the key's default (`default_dirs`, else "asc"; the default sort's is "desc" unless given).
    Raises nothing."""
    dirs = dict(default_dirs or {})
    raw_sort = args.get("sort", "")
    sort = raw_sort if raw_sort in sorts else default_sort
    raw_dir = args.get("dir", "")
    direction = raw_dir if raw_dir in (ASC, DESC) else dirs.get(sort, ASC)
    raw_page = (args.get("page") or "").strip()
    page = int(raw_page) if raw_page.isdigit() and raw_page.isascii() and len(raw_page) <= _MAX_DIGITS else 1
    return PageRequest(page=max(1, page), sort=sort, dir=direction, size=size or page_size())


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list: its items, how many there are in all, and where the page sits among the pages."""

    items: list[T]
    total: int
    page: int
    size: int
    sort: str
    dir: str

    @property
    def pages(self) -> int:
        """How many pages the list has (1 when it is empty: an empty list still has its page)."""
        return max(1, -(-self.total // self.size))

    @property
    def first(self) -> int:
        """The position of the page's first item in the whole list, from 1 (0 on an empty list)."""
        return 0 if not self.items else (self.page - 1) * self.size + 1

    @property
    def last(self) -> int:
        """The position of the page's last item in the whole list (0 on an empty list)."""
        return 0 if not self.items else self.first + len(self.items) - 1

    @property
    def previous(self) -> int | None:
        return self.page - 1 if self.page > 1 else None

    @property
    def next(self) -> int | None:
        return self.page + 1 if self.page < self.pages else None

    def numbers(self, around: int = 2) -> list[int | None]:
        """The page numbers the pager links: the first, the last, and `around` either side of this one; None where
        numbers are left out (shown as an ellipsis; the page form reaches those)."""
        shown = sorted({1, self.pages, *range(max(1, self.page - around), min(self.pages, self.page + around) + 1)})
        out: list[int | None] = []
        for n in shown:
            if out and n - (out[-1] or 0) > 1:
                out.append(None)
            out.append(n)
        return out

    @property
    def complete(self) -> bool:
        """True when every page number is linked (no ellipsis): no need of the form that goes to any page."""
        return None not in self.numbers()

    def map(self, fn: Callable[[list[T]], list[Any]]) -> Page[Any]:
        """The same page with its items made into others (`fn` takes and returns the whole list, in order)."""
        return Page(items=fn(self.items), total=self.total, page=self.page, size=self.size, sort=self.sort,
                    dir=self.dir)


def clamp(request: PageRequest, total: int) -> int:
    """The page to show of `total` items: the one asked for, or the last page when it asked beyond it (the list
    shrank since the link was made)."""
    pages = max(1, -(-total // request.size))
    return min(request.page, pages)


def count_of(query: Select) -> int:
    """How many rows `query` selects: one COUNT over it, its ordering dropped."""
    return db.session.scalar(select(func.count()).select_from(query.order_by(None).subquery())) or 0


def sql_page(query: Select, request: PageRequest, order_by: Sequence[Any], *,
             fetch: Callable[[Select], list[Any]] | None = None) -> Page[Any]:
    """The page of `query` that `request` asks for: a COUNT, then the page's rows with ORDER BY `order_by` (which
    must end with a unique column, so that no row sits on two pages) and LIMIT/OFFSET. `fetch` reads the page's
    rows from the limited query (default: its scalars). Two statements, plus what `fetch` runs, whatever the
    number of rows. Raises what the database raises."""
    total = count_of(query)
    page = clamp(request, total)
    limited = query.order_by(None).order_by(*order_by).limit(request.size).offset((page - 1) * request.size)
    items = fetch(limited) if fetch is not None else list(db.session.scalars(limited))
    return Page(items=list(items), total=total, page=page, size=request.size, sort=request.sort, dir=request.dir)


def list_page(rows: Sequence[T], request: PageRequest) -> Page[T]:
    """The page `request` asks for of rows computed in full already (and sorted as the request says)."""
    page = clamp(request, len(rows))
    start = (page - 1) * request.size
    return Page(items=list(rows[start:start + request.size]), total=len(rows), page=page, size=request.size,
                sort=request.sort, dir=request.dir)


def ordered(column: Any, direction: str) -> Any:
    """`column` in the direction asked for."""
    return column.desc() if direction == DESC else column.asc()
