"""A saved draft that still fails rules says so: in the message after saving, beside each field (tied to it for
assistive technology: aria-describedby and aria-invalid, although the value's format is right), and in the
section menu's badge, in words a screen reader reads (not only in a title)."""

import re

import pytest

from tests.bids.web import fill_section, start_bid


@pytest.fixture(autouse=True)
def _practice(practice):
    return practice


def tag(page: str, field_id: str) -> str:
    return re.search(rf'<input[^>]*id="{field_id}"[^>]*>', page).group(0)


def test_saving_a_draft_that_fails_rules_says_which_in_the_message_beside_the_fields_and_in_the_menu(client,
                                                                                                    login_as):
    login_as("bidder")
    bid_id = start_bid(client)
    response = fill_section(client, bid_id, "money", {"prize_fund_eur": "150000.00", "fide_contribution_eur": "",
                                                      "amounts_net_of_taxes": "y"})
    assert response.status_code == 302
    page = client.get(response.location).get_data(as_text=True)
    assert ('<p class="flash warning">Prize fund and contribution to FIDE: saved. 2 rules of this section still '
            "fail; the bid cannot be submitted until they pass. Art. 15.2(c): the prize fund must be at least "
            "€200,000.00 net of local taxes (you entered €150,000.00). Art. 15.2(d): the bid must state the "
            "contribution to FIDE.</p>") in page
    # Each failed rule is tied to its field, whose format was right (no error of its own).
    assert tag(page, "prize_fund_eur") == ('<input aria-describedby="prize_fund_eur-rules" aria-invalid="true" '
                                           'id="prize_fund_eur" name="prize_fund_eur" type="text" value="150000.00">')
    assert ('id="prize_fund_eur-rules">\n<p class="rule-note"><span class="visually-hidden">Rule not met: </span>'
            "Art. 15.2(c): the prize fund must be at least €200,000.00 net of local taxes (you entered "
            "€150,000.00).</p>") in page
    assert 'aria-invalid="true"' in tag(page, "fide_contribution_eur")
    # The menu's badge says what its figure counts, to a screen reader too; a complete section says so.
    assert '<span class="badge fail">2<span class="visually-hidden"> rules not met</span></span>' in page
    assert "title=" not in page[page.index('class="sidenav"'):page.index("</nav>", page.index('class="sidenav"'))]


def test_a_section_that_passes_its_rules_is_saved_without_a_warning(client, login_as):
    login_as("bidder")
    bid_id = start_bid(client)
    response = fill_section(client, bid_id, "money", {"prize_fund_eur": "250000.00",
                                                      "fide_contribution_eur": "50000.00",
                                                      "amounts_net_of_taxes": "y"})
    page = client.get(response.location).get_data(as_text=True)
    assert '<p class="flash success">Prize fund and contribution to FIDE: saved.</p>' in page
    assert 'aria-invalid' not in tag(page, "prize_fund_eur")
    assert ('<span class="badge pass"><span aria-hidden="true">✓</span><span class="visually-hidden">complete</span>'
            '</span>') in page
