"""Provenance of every rule (issue 13): the regulations (by article), the call's bidding procedure, Gambit's
sanity checks; the regulations' text stored beside the call file with its SHA-256; and a second call whose
articles, dates and figures differ is cited by its own numbers with no code change."""

from __future__ import annotations

import hashlib
import re
import shutil
from datetime import date
from decimal import Decimal

import pytest

from bids.data import BidData
from bids.rules import check_bid
from core.findings import Outcome
from events.regulation import RegulationError, SourceKind, default_event_file, load_regulation_file
from scoring.rules import score_problems
from tests.bids.factories import valid_bid
from tests.events.callfiles import write_call

TOML = default_event_file().read_text(encoding="utf-8")
TEXT = default_event_file().parent / "fwwcm-2015-regulations.txt"
REG = load_regulation_file(default_event_file())


# ------------------------------------------------------------------------------------ the three kinds


def test_every_rule_has_one_kind_and_only_regulations_have_articles():
    kinds = {c.key: c for c in REG.all_citations()}
    assert {c.kind for c in kinds.values()} == set(SourceKind)
    for c in kinds.values():
        assert bool(c.article) == (c.kind is SourceKind.REGULATION)
        assert str(c).startswith({"regulation": "Art. ", "procedure": "Bidding procedure: ",
                                  "sanity_check": "Sanity check: "}[c.kind.value])


@pytest.mark.parametrize("key", ["bid_deadline", "guarantee_terms", "evaluation_method", "weights", "red_flags",
                                 "prize_fund_reference", "recusal", "duty_of_reasons"])
def test_what_the_regulations_leave_to_the_procedure_is_cited_as_the_procedure(key):
    """Art. 15.2(j): "Any bank guarantees as described in the bidding procedure"; Art. 15.5: the criteria "are to
    be viewed as a whole"; the text has no bid deadline, scale, weights, red flags, recusal or duty of reasons."""
    c = REG.citation(key)
    assert c.kind is SourceKind.PROCEDURE and c.article == "" and "Art." not in str(c)
    with pytest.raises(KeyError):
        REG.article(key)


def test_the_prize_fund_maximum_is_a_sanity_check_not_an_article():
    """Art. 15.2(c): "Proposed prize fund for the players (minimum 200,000 euros ...)" — a minimum, no maximum."""
    assert str(REG.citation("prize_fund_maximum")) == "Sanity check: prize fund figure"
    f = next(f for f in check_bid(REG, valid_bid(REG, prize_fund_eur=Decimal("60000000.00")), today=date(2015, 5, 1))
             if f.code == "15.2c.maximum")
    assert f.outcome is Outcome.WARNING and not f.blocks_submission and f.article == ""
    assert f.as_text().startswith("Sanity check: prize fund figure: a prize fund above €50,000,000.00 is unusual")
    assert f.as_text().endswith("(you entered €60,000,000.00).")


def test_a_key_in_two_kinds_or_a_procedure_naming_a_missing_field_is_refused(tmp_path):
    both = TOML.replace('rejection = "15.3"', 'rejection = "15.3"\nbid_deadline = "15.9"')
    with pytest.raises(RegulationError, match=r"procedure.rules.bid_deadline: is also in \[citations\]"):
        load_regulation_file(write_call(tmp_path, "both.toml", both))
    missing = TOML.replace('fields = ["event.bid_deadline"]', 'fields = ["event.bid_due"]')
    with pytest.raises(RegulationError, match=r"procedure.rules.bid_deadline.fields\[0\]: the call file has no"):
        load_regulation_file(write_call(tmp_path, "missing.toml", missing))


# ------------------------------------------------------------------------------------ the regulations' text


def test_the_text_is_stored_beside_the_call_file_and_checked_on_load(tmp_path):
    assert REG.regulations_text.sha256 == hashlib.sha256(TEXT.read_bytes()).hexdigest()
    assert REG.text.startswith(TEXT.read_text(encoding="utf-8")[:40])
    path = write_call(tmp_path, "call.toml", TOML)
    (tmp_path / TEXT.name).write_text(TEXT.read_text(encoding="utf-8").replace("200,000", "100,000"))
    with pytest.raises(RegulationError) as exc:
        load_regulation_file(path)
    assert str(exc.value).startswith(f"regulations_text.sha256: {TEXT.name} has SHA-256 ")
    assert f"the call file says {REG.regulations_text.sha256}" in str(exc.value)
    (tmp_path / TEXT.name).unlink()
    with pytest.raises(RegulationError, match="regulations_text.file: cannot read"):
        load_regulation_file(path)


def test_events_load_refuses_a_changed_text_without_a_traceback(runner, tmp_path):
    path = write_call(tmp_path, "call.toml", TOML)
    (tmp_path / TEXT.name).write_text("not the regulations")
    result = runner.invoke(args=["events", "load", str(path)])
    assert result.exit_code == 1 and "regulations_text.sha256" in result.output and "Traceback" not in result.output


def test_the_public_page_offers_the_text_and_the_articles_page(client, event):
    html = client.get("/events/fwwcm-2015").get_data(as_text=True)
    assert 'href="/events/fwwcm-2015/regulations.txt"' in html and 'href="/events/fwwcm-2015/articles"' in html
    assert "Bids due (Bidding procedure: bid deadline)" in html
    assert "Sanity check: prize fund figure" in html
    response = client.get("/events/fwwcm-2015/regulations.txt")
    assert response.status_code == 200 and response.mimetype == "text/plain"
    assert hashlib.sha256(response.data).hexdigest() == REG.regulations_text.sha256
    assert response.headers["X-Content-SHA256"] == REG.regulations_text.sha256


def test_the_articles_page_lists_every_article_and_where_it_is_applied(client, event):
    html = client.get("/events/fwwcm-2015/articles").get_data(as_text=True)
    body = html.split('id="articles"', 1)[1].split("</table>", 1)[0]
    for article in [*REG.citations.values(), REG.prize_fund.bid_article, REG.payments.article, "15.5(j)"]:
        assert f"<td>{article}</td>" in body, article
    assert "not described" not in body
    procedure = html.split('id="procedure"', 1)[1].split("</table>", 1)[0]
    assert "Bidding procedure: bank guarantee terms" in procedure and "guarantee.must_cover" in procedure
    assert "event.bid_deadline</code> = 2015-05-31 23:59 UTC" in procedure
    checks = html.split('id="checks"', 1)[1].split("</table>", 1)[0]
    assert "Sanity check: prize fund figure" in checks and "prize_fund.maximum</code> = 50000000.00" in checks


# ------------------------------------------------------------------------------------ a second call


def _renumbered(text: str) -> str:
    """The 2015 file with every article moved on by ten (15.2(c) -> 25.2(c), 7.4.4 -> 17.4.4), other dates and
    figures and its own slug: what next year's call with a renumbered text would be."""
    out, table = [], ""
    for line in text.splitlines():
        if line.startswith("["):
            table = line.strip("[]")
        m = re.match(r'^(\w+) = "(\d+)(.*)"$', line)
        if m and (table == "citations" or m.group(1).endswith("article")):
            line = f'{m.group(1)} = "{int(m.group(2)) + 10}{m.group(3)}"'
        elif not line.startswith("#"):  # prose of the file that names articles (a note, a quoted text) follows too
            line = re.sub(r"\b(Art\.|Articles?) (\d+)", lambda a: f"{a.group(1)} {int(a.group(2)) + 10}", line)
        out.append(line)
    return ("\n".join(out) + "\n").replace('slug = "fwwcm-2015"', 'slug = "renumbered-2031"').replace(
        'title = "FIDE Women\'s World Championship Match 2015"', 'title = "Renumbered Match 2031"').replace(
        'minimum = "200000.00"', 'minimum = "350000.00"').replace(
        "bid_deadline = 2015-05-31T23:59:59Z", "bid_deadline = 2015-05-20T12:00:00Z").replace(
        "window_start = 2015-10-11", "window_start = 2015-09-01").replace(
        "window_end = 2015-10-31", "window_end = 2015-09-25")


@pytest.fixture
def second(tmp_path):
    return load_regulation_file(write_call(tmp_path, "renumbered.toml", _renumbered(TOML)))


def test_the_second_call_really_differs(second):
    assert second.article("rejection") == "25.3" and second.prize_fund.bid_article == "25.2(c)"
    assert second.criterion("c").article == "25.5(c)" and second.prize_fund.minimum == Decimal("350000.00")
    assert second.schedule.window_start == date(2015, 9, 1)


def test_the_compliance_report_of_the_second_call_cites_its_own_articles(second):
    findings = check_bid(second, BidData(), today=date(2015, 5, 1))
    before = {f.code: f.article for f in check_bid(REG, BidData(), today=date(2015, 5, 1))}

    def bumped(article: str) -> str:
        head, _, rest = article.partition(".") if "." in article else (article, "", "")
        return f"{int(head) + 10}{'.' if rest else ''}{rest}"

    for f in findings:
        assert f.article == (bumped(before[f.code]) if before[f.code] else ""), f.code
    text = {f.code: f.as_text() for f in findings}
    assert text["15.2b.venue_name"].startswith("Art. 25.2(b): ")
    assert text["15.2e.commitment"] == ("Art. 25.2(e): the applicant must commit to cover all financial "
                                        "obligations to FIDE of Art. 24.")
    assert text["12.2.ioc"].startswith("Art. 22.2: ")
    bid = valid_bid(second, prize_fund_eur=Decimal("300000.00"))
    minimum = next(f for f in check_bid(second, bid, today=date(2015, 5, 1)) if f.code == "15.2c.minimum")
    assert minimum.as_text() == ("Art. 25.2(c): the prize fund must be at least €350,000.00 net of local taxes "
                                 "(you entered €300,000.00).")
    problems = score_problems(second, {"c": Decimal(5)}, {}, final=True)
    assert problems["c"] == ("Bidding procedure: evaluation method (criterion 25.5(c)): a score of 5 (Excellent) "
                             "needs a comment saying why.")


def test_the_public_and_articles_pages_of_the_second_call_cite_its_own_numbers(client, runner, tmp_path):
    path = write_call(tmp_path, "renumbered.toml", _renumbered(TOML))
    result = runner.invoke(args=["events", "load", str(path)])
    assert result.exit_code == 0, result.output
    for url in ("/events/renumbered-2031", "/events/renumbered-2031/articles"):
        html = client.get(url).get_data(as_text=True)
        assert "Renumbered Match 2031" in html or "FWWCM 2015" in html
        cited = set(re.findall(r"Art\. (\d+)", html)) | set(re.findall(r"<td>(?:Art\. )?(\d+)[.(]", html))
        assert cited and all(int(n) >= 11 for n in cited), (url, sorted(cited))
        # The 2015 file's 15.x articles are 25.x here (its 5.1 and 5.2 are now 15.1 and 15.2, without a letter).
        assert not re.search(r"Art\. 15\.(2\(|[3-6])|<td>15\.(2\(|[3-6])|\(15\.5\(", html), url
    html = client.get("/events/renumbered-2031").get_data(as_text=True)
    # Its deadline has passed: the page says what happens next (Art. 25.3, 25.5), not how to bid (Art. 25.1).
    assert "may reject one that does not meet them (Art. 25.3)" in html and "Art. 25.2(j), 25.6.2" in html
    assert "€350,000.00" in html and "20 May 2015" in html


def test_a_renumbered_file_needs_no_text_of_its_own_to_differ(tmp_path):
    """The text beside the file is what its sha256 says, whatever the file's name."""
    shutil.copy(TEXT, tmp_path / "other-name.txt")
    renamed = _renumbered(TOML).replace('file = "fwwcm-2015-regulations.txt"', 'file = "other-name.txt"')
    (tmp_path / "call.toml").write_text(renamed)
    assert load_regulation_file(tmp_path / "call.toml").regulations_text.file == "other-name.txt"
