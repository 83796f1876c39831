"""templates/_macros/finance.html: the obligations table, the schedule and the prize shares, as plain HTML."""

from datetime import date
from decimal import Decimal
from html.parser import HTMLParser
from pathlib import Path

import pytest
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from core.money import format_day, format_eur
from events.regulation import default_event_file, load_regulation_file
from finance.rules import BidTerms, obligations, payment_schedule, prize_shares

D = Decimal
REG = load_regulation_file(default_event_file())
TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
VOID = {"br", "hr", "img", "input", "meta", "link", "col", "wbr"}


@pytest.fixture(params=[False, True], ids=["plain", "trimmed"])
def macros(request):
    """The macro module, in a plain environment and in one set up like the app's (trim and lstrip blocks)."""
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(),
                      undefined=StrictUndefined, trim_blocks=request.param, lstrip_blocks=request.param)
    env.filters["eur"] = format_eur
    env.filters["day"] = format_day
    return env.get_template("_macros/finance.html").module


def terms(**kw):
    base = {"prize_fund": D("200000"), "fide_contribution": D("40000"), "guarantee_offered": True,
            "venue_country": "CN", "signal_blocker_required": True}
    return BidTerms(**(base | kw))


class _Balance(HTMLParser):
    """Fails on a closing tag that does not close the last opened one; records inline style and script."""

    def __init__(self):
        super().__init__()
        self.stack, self.problems = [], []

    def handle_starttag(self, tag, attrs):
        if tag == "script" or any(name == "style" or name.startswith("on") for name, _ in attrs):
            self.problems.append(f"<{tag} {attrs}>")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack.pop() != tag:
            self.problems.append(f"unbalanced </{tag}>")


def well_formed(html: str) -> None:
    parser = _Balance()
    parser.feed(html)
    parser.close()
    assert not parser.problems, parser.problems
    assert not parser.stack, f"unclosed {parser.stack}"


def test_obligations_table_shows_every_line_with_article_payee_and_amount(macros):
    ob = obligations(REG, terms())
    html = str(macros.obligations_table(ob))
    well_formed(html)
    for ln in ob.lines:
        assert f'id="obligation-{ln.key}"' in html
        assert f"<td>{ln.article}</td>" in html
    assert "up to €8,000.00" in html
    assert "€200,000.00" in html and "€40,000.00" in html and "€15,000.00" in html
    assert html.count("€3,000.00") == 3  # 14.4 and two travel contributions
    assert '<time datetime="2015-08-31">31 August 2015</time>' in html
    assert 'class="table obligations"' in html and 'class="num"' in html


def test_obligations_table_totals_show_fixed_amounts_and_up_to(macros):
    html = str(macros.obligations_table(obligations(REG, terms())))
    assert "€297,500.00" in html  # to FIDE
    assert "€9,000.00" in html  # to the players directly
    assert "€306,500.00" in html  # fixed amounts
    assert "up to €314,500.00" in html  # with the signal blocker at its cap


def test_obligations_table_without_capped_items_has_no_up_to_total(macros):
    html = str(macros.obligations_table(obligations(REG, terms(signal_blocker_required=False))))
    well_formed(html)
    assert "up to" not in html


def test_obligations_table_escapes_text_and_states_the_contract_rule_without_a_guarantee(macros):
    html = str(macros.obligations_table(obligations(REG, terms(guarantee_offered=False))))
    well_formed(html)
    assert "Hou Yifan&#39;s team" in html
    assert "Art. 15.6.1" in html
    assert "<time" not in html


def test_schedule_list_gives_each_instalment_its_date_amount_and_lines(macros):
    html = str(macros.schedule_list(payment_schedule(REG, terms())))
    well_formed(html)
    assert '<time datetime="2015-06-30">30 June 2015</time>: <span class="num">€100,000.00</span>' in html
    assert '<time datetime="2015-08-31">31 August 2015</time>: <span class="num">€197,500.00</span>' in html
    assert html.count("<li>Art. 14.5,") == len(REG.obligations.stipends)
    assert "In all into FIDE's account: <span class=\"num\">€297,500.00</span>" in html
    assert "up to €8,000.00" in html  # in the note: paid at cost


def test_schedule_list_without_a_guarantee_says_the_contract_sets_the_terms(macros):
    html = str(macros.schedule_list(payment_schedule(REG, terms(guarantee_offered=False))))
    well_formed(html)
    assert "<ol" not in html
    assert "the contract must set the terms of payment (Art. 15.6.1)" in html


def test_prize_shares_table_shows_each_player_and_the_balance_due(macros):
    ps = prize_shares(REG, prize_fund=D("200000"), winner_federation="CHN", decided_in="regular",
                      venue_country="CN", completed_on=date(2015, 10, 29))
    html = str(macros.prize_shares_table(ps))
    well_formed(html)
    assert "Hou Yifan (CHN), winner" in html and "Mariya Muzychuk (UKR)" in html
    assert "€114,000.00" in html and "€76,000.00" in html and "€10,000.00" in html
    assert "&minus;&nbsp;€50,000.00" in html
    assert "€64,000.00" in html and "€36,000.00" in html
    assert '<time datetime="2015-11-08">8 November 2015</time>' in html
