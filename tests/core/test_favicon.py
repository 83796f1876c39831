"""The site's icon: served where browsers look for it (/favicon.ico, no 404 in every log) and linked from every
page."""

from __future__ import annotations


def test_the_favicon_is_served_and_linked(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 200
    assert response.mimetype == "image/vnd.microsoft.icon"
    assert response.data[:4] == b"\x00\x00\x01\x00"  # an ICO file's header
    response.close()
    assert '<link rel="icon" href="/favicon.ico"' in client.get("/").get_data(as_text=True)
