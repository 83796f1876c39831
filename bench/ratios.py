"""The arithmetic of part 1's judgement, pure (no server, no app, no clock): a route against another measured in the
same rounds (the yardstick `/healthz`, the floor `/livez`, the plain reference page), by throughput and by the
server's CPU time per request, and the aims of issue 28 as limits on that cost.

Every aim is a cost limit: a page at no less than 0.5 of `/healthz`'s requests per second costs at most 2 times
`/healthz`; "no more than 1.5 times the reference page's cost" and "a revisit within 1.2 times `/healthz`" read
directly. A route meets a limit when it meets it both by throughput and by server CPU (where that was measured).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

PAGE_AIM = 0.5  # a page serves at least 0.5 of `/healthz`'s req/s and costs at most 1/0.5 of its CPU per request
REFERENCE_AIM = 1.5  # a page costs at most 1.5 times the plain reference page
REVISIT_AIM = 1.2  # a revisit answered 304 costs at most 1.2 times `/healthz`
NO_ETAG = "no ETag"  # what a revisit row says when the page gave no ETag (older code, or a page not cached)


@dataclass(frozen=True)
class Measured:
    """One route in one run: requests per second that counted, and the server's CPU seconds per request (None
    where it could not be read)."""

    rps: float
    cpu: float | None


def _div(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


@dataclass(frozen=True)
class Against:
    """A route against another: `rps` is its req/s ÷ the other's (below 1: it serves fewer), `cpu` its server CPU
    per request ÷ the other's (above 1: it costs more). None where either side is missing."""

    rps: float | None
    cpu: float | None

    @property
    def cost_by_rps(self) -> float | None:
        """The other's req/s ÷ this route's: how many times dearer this route is by throughput (infinite when it
        served nothing)."""
        if self.rps is None:
            return None
        return 1 / self.rps if self.rps else math.inf

    @property
    def cpu_as_rps(self) -> float | None:
        """The CPU ratio turned round (the other's CPU per request ÷ this route's): the throughput ratio this
        route would reach if the server were only CPU-bound."""
        if self.cpu is None:
            return None
        return 1 / self.cpu if self.cpu else math.inf


def against(route: Measured, other: Measured | None) -> Against:
    """`route` as a ratio to `other` (both measured in the same rounds); all None when `other` was not measured."""
    if other is None:
        return Against(None, None)
    return Against(rps=_div(route.rps, other.rps), cpu=_div(route.cpu, other.cpu))


def within(a: Against, limit: float) -> bool | None:
    """Whether a route costs at most `limit` times the other, by throughput and by server CPU per request; a
    figure that could not be measured is not judged, and None means neither could be."""
    costs = [c for c in (a.cost_by_rps, a.cpu) if c is not None]
    if not costs:
        return None
    return all(c <= limit for c in costs)


def etag_of(headers: dict[str, str]) -> str | None:
    """The ETag an answer carries (headers keyed in lower case), exactly as sent back in If-None-Match; None when
    there is none."""
    value = headers.get("etag", "").strip()
    return value or None


@dataclass(frozen=True)
class Revisit:
    """A page asked again with If-None-Match: `etag` is the one it gave (None: it gave none, so nothing was
    measured); `errors` the answers that were not 304; `vs_healthz` its figures against `/healthz`."""

    etag: str | None
    errors: int = 0
    vs_healthz: Against = Against(None, None)

    def verdict(self) -> bool | None:
        """Within REVISIT_AIM times `/healthz`'s cost and every answer a 304: True or False; None when the page
        gave no ETag (the row says NO_ETAG instead of a figure) or nothing could be measured."""
        if self.etag is None:
            return None
        if self.errors:
            return False
        return within(self.vs_healthz, REVISIT_AIM)

    def why(self) -> str:
        """The row's figures in words, for the aims: "no ETag", the answers that were not 304, or the two ratios."""
        if self.etag is None:
            return NO_ETAG
        parts = []
        if self.errors:
            parts.append(f"{self.errors} answers not 304")
        parts.append(describe(self.vs_healthz))
        return "; ".join(parts)


def describe(a: Against) -> str:
    """A route's ratios in words: "req/s 0.26, server CPU 4.76×" (n/a where not measured)."""
    rps = f"{a.rps:.2f}" if a.rps is not None else "n/a"
    cpu = f"{a.cpu:.2f}×" if a.cpu is not None else "n/a"
    return f"req/s {rps}, server CPU {cpu}"


def describe_cost(a: Against) -> str:
    """A route's cost against another in words: "1.92× by throughput, 2.10× by server CPU" (n/a where not
    measured)."""
    rps, cpu = a.cost_by_rps, a.cpu
    return (f"{f'{rps:.2f}×' if rps is not None else 'n/a'} by throughput, "
            f"{f'{cpu:.2f}×' if cpu is not None else 'n/a'} by server CPU")
