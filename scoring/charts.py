"""The charts of the ranking, drawn as inline SVG from plain strings: the same function draws a bid's chart on the
ranking page, in its dossier and in the board pack, so the three never differ. Nothing is fetched; labels wrap at
word boundaries and are never cut. A picture of a statistic: floats are fine here (never money)."""

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
    return "".join(f'<text x="{x}" y="{y + 12 + i * LINE_H:.1f}" text-anchor="end">{escape(line)}</text>'
                   for i, line in enumerate(lines))


def criteria_chart(result, reg, *, bid_name: str) -> Markup:
    """One bid's mean score per criterion on the call's scale (bars), the red-flag threshold (dashed), and beside
    each bar what the criterion adds to the weighted total ("4.00 → +0.80"). `result` is a scoring.rules.BidResult."""
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
    body.append(f'<text x="{label_w}" y="{bottom + 30:.1f}">mean score ({reg.scoring.scale_min}–'
                f'{reg.scoring.scale_max}); dashed: red-flag line at {threshold}; → what it adds to the total</text>')
    return _svg(label_w + bar_w + value_w, int(bottom + 38),
                f"{bid_name}: mean score per criterion and what each adds to the weighted total", body)


def first_places_chart(shares: Sequence[tuple[str, SupportsFloat]], samples: int) -> Markup:
    """The share of first places of each bid (name, share as a fraction of 1) under the sampled weightings."""
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
    return _svg(label_w + bar_w + value_w, int(y + 8),
                f"Share of first places under {samples:,} sampled weightings", body)

