"""The charts of the ranking page, drawn as inline SVG from plain strings. Nothing is fetched; labels wrap at word
boundaries and are never cut. A picture of a statistic: floats are fine here (never money).

Each chart comes in two layouts of the same data, and the page shows the one that fits its width (`both_layouts`):
the wide one, labels beside the bars, scales down to its box; the narrow one, for a phone, puts each label above its
bar and has no viewBox, so its text keeps its size (NARROW_FONT CSS pixels) and only the bars, drawn in percentages
of the width, shrink."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import SupportsFloat

from markupsafe import Markup, escape

FONT = 'font-family="DejaVu Sans, sans-serif" font-size="11"'
LINE_H = 13
LABEL_CHARS = 38  # about what fits in LABEL_W at 11 px


def wrap(text: str, width: int = LABEL_CHARS) -> list[str]:
    """The text in lines of at most `width` characters, broken between words only (a word longer than the line
    keeps its own line whole)."""
    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False) or [""]


def _svg(width: int, height: int, title: str, body: list[str]) -> Markup:
    # `.chart svg` in the page's and the PDF's CSS scales it down to its box (the CSP refuses inline styles);
    # the title names it.
    return Markup(f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
                  f'viewBox="0 0 {width} {height}" {FONT}>'
                  f"<title>{escape(title)}</title>{''.join(body)}</svg>")


def _label(lines: list[str], x: int, y: float) -> str:
    return "".join(f'<text class="label" x="{x}" y="{y + 12 + i * LINE_H:.1f}" text-anchor="end">{escape(line)}</text>'
                   for i, line in enumerate(lines))


# The narrow layout: sizes in CSS pixels (the SVG has no viewBox, so nothing scales its text), across in percent.
NARROW_FONT = 13
NARROW_LINE_H = 17
NARROW_LABEL_CHARS = 30  # about what fits in 250 px at 13 px: the box of a bid's card on a 320 px phone
NARROW_BAR_H = 12


def _narrow_svg(height: float, title: str, body: list[str]) -> Markup:
    return Markup(f'<svg xmlns="http://www.w3.org/2000/svg" role="img" class="narrow" width="100%" '
                  f'height="{int(height)}" font-family="DejaVu Sans, sans-serif" font-size="{NARROW_FONT}">'
                  f"<title>{escape(title)}</title>{''.join(body)}</svg>")


def _narrow_label(lines: list[str], y: float) -> tuple[str, float]:
    """The label's lines from the left edge, starting at `y`; and the `y` under them."""
    text = "".join(f'<text class="label" x="0" y="{y + NARROW_FONT + i * NARROW_LINE_H:.1f}">{escape(line)}</text>'
                   for i, line in enumerate(lines))
    return text, y + NARROW_LINE_H * len(lines) + 2


def _narrow_bar(y: float, bar_pct: float, share: float, colour: str, value: str) -> str:
    """A track `bar_pct` percent of the width, filled to `share` of it, with `value` to its right."""
    return (f'<rect x="0" y="{y:.1f}" width="{bar_pct}%" height="{NARROW_BAR_H}" fill="#eef1f6"/>'
            f'<rect x="0" y="{y:.1f}" width="{bar_pct * share:.2f}%" height="{NARROW_BAR_H}" fill="{colour}"/>'
            f'<text x="{bar_pct + 2}%" y="{y + NARROW_BAR_H - 1:.1f}">{escape(value)}</text>')


def both_layouts(wide: Markup, narrow: Markup) -> Markup:
    """The two layouts of a chart, of which the page's CSS shows one: the wide one, or on a phone the narrow one."""
    return Markup(f'<div class="chart-wide">{wide}</div><div class="chart-narrow">{narrow}</div>')


def criteria_chart(result, reg, *, bid_name: str) -> Markup:
    """One bid's mean score per criterion on the call's scale (bars), the red-flag threshold (dashed), and beside
    each bar what the criterion adds to the weighted total ("4.00 → +0.80"), in both layouts.
    `result` is a scoring.rules.BidResult."""
    return both_layouts(_criteria_wide(result, reg, bid_name=bid_name), _criteria_narrow(result, reg,
                                                                                        bid_name=bid_name))


def _criteria_title(bid_name: str) -> str:
    return f"{bid_name}: mean score per criterion and what each adds to the weighted total"


def _criteria_legend(reg) -> str:
    threshold = reg.scoring.red_flag_threshold
    return (f"mean score ({reg.scoring.scale_min}–{reg.scoring.scale_max}); dashed: red-flag line at {threshold}; "
            "→ what it adds to the total")


def _criteria_wide(result, reg, *, bid_name: str) -> Markup:
    top = float(reg.scoring.scale_max)
    threshold = reg.scoring.red_flag_threshold
    label_w, bar_w, value_w = 250, 300, 110
    rows, y = [], 8.0
    for c in result.criteria:
        lines = wrap(f"({c.key}) {c.label}")
        height = max(22, LINE_H * len(lines) + 8)
        rows.append((c, lines, y))
        y += height
    bottom = y
    body = []
    for c, lines, top_y in rows:
        body.append(_label(lines, label_w - 6, top_y))
        bar_y = top_y + 3
        body.append(f'<rect x="{label_w}" y="{bar_y:.1f}" width="{bar_w}" height="14" fill="#eef1f6"/>')
        if c.mean is not None:
            width = bar_w * float(c.mean) / top
            colour = "#a4161a" if c.mean < threshold else "#2a64b8"
            body.append(f'<rect x="{label_w}" y="{bar_y:.1f}" width="{width:.1f}" height="14" fill="{colour}"/>')
            added = f" → +{c.contribution}" if c.contribution is not None else ""
            body.append(f'<text x="{label_w + bar_w + 6}" y="{bar_y + 11:.1f}">{c.mean}{added}</text>')
        else:
            body.append(f'<text x="{label_w + bar_w + 6}" y="{bar_y + 11:.1f}">not scored</text>')
    x_thr = label_w + bar_w * float(threshold) / top
    body.append(f'<line x1="{x_thr:.1f}" y1="4" x2="{x_thr:.1f}" y2="{bottom:.1f}" stroke="#a4161a" '
                'stroke-dasharray="4 3"/>')
    for tick in range(int(top) + 1):
        x = label_w + bar_w * tick / top
        body.append(f'<text x="{x:.1f}" y="{bottom + 14:.1f}" text-anchor="middle">{tick}</text>')
    body.append(f'<text x="{label_w}" y="{bottom + 30:.1f}">{escape(_criteria_legend(reg))}</text>')
    return _svg(label_w + bar_w + value_w, int(bottom + 38), _criteria_title(bid_name), body)


def _criteria_narrow(result, reg, *, bid_name: str) -> Markup:
    top = float(reg.scoring.scale_max)
    threshold = reg.scoring.red_flag_threshold
    bar_pct = 58.0  # the rest of the width holds "4.00 → +0.80"
    x_thr = bar_pct * float(threshold) / top
    body, y = [], 0.0
    for c in result.criteria:
        text, y = _narrow_label(wrap(f"({c.key}) {c.label}", NARROW_LABEL_CHARS), y)
        body.append(text)
        if c.mean is not None:
            added = f" → +{c.contribution}" if c.contribution is not None else ""
            colour = "#a4161a" if c.mean < threshold else "#2a64b8"
            body.append(_narrow_bar(y, bar_pct, float(c.mean) / top, colour, f"{c.mean}{added}"))
        else:
            body.append(_narrow_bar(y, bar_pct, 0, "#2a64b8", "not scored"))
        body.append(f'<line x1="{x_thr:.2f}%" y1="{y - 3:.1f}" x2="{x_thr:.2f}%" y2="{y + NARROW_BAR_H + 3:.1f}" '
                    'stroke="#a4161a" stroke-dasharray="3 2"/>')
        y += NARROW_BAR_H + 10
    for tick in range(int(top) + 1):
        anchor = "start" if tick == 0 else "middle"
        body.append(f'<text x="{bar_pct * tick / top:.2f}%" y="{y + NARROW_FONT - 4:.1f}" '
                    f'text-anchor="{anchor}">{tick}</text>')
    y += NARROW_LINE_H + 2
    for line in wrap(_criteria_legend(reg), NARROW_LABEL_CHARS + 4):
        body.append(f'<text x="0" y="{y + NARROW_FONT:.1f}">{escape(line)}</text>')
        y += NARROW_LINE_H
    return _narrow_svg(y + 6, _criteria_title(bid_name), body)


def first_places_chart(shares: Sequence[tuple[str, SupportsFloat]], samples: int) -> Markup:
    """The share of first places of each bid (name, share as a fraction of 1) under the sampled weightings, in both
    layouts."""
    title = f"Share of first places under {samples:,} sampled weightings"
    body, y = [], 0.0
    for name, share in shares:
        text, y = _narrow_label(wrap(name, NARROW_LABEL_CHARS), y)
        body.append(text)
        body.append(_narrow_bar(y, 74.0, float(share), "#2a64b8", f"{float(share) * 100:.2f}%"))
        y += NARROW_BAR_H + 10
    return both_layouts(_first_places_wide(shares, title), _narrow_svg(y, title, body))


def _first_places_wide(shares: Sequence[tuple[str, SupportsFloat]], title: str) -> Markup:
    label_w, bar_w, value_w = 250, 300, 70
    body, y = [], 8.0
    for name, share in shares:
        lines = wrap(name)
        height = max(22, LINE_H * len(lines) + 8)
        body.append(_label(lines, label_w - 6, y))
        body.append(f'<rect x="{label_w}" y="{y + 3:.1f}" width="{bar_w}" height="14" fill="#eef1f6"/>')
        body.append(f'<rect x="{label_w}" y="{y + 3:.1f}" width="{bar_w * float(share):.1f}" height="14" '
                    'fill="#2a64b8"/>')
        body.append(f'<text x="{label_w + bar_w + 6}" y="{y + 14:.1f}">{float(share) * 100:.2f}%</text>')
        y += height
    return _svg(label_w + bar_w + value_w, int(y + 8), title, body)

