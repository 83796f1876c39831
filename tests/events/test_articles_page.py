"""Every article of the regulations, article by article (issue 23): the call file's [[articles]] table lists each
numbered or lettered article of the text with what Gambit does with it, every article the file cites is applied,
and the public articles page shows the counts, the readings and a filter by status."""

from __future__ import annotations

import dataclasses
import re
import tomllib

import pytest
from markupsafe import escape

from events.provenance import STATUS_LABELS, article_table, articles_to_cover, text_articles
from events.regulation import (
    ARTICLE_STATUSES,
    ArticleEntry,
    RegulationError,
    default_event_file,
    load_regulation_file,
)
from tests.events.callfiles import write_call

TOML = default_event_file().read_text(encoding="utf-8")
REG = load_regulation_file(default_event_file())
LISTED = {a.article: a for a in REG.articles}
URL = "/events/fwwcm-2015/articles"


# ------------------------------------------------------------------------------------------ the table is complete


def test_the_text_is_read_item_by_item():
    """Items at the start of a line and after a sentence on the same line ("... move one. 3.5.2 The games",
    "... 2015. e) Commitment"), lettered items under their article, and titles alone left out."""
    found = {a.article: a for a in text_articles(REG.text)}
    for article in ("1.1", "3.5.2", "3.7.1(a)", "4", "4(b)", "7.1(g)", "7.4.1(b)", "15.2", "15.2(e)", "15.2(k)",
                    "15.5(g)", "15.5(j)", "15.6.2", "16"):
        assert article in found, article
    titles = {a.article for a in found.values() if a.is_title}
    assert {"1", "3.5", "3.8", "11.1", "14", "15", "15.6"} <= titles
    assert not {"4", "7.3.1", "9.1", "15.5", "16"} & titles  # an article with words of its own besides its items
    assert found["3.5.1"].text.endswith("starting from move one.")  # ends where 3.5.2 starts, on the same line
    assert len(articles_to_cover(REG.text)) == 135


def test_every_status_has_a_label_on_the_page():
    assert list(STATUS_LABELS) == list(ARTICLE_STATUSES)


def test_every_article_of_the_text_is_in_the_table_with_a_status():
    missing = [a for a in articles_to_cover(REG.text) if a not in LISTED]
    assert missing == []
    for article in articles_to_cover(REG.text):
        entry = LISTED[article]
        assert entry.status in ARTICLE_STATUSES
        assert entry.reason if entry.status == "not_applicable" else entry.where, article


def test_the_table_lists_no_article_the_text_does_not_have():
    table = article_table(REG)
    assert table.unknown == [] and table.left_out == [] and table.cited_not_applied == []
    assert len(table.rows) == len(REG.articles)


def test_an_article_left_out_cited_but_not_applied_or_unknown_is_told():
    dropped = tuple(a for a in REG.articles if a.article != "6.4")
    assert article_table(dataclasses.replace(REG, articles=dropped)).left_out == ["6.4"]
    waved = tuple(ArticleEntry(a.article, "not_applicable", reason="no") if a.article == "15.3" else a
                  for a in REG.articles)
    assert article_table(dataclasses.replace(REG, articles=waved)).cited_not_applied == ["15.3"]
    extra = (*REG.articles, ArticleEntry("15.7", "applied", where="nowhere"))
    assert article_table(dataclasses.replace(REG, articles=extra)).unknown == ["15.7"]


def _cited(node, table: str = "") -> set[str]:
    """Every article the call file cites: the values of [citations] and of every key ending in "article"."""
    out: set[str] = set()
    if isinstance(node, list):
        for item in node:
            out |= _cited(item, table)
    elif isinstance(node, dict):
        for key, value in node.items():
            if table == "citations" and isinstance(value, str):
                out.add(value)
            elif key.endswith("article") and isinstance(value, str):
                out.add(value)
            elif key != "articles":  # the table of articles itself cites nothing
                out |= _cited(value, key)
    return out


def test_every_article_the_call_file_cites_is_listed_as_bearing_on_the_call():
    cited = _cited(tomllib.loads(TOML))
    assert {"15.3", "15.2(c)", "13.1", "14", "7.4.4", "15.5(j)"} <= cited  # the walk finds what it looks for
    wrong = {a: LISTED[a].status if a in LISTED else "missing" for a in cited
             if a not in LISTED or LISTED[a].status == "not_applicable"}
    assert wrong == {}


@pytest.mark.parametrize("article", ["2.2", "10.3", "13.1", "15.2(a)", "14.3", "15.5", "15.1"])
def test_the_ambiguous_articles_say_how_gambit_reads_them(article):
    assert LISTED[article].reading and LISTED[article].status != "not_applicable"


def test_the_readings_say_what_the_brief_decided():
    assert "stricter rule of Art. 10.3 decides" in LISTED["2.2"].reading
    assert "not required to fall inside the window" in LISTED["15.2(a)"].reading
    assert "bidding procedure's rule on a tie" in LISTED["15.5"].reading
    assert "sponsor's bid only" in LISTED["15.1"].reading
    assert "recorded" in LISTED["14.3"].reading and "never by default" in LISTED["14.3"].reading


# ------------------------------------------------------------------------------------------ the file is checked


def _entry(article: str) -> str:
    """The TOML of the [[articles]] entry of `article`."""
    m = re.search(rf'\[\[articles\]\]\narticle = "{re.escape(article)}"\n(?:[a-z]+ = .*\n?)*', TOML)
    assert m, article
    return m.group(0)


@pytest.mark.parametrize(("change", "message"), [
    (lambda t: t.replace(_entry("15.3"), _entry("15.3").replace('status = "applied"', 'status = "done"')),
     r"articles\[\d+\]\.status: use applied, procedure, sanity or not_applicable, got 'done'"),
    (lambda t: t.replace(_entry("6.4"), _entry("6.4").replace("reason = ", "where = ")),
     r"articles\[\d+\]\.reason: article 6\.4 is not_applicable: say why"),
    (lambda t: t.replace(_entry("15.3"), _entry("15.3").replace("where = ", "reason = ")),
     r"articles\[\d+\]\.where: article 15\.3 is applied: say where Gambit applies it"),
    (lambda t: t.replace(_entry("15.3"), _entry("15.3").rstrip("\n") + '\nreason = "also this"\n'),
     r"articles\[\d+\]\.reason: article 15\.3 is applied: only a not_applicable article gives a reason"),
    (lambda t: t + "\n" + _entry("15.3"),
     r"articles\[\d+\]\.article: article 15\.3 is listed twice"),
    (lambda t: t.replace(_entry("15.3"), _entry("15.3").replace('status = "applied"', 'statut = "applied"')),
     r"articles\[\d+\]\.statut: unknown key"),
])
def test_a_bad_row_of_the_table_is_refused_by_name(tmp_path, change, message):
    changed = change(TOML)
    assert changed != TOML
    with pytest.raises(RegulationError, match=message):
        load_regulation_file(write_call(tmp_path, "call.toml", changed))


def _without_table(text: str) -> str:
    return text[:text.index("\n# Every article of the regulations")] + "\n"


def test_the_table_is_optional(tmp_path):
    reg = load_regulation_file(write_call(tmp_path, "call.toml", _without_table(TOML)))
    assert reg.articles == ()
    table = article_table(reg)
    assert table.rows == [] and table.left_out == [] and table.cited_not_applied == []


# ------------------------------------------------------------------------------------------ the page


def _section(html: str, marker: str) -> str:
    return html.split(marker, 1)[1].split("</section>", 1)[0]


def test_the_page_shows_every_article_the_counts_and_the_readings_without_login(client, event):
    response = client.get(URL)
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    counts = html.split('id="status-counts"', 1)[1].split("</dl>", 1)[0]
    for status, label in STATUS_LABELS.items():
        n = sum(1 for a in REG.articles if a.status == status)
        assert re.search(rf"<dt>{label}</dt><dd>(?:<a [^>]*>)?{n}<", counts), (status, n)
    assert re.search(rf"<dt>All articles</dt><dd>{len(REG.articles)}<", counts)
    body = html.split('id="by-article"', 1)[1].split("</table>", 1)[0]
    assert body.count('<tr class="status-') == len(REG.articles)
    assert '<th scope="row">15.2(a)</th>' in body and '<th scope="row">6.4</th>' in body
    assert str(escape(LISTED["6.4"].reason)) in body and str(escape(LISTED["15.3"].where)) in body
    assert "<code>citations.rejection</code>" in body  # where the call file cites the article
    readings = _section(html, 'id="readings"')
    for entry in REG.articles:
        if entry.reading:
            assert str(escape(entry.reading)) in readings, entry.article
    assert 'id="reading-15-2-a"' in readings and 'href="#reading-15-2-a"' in body
    assert 'href="/events/fwwcm-2015"' in html  # back to the call's public page
    assert 'id="article-gaps"' not in html


def test_the_page_filters_by_status(client, event):
    html = client.get(URL, query_string={"status": "not_applicable"}).get_data(as_text=True)
    body = html.split('id="by-article"', 1)[1].split("</table>", 1)[0]
    n = sum(1 for a in REG.articles if a.status == "not_applicable")
    assert body.count('<tr class="status-not_applicable">') == n == body.count('<tr class="status-')
    assert f"{n} of {len(REG.articles)} articles: does not bear on the call" in body
    assert '<option value="not_applicable" selected>' in html
    everything = client.get(URL, query_string={"status": "nonsense"}).get_data(as_text=True)
    assert everything.split('id="by-article"', 1)[1].count('<tr class="status-') == len(REG.articles)


def test_the_public_page_links_to_the_articles_page(client, event):
    html = client.get("/events/fwwcm-2015").get_data(as_text=True)
    assert f'href="{URL}"' in html


def test_a_call_without_the_table_still_has_its_articles_page(client, runner, tmp_path):
    text = _without_table(TOML).replace('slug = "fwwcm-2015"', 'slug = "no-table-2031"').replace(
        'title = "FIDE Women\'s World Championship Match 2015"', 'title = "No Table Match 2031"')
    result = runner.invoke(args=["events", "load", str(write_call(tmp_path, "call.toml", text))])
    assert result.exit_code == 0, result.output
    response = client.get("/events/no-table-2031/articles")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert 'id="no-article-table"' in html and 'id="by-article"' not in html and 'id="readings"' not in html
    assert "<td>15.3</td>" in html  # the call file's citations are still listed


def test_the_page_tells_an_article_the_table_leaves_out(client, runner, tmp_path):
    text = TOML.replace(_entry("6.4"), "").replace('slug = "fwwcm-2015"', 'slug = "gap-2031"').replace(
        'title = "FIDE Women\'s World Championship Match 2015"', 'title = "Gap Match 2031"')
    result = runner.invoke(args=["events", "load", str(write_call(tmp_path, "call.toml", text))])
    assert result.exit_code == 0, result.output
    html = client.get("/events/gap-2031/articles").get_data(as_text=True)
    gaps = html.split('id="article-gaps"', 1)[1].split("</div>", 1)[0]
    assert "Articles of the text this table does not list: <code>6.4</code>." in gaps
