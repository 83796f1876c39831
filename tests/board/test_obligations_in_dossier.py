"""Issue 23: the dossier the Board reads shows every obligation of the regulations a bid accepts, read back from the
PDF."""

import io

from pypdf import PdfReader

from tests.conftest import login
from tests.obligations_written import missing_from


def test_the_dossier_shows_every_obligation_the_bid_accepts(app, make, scored):
    """Art. 4, 8.2, 8.3, 10.2, 12.1, 12.4.2, 12.4.3 and 7.4.3: what the organizer provides in kind and undertakes,
    with their articles, in the dossier beside the bid's costs."""
    client = app.test_client()
    make.user(email="board-reader@example.org", roles=("board",), federation="FRA")
    login(client, "board-reader@example.org")
    response = client.get(f"/board/fwwcm-2015/bids/{scored['lviv']}/dossier.pdf")
    assert response.status_code == 200
    text = " ".join(page.extract_text() for page in PdfReader(io.BytesIO(response.data)).pages)
    response.close()
    assert "What the organizer undertakes" in text
    assert missing_from(text[text.index("Obligations in kind"):]) == []
