import io

import pytest
from pypdf import PdfReader

from evidence.pdf import PdfError, html_to_pdf, static_only_fetcher


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
    # Long enough to outlast a millisecond, short enough that the render the caller abandons frees its thread of the
    # two-thread pool before the next test renders.
    html = "<html><body>" + "<p>x</p>" * 200 + "</body></html>"
    with app.app_context(), pytest.raises(PdfError, match="longer than"):
        html_to_pdf(html, timeout=0.001)


def test_the_collector_is_held_off_while_a_pdf_renders_and_comes_back_after(app, monkeypatch):
    """WeasyPrint's objects would otherwise make each automatic collection walk the whole process (see
    evidence.pdf.CollectorPause): the stylesheet is fetched in the middle of the render, and the collector is off
    then; it is on again once the render is done."""
    import gc

    from evidence import pdf

    seen = []
    fetch = pdf.StaticOnlyFetcher.fetch

    def noting(self, url, headers=None):
        seen.append(gc.isenabled())
        return fetch(self, url, headers)

    monkeypatch.setattr(pdf.StaticOnlyFetcher, "fetch", noting)
    assert gc.isenabled() and not pdf.CollectorPause.held()
    with app.app_context():
        html_to_pdf('<html><head><link rel="stylesheet" href="css/pdf.css"></head><body><p>x</p></body></html>')
    assert seen == [False]
    assert gc.isenabled()


def test_a_render_past_its_time_limit_does_not_keep_the_collector_off(app):
    """The render goes on in its thread after the caller gave up on it; the collector does not wait for it."""
    import gc

    from evidence import pdf

    html = "<html><body>" + "<p>x</p>" * 200 + "</body></html>"
    with app.app_context(), pytest.raises(PdfError, match="longer than"):
        html_to_pdf(html, timeout=0.001)
    assert gc.isenabled() and not pdf.CollectorPause.held()


def test_the_collector_comes_back_only_when_the_last_of_two_renders_ends_and_stays_off_if_it_was():
    import gc
    import threading

    from evidence.pdf import CollectorPause

    first_in, second_done = threading.Event(), threading.Event()
    states = []

    def first():
        with CollectorPause():
            first_in.set()
            second_done.wait(5)
            states.append(("first, the second done", gc.isenabled()))

    thread = threading.Thread(target=first)
    thread.start()
    first_in.wait(5)
    with CollectorPause():
        states.append(("second", gc.isenabled()))
    states.append(("second ended, first running", gc.isenabled()))
    second_done.set()
    thread.join(5)
    assert states == [("second", False), ("second ended, first running", False), ("first, the second done", False)]
    assert gc.isenabled()
    let_go = CollectorPause()
    let_go.release()
    with let_go:  # let go of before its render started: it holds nothing
        assert gc.isenabled()
    gc.disable()
    try:
        with CollectorPause():
            pass
        assert not gc.isenabled()  # whoever turned it off keeps it off
    finally:
        gc.enable()
