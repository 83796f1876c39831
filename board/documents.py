"""What the dossier, the board pack and the minutes show: template contexts built from the bid, finance/ and the
scoring report. No state changes here."""

from __future__ import annotations

from datetime import datetime

from bids.models import Bid
from bids.presenters import bid_cost, consultation_of
from bids.rules import home_match, home_match_consequences
from bids.sections import SECTION_TITLES, findings_by_section
from bids.services import compliance, document_signatures
from core.db import db
from evidence.hashing import canonical_json
from evidence.pdf import EmbeddedFile
from scoring.visibility import Sight


def inputs_file(kind: str, inputs: dict, now: datetime) -> EmbeddedFile:
    """What a dossier (`kind` "dossier") or the board pack ("pack") is made of, as the JSON whose SHA-256 is its
    inputs hash (board.rules.inputs_sha256; the footer prints its start)."""
    return EmbeddedFile.json(f"{kind}-inputs.json", canonical_json(inputs, default=str),
                             f"what this {'board pack' if kind == 'pack' else kind} was made of (its inputs, "
                             "whose SHA-256 is the inputs hash in the footer)", now, relationship="Data")


def dossier_files(bid: Bid, inputs: dict, now: datetime) -> list[EmbeddedFile]:
    """The data a bid's dossier carries: the bid as submitted, in the form its version was fingerprinted in (so the
    file's SHA-256 is the version's, printed in the dossier and recorded in the audit log's bid.submit entry), and
    the dossier's inputs."""
    files = []
    version = bid.last_version
    if version is not None:
        frozen = canonical_json({"data": version.data_dict, "documents": version.documents_list}, compact=False)
        files.append(EmbeddedFile.json(
            f"bid-{bid.id}-version-{version.number}.json", frozen,
            f"the bid as submitted (version {version.number}, {version.submitted_at:%Y-%m-%d %H:%M} UTC): its "
            "particulars and its documents' names and SHA-256, as Gambit froze them", now))
    files.append(inputs_file("dossier", inputs, now))
    return files


def _common(bid: Bid):
    reg = bid.event.regulation
    data = bid.to_data()
    findings = compliance(bid, today=(bid.submitted_at or bid.updated_at).date())
    return reg, data, findings


def dossier_context(bid: Bid, report, *, identifier: str, now: datetime) -> dict:
    reg, data, findings = _common(bid)
    result = next((r for r in report.ranking.bids if r.bid_id == bid.id), None)
    counted = report.counted.get(bid.id, {})
    report.data.load_scores()  # one query for the call, not one per scorecard (the ranking may come from the cache)
    comments = []
    for member_id, card in sorted(counted.items(), key=lambda kv: report.data.members[kv[0]].name):
        member = report.data.members[member_id]
        for key, text in sorted(card.comment_map().items()):
            if text:
                comments.append((member.name, key, card.score_map().get(key), text))
    schedule = (reg.programme(data.opening_date, data.closing_date)
                if data.opening_date and data.closing_date else [])
    return {
        "bid": bid, "reg": reg, "data": data, "identifier": identifier, "generated": now,
        "regulation_label": bid.event.regulation_version.label,
        "by_section": findings_by_section(findings), "titles": SECTION_TITLES, "schedule": schedule,
        "home": home_match(reg, data), "home_consequences": home_match_consequences(reg, data),
        "cost": bid_cost(reg, data, signal_blocker_required=bid.event.signal_blocker_required),
        "result": result, "report": report,
        "comments": comments, "members": [report.data.members[m].name for m in counted],
        "recusals": [r for r in report.recusals if r.bid.id == bid.id],
        "documents": bid.current_documents().values(), "version": bid.last_version,
        "signature_notes": document_signatures(bid),
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


def tally_names(decision) -> dict[str, str]:
    """The bid's title for each key of the decision's tally (a bid id as text): the record and the minutes name
    bids, never their ids."""
    names = {}
    for key in (decision.loads("tally").get("votes") or {}):
        bid = db.session.get(Bid, int(key))
        names[key] = bid.title if bid else f"a bid no longer on file ({key})"
    return names


def minutes_context(decision, *, now: datetime, checkpoint=None, seen: Sight | None = None,
                    reader: str = "") -> dict:
    """`checkpoint`: the audit chain's head right after the entry that recorded the decision (printed). `seen`:
    what the `reader` of a copy may see of the scores (scoring.visibility; None: the record as the Board has it),
    the WCOC's ranking shown accordingly with a sentence for each bid withheld."""
    event = decision.event
    tally = decision.loads("tally")
    seen = Sight.everything() if seen is None else seen
    ranking = decision.loads("ranking")
    in_record = {row.get("bid") for row in ranking.get("bids") or []}
    return {"ranking": seen.record_ranking(ranking), "closed": seen.closed, "reader": reader,
            "withheld": [w.sentence for w in seen.withheld if w.bid_id in in_record],
            "decision": decision, "event": event, "reg": event.regulation, "tally": tally,
            "names": tally_names(decision),
            "consultations": decision.consulted(), "reviewed": decision.loads("reviewed"),
            "generated": now, "identifier": f"DECISION-{decision.id}",
            "regulation_label": (decision.regulation_version or event.regulation_version).label,
            "version": decision.regulation_version or event.regulation_version, "checkpoint": checkpoint}
