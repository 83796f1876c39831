"""Driving the bid form through the test client, as a browser would post it."""

from __future__ import annotations

import re

from bids.data import BidData
from tests.pdfs import valid_pdf

PDF = valid_pdf()


def revision(client, bid_id: int, section: str = "applicant") -> str:
    html = client.get(f"/bids/{bid_id}/edit/{section}").get_data(as_text=True)
    return re.search(r'name="revision"[^>]*value="(\d+)"', html).group(1)


def _b(value) -> dict:
    return {"y": "y"} if value else {}


def section_posts(data: BidData) -> dict[str, dict]:
    g = data.bank_guarantee
    posts = {
        "applicant": {"applicant_type": data.applicant_type or "", "applicant_name": data.applicant_name or "",
                      "host_federation": data.host_federation or "", "contact_name": data.contact_name or "",
                      "contact_email": data.contact_email or "",
                      **({"ioc_conflict_free": "y"} if data.ioc_conflict_free else {})},
        "dates_venue": {"opening_date": data.opening_date.isoformat() if data.opening_date else "",
                        "closing_date": data.closing_date.isoformat() if data.closing_date else "",
                        "venue_name": data.venue_name or "", "venue_city": data.venue_city or "",
                        "venue_country": data.venue_country or ""},
        "money": {"prize_fund_eur": str(data.prize_fund_eur or ""),
                  "fide_contribution_eur": str(data.fide_contribution_eur or ""),
                  **({"amounts_net_of_taxes": "y"} if data.amounts_net_of_taxes else {})},
        "commitments": {k: "y" for k in ("commits_fide_obligations", "commits_organisational_costs",
                                         "accepts_regulations") if getattr(data, k)},
        "hotel": {"hotel_name": data.hotel_name or "", "hotel_stars": str(data.hotel_stars or ""),
                  **{f"room_rates-{i}-{k}": str(v) for i, r in enumerate(data.room_rates)
                     for k, v in (("room_type", r.room_type), ("eur_per_night", r.eur_per_night))}},
        "inspection": {"wcoc_inspectors_invited": str(data.wcoc_inspectors_invited or ""),
                       **({"inspection_expenses_covered": "y"} if data.inspection_expenses_covered else {})},
        "guarantee": ({"guarantee_offered": "yes", "guarantee_bank": g.bank, "guarantee_amount_eur": str(g.amount_eur),
                       "guarantee_valid_until": g.valid_until.isoformat()} if g and g.offered
                      else {"guarantee_offered": "no"}),
        "signature": {"signatory_name": data.signatory_name or "", "signatory_position": data.signatory_position or "",
                      "signed_on": data.signed_on.isoformat() if data.signed_on else ""},
        "evaluation": {f"eval_{k}": v or "" for k, v in vars(data.evaluation).items()},
    }
    return posts


def fill_section(client, bid_id: int, section: str, values: dict):
    return client.post(f"/bids/{bid_id}/edit/{section}", data={"revision": revision(client, bid_id, section),
                                                               **values})


def fill_bid(client, bid_id: int, data: BidData, *, only: tuple[str, ...] | None = None) -> None:
    for section, values in section_posts(data).items():
        if only and section not in only:
            continue
        response = fill_section(client, bid_id, section, values)
        assert response.status_code == 302, (section, response.get_data(as_text=True)[:2000])


def upload(client, bid_id: int, kind: str, content: bytes = PDF, name: str = "letter.pdf"):
    import io

    from flask.testing import EnvironBuilder

    # The builder spools a large body to a temporary file: close it, or the test leaks it.
    builder = EnvironBuilder(client.application, path=f"/bids/{bid_id}/documents", method="POST",
                             data={"kind": kind, "file": (io.BytesIO(content), name)})
    environ = builder.get_environ()
    try:
        return client.open(environ)
    finally:
        environ["wsgi.input"].close()
        builder.close()


def start_bid(client, slug: str = "fwwcm-practice") -> int:
    response = client.post(f"/events/{slug}/bids/new")
    assert response.status_code == 302, response.get_data(as_text=True)[:500]
    return int(re.search(r"/bids/(\d+)/", response.location).group(1))
