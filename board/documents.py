"""What the dossier, the board pack and the minutes show: template contexts built from the bid, finance/ and the
scoring report. No state changes here."""

from __future__ import annotations

from datetime import datetime

from markupsafe import Markup, escape

from bids.models import Bid
from bids.presenters import bid_cost
from bids.rules import SECTION_TITLES, findings_by_section, home_match, home_match_consequences
from bids.services import compliance
from board.services import consultation_of


def criteria_chart(result, reg) -> Markup:
    """A horizontal bar chart (inline SVG) of the mean score per criterion on the call's scale, with the
    red-flag threshold marked. Drawn from a template string: no library hooks, nothing fetched."""
    top = float(reg.scoring.scale_max)
    threshold = float(reg.scoring.red_flag_threshold)
    label_w, bar_w, row_h = 300, 380, 22
    height = row_h * len(result.criteria) + 40
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{label_w + bar_w + 60}" height="{height}" '
             f'viewBox="0 0 {label_w + bar_w + 60} {height}" font-family="DejaVu Sans" font-size="11">',
             '<title>Mean score per criterion (Art. 15.5)</title>']
    x_thr = label_w + bar_w * threshold / top
    for i, c in enumerate(result.criteria):
        y = 10 + i * row_h
        label = escape(f"({c.key}) {c.label}")[:48]
        parts.append(f'<text x="{label_w - 6}" y="{y + 14}" text-anchor="end">{label}</text>')
        parts.append(f'<rect x="{label_w}" y="{y + 3}" width="{bar_w}" height="{row_h - 8}" fill="#eef1f6"/>')
        if c.mean is not None:
            # A picture of a statistic: floats are fine here (never money).
            width = bar_w * float(c.mean) / top
            colour = "#a4161a" if c.mean < reg.scoring.red_flag_threshold else "#2a64b8"
            parts.append(f'<rect x="{label_w}" y="{y + 3}" width="{width:.1f}" height="{row_h - 8}" '
                         f'fill="{colour}"/>')
            parts.append(f'<text x="{label_w + width + 4:.1f}" y="{y + 14}">{c.mean}</text>')
    bottom = 10 + len(result.criteria) * row_h
    parts.append(f'<line x1="{x_thr:.1f}" y1="6" x2="{x_thr:.1f}" y2="{bottom}" stroke="#a4161a" '
                 'stroke-dasharray="4 3"/>')
    for tick in range(int(top) + 1):
        x = label_w + bar_w * tick / top
        parts.append(f'<text x="{x:.1f}" y="{bottom + 16}" text-anchor="middle">{tick}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


def _common(bid: Bid):
    reg = bid.event.regulation
    data = bid.to_data()
    findings = compliance(bid, today=(bid.submitted_at or bid.updated_at).date())
    return reg, data, findings


def dossier_context(bid: Bid, report, *, identifier: str, now: datetime) -> dict:
    reg, data, findings = _common(bid)
    result = next((r for r in report.ranking.bids if r.bid_id == bid.id), None)
    counted = report.counted.get(bid.id, {})
    comments = []
    for member_id, card in sorted(counted.items(), key=lambda kv: report.data.members[kv[0]].name):
        member = report.data.members[member_id]
        for key, text in sorted(card.comment_map().items()):
            if text:
                comments.append((member.name, key, card.score_map().get(key), text))
    schedule = (reg.schedule_for(data.opening_date, data.closing_date)
                if data.opening_date and data.closing_date else [])
    return {
        "bid": bid, "reg": reg, "data": data, "identifier": identifier, "generated": now,
        "regulation_label": bid.event.regulation_version.label,
        "by_section": findings_by_section(findings), "titles": SECTION_TITLES, "schedule": schedule,
        "home": home_match(reg, data), "home_consequences": home_match_consequences(reg, data),
        "cost": bid_cost(reg, data, signal_blocker_required=bid.event.signal_blocker_required),
        "result": result, "report": report,
        "chart": criteria_chart(result, reg) if result and result.total is not None else None,
        "comments": comments, "members": [report.data.members[m].name for m in counted],
        "recusals": [r for r in report.recusals if r.bid.id == bid.id],
        "documents": bid.current_documents().values(), "version": bid.last_version,
        "consultation": consultation_of(bid),
    }


def pack_context(event, report, dossiers, *, identifier: str, now: datetime) -> dict:
    rows = []
    by_bid = {d.bid_id: d for d in dossiers}
    for result in report.ranking.bids:
        bid = report.bid(result.bid_id)
        reg, data, _ = _common(bid)
        cost = bid_cost(reg, data, signal_blocker_required=event.signal_blocker_required)
        rows.append({"bid": bid, "data": data, "result": result, "dossier": by_bid.get(bid.id),
                     "total_commitment": cost[0].total_fixed if cost else None,
                     "up_to": cost[0].total_up_to if cost else None, "consultation": consultation_of(bid)})
    return {"event": event, "reg": event.regulation, "report": report, "rows": rows, "identifier": identifier,
            "generated": now, "regulation_label": event.regulation_version.label, "dossiers": dossiers}


def minutes_context(decision, *, now: datetime, checkpoint=None) -> dict:
    """`checkpoint`: the audit chain's head right after the entry that recorded the decision (printed)."""
    event = decision.event
    from bids.models import Bid as BidModel
    from core.db import db

    tally = decision.loads("tally")
    names = {}
    for key in (tally.get("votes") or {}):
        bid = db.session.get(BidModel, int(key))
        names[key] = bid.title if bid else key
    return {"decision": decision, "event": event, "reg": event.regulation, "tally": tally, "names": names,
            "consultations": decision.loads("consultations"), "reviewed": decision.loads("reviewed"),
            "ranking": decision.loads("ranking"), "generated": now, "identifier": f"DECISION-{decision.id}",
            "regulation_label": event.regulation_version.label, "checkpoint": checkpoint}
