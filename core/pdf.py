"""The one PDF function: WeasyPrint over a template of templates/pdf/, with a URL fetcher limited to static/,
system fonts, no network, and a time limit."""

from __future__ import annotations

import concurrent.futures
import hashlib
import logging
from pathlib import Path
from urllib.parse import unquote, urlparse

from flask import current_app, render_template

log = logging.getLogger(__name__)
STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
_pool = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="pdf")


class PdfError(RuntimeError):
    """The PDF could not be made (a template error, a refused resource, or the time limit)."""


def _static_path(url: str) -> Path | None:
    parsed = urlparse(url)
    if parsed.scheme == "file":
        candidate = Path(unquote(parsed.path))
    elif parsed.scheme == "" and parsed.path.startswith("/static/"):
        candidate = STATIC_DIR / unquote(parsed.path[len("/static/"):])
    else:
        return None
    resolved = candidate.resolve()
    return resolved if resolved.is_relative_to(STATIC_DIR) and resolved.is_file() else None


class StaticOnlyFetcher:
    """Serve files under static/ and data: URLs; refuse everything else (no network, no other file)."""

    def __new__(cls):
        from weasyprint.urls import URLFetcher, URLFetcherResponse

        class _Fetcher(URLFetcher):
            def fetch(self, url, headers=None):
                if url.startswith("data:"):
                    return super().fetch(url, headers)
                path = _static_path(url)
                if path is None:
                    raise ValueError(f"PDF resources come from static/ only; refused {url}")
                return URLFetcherResponse(url, body=path.read_bytes(), headers={"Content-Type": _mime(path)})

        return _Fetcher(allowed_protocols=("file", "data"), timeout=2)


def static_only_fetcher(url: str):
    """The fetcher's decision for one URL (for tests and callers outside WeasyPrint)."""
    return StaticOnlyFetcher().fetch(url)


def _mime(path: Path) -> str:
    return {".css": "text/css", ".svg": "image/svg+xml", ".png": "image/png", ".woff2": "font/woff2"}.get(
        path.suffix, "application/octet-stream")


def html_to_pdf(html: str, *, timeout: float | None = None) -> bytes:
    """Render HTML to PDF bytes. Raises PdfError on failure or when the time limit (PDF_TIMEOUT_SECONDS) runs out."""
    from weasyprint import HTML

    limit = timeout or current_app.config.get("PDF_TIMEOUT_SECONDS", 30)

    def render() -> bytes:
        return HTML(string=html, base_url=str(STATIC_DIR) + "/", url_fetcher=StaticOnlyFetcher()).write_pdf()

    future = _pool.submit(render)
    try:
        return future.result(timeout=limit)
    except concurrent.futures.TimeoutError:
        raise PdfError(f"the PDF took longer than {limit} s to render") from None
    except Exception as exc:  # WeasyPrint raises many kinds; the caller gets one
        raise PdfError(f"the PDF could not be rendered: {exc}") from exc


def render_pdf(template: str, **context) -> bytes:
    """Render templates/pdf/<template> with `context` and return the PDF bytes; raises PdfError."""
    html = render_template(f"pdf/{template}", **context)
    return html_to_pdf(html)


def looks_like_pdf(data: bytes) -> bool:
    """Judged by content, not by name: the PDF header within the first kilobyte, as readers accept it."""
    return b"%PDF-" in data[:1024]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
