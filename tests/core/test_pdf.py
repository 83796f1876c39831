import io

import pytest
from pypdf import PdfReader

from core.pdf import PdfError, html_to_pdf, static_only_fetcher


def test_a_pdf_is_rendered_with_page_numbers_and_the_footer(app):
    html = ('<html><head><link rel="stylesheet" href="css/pdf.css"></head><body>'
            '<div class="running-footer">Dossier D-1 · regulation v1</div>'
            + "".join(f"<h2>Part {i}</h2><p>{'text ' * 400}</p>" for i in range(6)) + "</body></html>")
    with app.app_context():
        data = html_to_pdf(html)
    reader = PdfReader(io.BytesIO(data))
    pages = len(reader.pages)
    assert pages >= 2
    last = reader.pages[-1].extract_text()
    assert f"Page {pages} of {pages}" in last and "Dossier D-1" in last


def test_the_fetcher_serves_static_files_only():
    with pytest.raises(ValueError, match="static/ only"):
        static_only_fetcher("https://example.org/logo.png")
    with pytest.raises(ValueError, match="static/ only"):
        static_only_fetcher("file:///etc/passwd")
    assert static_only_fetcher("/static/css/pdf.css").content_type == "text/css"
    with pytest.raises(ValueError, match="static/ only"):
        static_only_fetcher("/static/../config.py")


def test_a_remote_resource_does_not_reach_the_network(app):
    html = '<html><body><img src="http://10.255.255.1/x.png"><p>still renders</p></body></html>'
    with app.app_context():
        data = html_to_pdf(html, timeout=20)
    assert "still renders" in PdfReader(io.BytesIO(data)).pages[0].extract_text()


def test_the_time_limit_is_enforced(app):
    html = "<html><body>" + "<p>x</p>" * 3000 + "</body></html>"
    with app.app_context(), pytest.raises(PdfError, match="longer than"):
        html_to_pdf(html, timeout=0.001)
