"""The scoring demo fills every scoring page, and running it again changes nothing."""

from sqlalchemy import func, select

from core.db import db, utcnow
from demo.scoring import seed_scoring_demo
from events.services import get_event
from evidence.audit import AuditEntry
from scoring.queries import build_ranking, load_scoring
from tests.conftest import login


def test_the_scoring_demo_scores_the_demo_bids_with_a_recusal_a_conflict_and_a_weights_version(runner, app):
    result = runner.invoke(args=["seed", "--demo"])
    assert result.exit_code == 0
    assert "demo weights: version 1" in result.output
    with app.app_context():
        event = get_event("fwwcm-2015")
        assert event.status == "decided"  # seed --demo goes on through the board's decision
        report = build_ranking(load_scoring(event))
        assert len(report.ranking.bids) == 3 and all(b.total is not None for b in report.ranking.bids)
        assert report.weights_version.number == 1
        assert {(r.member.email, r.bid.host_federation, r.reason.split(":")[0]) for r in report.recusals} == {
            ("wcoc2@example.org", "UKR", "member of the host federation (UKR)"),
            ("wcoc3@example.org", "UAE", "declared a conflict of interest")}
        assert report.sensitivity.summary
        entries = db.session.scalar(select(func.count()).select_from(AuditEntry))
        assert seed_scoring_demo(now=utcnow()) == []
        assert db.session.scalar(select(func.count()).select_from(AuditEntry)) == entries
    client = app.test_client()
    from demo.users import DEMO_PASSWORD

    assert login(client, "wcoc@example.org", DEMO_PASSWORD).status_code == 302
    for url in ("/events/fwwcm-2015/scoring/", "/events/fwwcm-2015/scoring/ranking"):
        response = client.get(url)
        assert response.status_code == 200, url
    assert "Weighted total" in response.get_data(as_text=True)
