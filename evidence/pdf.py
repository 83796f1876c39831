"""The one PDF function: WeasyPrint over a template of templates/pdf/, with a URL fetcher limited to static/,
system fonts, no network, and a time limit.

Every PDF it makes is tagged and archival: PDF/A-3 level A (WeasyPrint's "pdf/a-3a": the structure tree of the
HTML, its language and title, an sRGB output intent, fonts embedded) that also declares PDF/UA-1 in its XMP
metadata. A document can carry files (`EmbeddedFile`), such as the data it was made from, as PDF/A-3 associated
files, so an archive reads them without Gambit. What a template must give for that: `lang` on <html>, a <title>,
headings in order, <th> header cells, and a <title> in every <svg> (its alternative text).
"""

from __future__ import annotations

import concurrent.futures
import gc
import hashlib
import io
import logging
import re
import threading
import warnings
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import unquote, urlparse
from xml.etree import ElementTree

from flask import current_app, render_template
from pypdf import PdfReader
from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject
from weasyprint import HTML, Attachment
from weasyprint import pdf as weasyprint_pdf
from weasyprint.css import ColorProfile
from weasyprint.urls import URLFetcher, URLFetcherResponse

log = logging.getLogger(__name__)
STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
_pool = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="pdf")


class CollectorPause:
    """Python's cyclic garbage collector held off while WeasyPrint renders (the reference counts still free what
    they can). A render builds hundreds of thousands of container objects, and each automatic collection they
    trigger walks the whole process: the app's modules and whatever else a worker holds. That cost a board pack
    of ten bids a quarter of its time (measured: 620 ms against 450 ms).

    Each render holds a pause while it runs (`with pause:`); the collector comes back, as it was before the first,
    when no pause is held any more, and its next collection takes the renders' cyclic garbage. A render that ran
    out of its time limit goes on in its thread, but its pause is let go (`release`) as the caller gives up on
    it: the collector never waits for a render nobody waits for."""

    _held: set[CollectorPause] = set()
    _was_enabled = True
    _lock = threading.Lock()

    def __init__(self) -> None:
        self.released = False

    def __enter__(self) -> CollectorPause:
        cls = CollectorPause
        with cls._lock:
            if not self.released:  # let go before the render even started: nothing to hold
                if not cls._held:
                    cls._was_enabled = gc.isenabled()
                    gc.disable()
                cls._held.add(self)
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def release(self) -> None:
        """Let go of this pause (again: nothing happens); the collector comes back when none is held."""
        cls = CollectorPause
        with cls._lock:
            self.released = True
            if self in cls._held:
                cls._held.discard(self)
                if not cls._held and cls._was_enabled:
                    gc.enable()

    @classmethod
    def held(cls) -> int:
        """How many renders hold the collector off now."""
        with cls._lock:
            return len(cls._held)


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


class StaticOnlyFetcher(URLFetcher):
    """Serve files under static/ and data: URLs; refuse everything else (no network, no other file)."""

    def __init__(self) -> None:
        super().__init__(allowed_protocols=("file", "data"), timeout=2)

    def fetch(self, url, headers=None):
        """The resource at `url`. Raises ValueError for anything outside static/ that is not a data: URL."""
        if url.startswith("data:"):
            return super().fetch(url, headers)
        path = _static_path(url)
        if path is None:
            raise ValueError(f"PDF resources come from static/ only; refused {url}")
        return URLFetcherResponse(url, body=path.read_bytes(), headers={"Content-Type": _mime(path)})


def static_only_fetcher(url: str):
    """The fetcher's decision for one URL (for tests and callers outside WeasyPrint)."""
    return StaticOnlyFetcher().fetch(url)


def _mime(path: Path) -> str:
    return {".css": "text/css", ".svg": "image/svg+xml", ".png": "image/png", ".woff2": "font/woff2"}.get(
        path.suffix, "application/octet-stream")


# WeasyPrint's PDF/A-3 level A: tagged (structure tree, /MarkInfo, /Lang, the title shown), sRGB output intent,
# fonts embedded, files associated through /AF. PDF/UA-1 is declared on top of it by _finish.
PDF_VARIANT = "pdf/a-3a"
PDF_UA_PART = "1"
# The output intent's sRGB profile, WeasyPrint's own, read once: asked for as "srgb", WeasyPrint opens the file on
# every render and never closes it. Each render gets a profile object of its own (WeasyPrint writes into it).
_SRGB_ICC = (Path(weasyprint_pdf.__file__).parent / "sRGB2014.icc").read_bytes()
_OUTPUT_INTENT = "gambit-srgb"


def _srgb_profile() -> ColorProfile:
    return ColorProfile(io.BytesIO(_SRGB_ICC), "sRGB2014.icc", "relative-colorimetric", (["r"], ["g"], ["b"]))

_RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
_PDFAID = "http://www.aiim.org/pdfa/ns/id/"
_PDFUAID = "http://www.aiim.org/pdfua/ns/id/"
_PDF = "http://ns.adobe.com/pdf/1.3/"
# The prefixes PDF/A prescribes for its extension schema container (validators check them, not only the URIs);
# ElementTree's registry is global, as WeasyPrint's own registrations are.
for _prefix, _uri in (("pdfuaid", _PDFUAID), ("pdfaExtension", "http://www.aiim.org/pdfa/ns/extension/"),
                      ("pdfaSchema", "http://www.aiim.org/pdfa/ns/schema#"),
                      ("pdfaProperty", "http://www.aiim.org/pdfa/ns/property#")):
    ElementTree.register_namespace(_prefix, _uri)
_XMP_HEADER = b'<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?>\n<x:xmpmeta xmlns:x="adobe:ns:meta/">'
_XMP_FOOTER = b'</x:xmpmeta>\n<?xpacket end="r"?>'
# PDF/A admits XMP properties of its own schemas and of those the file describes (ISO 19005-3, 6.6.2.3); the
# PDF/UA identification is not one of PDF/A's, so the file describes it, as PDF/A's extension schema says.
_PDFUA_EXTENSION = f"""<rdf:Description xmlns:rdf="{_RDF}" rdf:about=""
 xmlns:pdfaExtension="http://www.aiim.org/pdfa/ns/extension/" xmlns:pdfaSchema="http://www.aiim.org/pdfa/ns/schema#"
 xmlns:pdfaProperty="http://www.aiim.org/pdfa/ns/property#">
<pdfaExtension:schemas><rdf:Bag><rdf:li rdf:parseType="Resource">
<pdfaSchema:namespaceURI>{_PDFUAID}</pdfaSchema:namespaceURI>
<pdfaSchema:prefix>pdfuaid</pdfaSchema:prefix>
<pdfaSchema:schema>PDF/UA identification schema</pdfaSchema:schema>
<pdfaSchema:property><rdf:Seq><rdf:li rdf:parseType="Resource">
<pdfaProperty:name>part</pdfaProperty:name>
<pdfaProperty:valueType>Integer</pdfaProperty:valueType>
<pdfaProperty:category>internal</pdfaProperty:category>
<pdfaProperty:description>Indicates, which part of ISO 14289 standard is followed</pdfaProperty:description>
</rdf:li></rdf:Seq></pdfaSchema:property>
</rdf:li></rdf:Bag></pdfaExtension:schemas>
</rdf:Description>"""


@dataclass(frozen=True)
class EmbeddedFile:
    """A file a PDF carries (a PDF/A-3 associated file): `relationship` is its /AFRelationship to the document
    ("Source": what the document was written from; "Data": what its figures were computed from)."""

    name: str
    data: bytes
    description: str
    modified: datetime
    relationship: str = "Source"

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @classmethod
    def json(cls, name: str, text: str, description: str, modified: datetime,
             relationship: str = "Source") -> EmbeddedFile:
        """A JSON document as an embedded file: `text` exactly as given (its bytes are what a hash was taken of)."""
        return cls(name, text.encode(), description, modified, relationship)


def _pdf_object(pdf, reference):
    """The pydyf object a reference (b"12 0 R") names."""
    return pdf.objects[int(reference.split()[0])]


def _finish(document, pdf) -> None:
    """WeasyPrint's finisher: the XMP metadata declares PDF/UA-1 beside PDF/A-3 (pdfuaid:part, with the extension
    schema that describes it); each associated file is listed once in /AF (WeasyPrint lists it twice); no producer
    is named; and every stream is compressed, each object standing on its own.

    The producer: PDF/A wants the document information's /Producer and the XMP's pdf:Producer to agree, and
    pyHanko, signing, appends itself to the one and replaces the other: with neither there, it writes both alike.
    The objects: WeasyPrint, compressing, packs every object that is not a stream into one object stream, and a
    tagged PDF has thousands (an element of the structure tree each); pyHanko, checking what a countersignature's
    revision changed, walks the structure tree and reads that whole object stream again for each object it visits
    (100 s for a countersigned contract). So the PDF is written uncompressed, which keeps the objects apart, and its
    streams are compressed here instead (not those already encoded, such as JPEG images)."""
    for item in pdf.objects:
        if hasattr(item, "compress") and "Filter" not in item.extra:  # a pydyf.Stream (WeasyPrint's writer)
            item.compress = True
    if "AF" in pdf.catalog:
        unique = list(dict.fromkeys(pdf.catalog["AF"]))
        pdf.catalog["AF"].clear()
        pdf.catalog["AF"].extend(unique)
    pdf.info.pop("Producer", None)
    stream = _pdf_object(pdf, pdf.catalog["Metadata"])
    packet = b"".join(part if isinstance(part, bytes) else str(part).encode() for part in stream.stream)
    start, end = packet.index(b"<rdf:RDF"), packet.index(b"</rdf:RDF>") + len(b"</rdf:RDF>")
    rdf = ElementTree.fromstring(packet[start:end])
    for description in list(rdf):
        description.attrib.pop(f"{{{_PDF}}}Producer", None)
        if set(description.attrib) == {f"{{{_RDF}}}about"} and not len(description):
            rdf.remove(description)
    ident = next(d for d in rdf if d.get(f"{{{_PDFAID}}}part"))
    ident.set(f"{{{_PDFUAID}}}part", PDF_UA_PART)
    rdf.append(ElementTree.fromstring(_PDFUA_EXTENSION))
    stream.stream = [b"\n".join((_XMP_HEADER, ElementTree.tostring(rdf, encoding="utf-8"), _XMP_FOOTER))]


def _attachment(item: EmbeddedFile) -> Attachment:
    when = item.modified if item.modified.tzinfo else item.modified.replace(tzinfo=UTC)
    when = when.astimezone(UTC)
    return Attachment(file_obj=io.BytesIO(item.data), name=item.name, description=item.description,
                      relationship=item.relationship, created=when, modified=when)


def html_to_pdf(html: str, *, timeout: float | None = None, attachments: Sequence[EmbeddedFile] = ()) -> bytes:
    """Render HTML to tagged, archival PDF bytes (PDF/A-3a, declaring PDF/UA-1), carrying `attachments`. Raises
    PdfError on failure or when the time limit (PDF_TIMEOUT_SECONDS) runs out."""
    limit = timeout or current_app.config.get("PDF_TIMEOUT_SECONDS", 30)

    pause = CollectorPause()

    def render() -> bytes:
        with pause:
            return HTML(string=html, base_url=str(STATIC_DIR) + "/", url_fetcher=StaticOnlyFetcher()).write_pdf(
                pdf_variant=PDF_VARIANT, attachments=[_attachment(a) for a in attachments] or None,
                color_profiles={_OUTPUT_INTENT: _srgb_profile()}, output_intent=_OUTPUT_INTENT,
                uncompressed_pdf=True, finisher=_finish)

    future = _pool.submit(render)
    try:
        return future.result(timeout=limit)
    except concurrent.futures.TimeoutError:
        pause.release()  # the render goes on in its thread; the collector does not wait for it
        raise PdfError(f"the PDF took longer than {limit} s to render") from None
    except Exception as exc:  # WeasyPrint raises many kinds; the caller gets one
        raise PdfError(f"the PDF could not be rendered: {exc}") from exc


def render_pdf(template: str, *, attachments: Sequence[EmbeddedFile] = (), **context) -> bytes:
    """Render templates/pdf/<template> with `context` into a tagged, archival PDF carrying `attachments` (given to
    the template too, as `embedded`, to name them in the text), and return its bytes; raises PdfError."""
    html = render_template(f"pdf/{template}", embedded=list(attachments), **context)
    return html_to_pdf(html, attachments=attachments)


def looks_like_pdf(data: bytes) -> bool:
    """Judged by content, not by name: the PDF header at the very first byte (a file that starts otherwise, such
    as an executable or a web page with a PDF header further in, is something else that readers may also open)."""
    return data[:5] == b"%PDF-"


# Action types that make a document do something when opened; a bid's letter or guarantee needs none.
_ACTIONS = {"/JavaScript": "contains JavaScript", "/Launch": "contains an action that launches another program"}
_OBJECT_LIMIT = 200_000


def _active_content(reader) -> str | None:
    """Walk every object reachable from the document's root; the first JavaScript or launch action found."""
    seen: set[tuple[int, int]] = set()
    stack = [reader.trailer]
    visited = 0
    while stack:
        obj = stack.pop()
        if isinstance(obj, IndirectObject):
            ref = (obj.idnum, obj.generation)
            if ref in seen:
                continue
            seen.add(ref)
            obj = obj.get_object()
        visited += 1
        if visited > _OBJECT_LIMIT:
            return "has too many objects to be checked"
        if isinstance(obj, DictionaryObject):
            if "/JS" in obj or "/JavaScript" in obj:
                return _ACTIONS["/JavaScript"]
            kind = obj.get("/S")
            if kind in _ACTIONS:
                return _ACTIONS[kind]
            stack.extend(obj.values())
        elif isinstance(obj, ArrayObject):
            stack.extend(obj)
    return None


# What the Flate-compressed streams of one uploaded file may unpack to, all together. A genuine document stays far
# below it (the upload limit is 10 MB, and scans are mostly JPEG, which is not unpacked); a "decompression bomb"
# (a few hundred kB of zeros that inflate to gigabytes) passes it quickly. It is counted, never held: the check
# keeps at most one chunk of output in memory, so neither it nor what reads the file later (pypdf, pyHanko, a
# reviewer's reader) unpacks a bomb.
INFLATE_LIMIT = 256 * 1024 * 1024
_CHUNK = 1 << 20
_IN_CHUNK = 64 * 1024
_STREAM_START = re.compile(rb"stream\r?\n")
_LAYERS = 3  # Flate inside Flate inside Flate: each layer multiplies what the next unpacks to


def _inflate(chunks: Iterable[bytes | memoryview]) -> Iterator[bytes]:
    """The zlib data at the start of `chunks`, unpacked a chunk at a time; stops at its end or at the first byte
    that is not zlib data (a stream under another filter, a damaged one)."""
    d = zlib.decompressobj()
    try:
        for chunk in chunks:
            buf: bytes | memoryview = chunk
            while buf and not d.eof:
                out = d.decompress(buf, _CHUNK)
                if out:
                    yield out
                elif len(d.unconsumed_tail) == len(buf):
                    return  # no progress: nothing more comes out of this stream
                buf = d.unconsumed_tail
            if d.eof:
                return
    except zlib.error:
        return


def _looks_like_zlib(head: bytes) -> bool:
    return len(head) >= 2 and head[0] & 0x0F == 8 and (head[0] << 8 | head[1]) % 31 == 0


def _unpacked_size(raw: memoryview, budget: int) -> int:
    """How many bytes the stream starting at `raw` unpacks to through its Flate layers (at most `_LAYERS`), counted
    up to just past `budget`."""
    chunks: Iterator[bytes] = _inflate(raw[i:i + _IN_CHUNK] for i in range(0, len(raw), _IN_CHUNK))
    for _ in range(_LAYERS - 1):
        first = next(chunks, b"")
        if not _looks_like_zlib(first):
            chunks = _chain(first, chunks)
            break
        chunks = _inflate(_chain(first, chunks))
    total = 0
    for out in chunks:
        total += len(out)
        if total > budget:
            break
    return total


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest


def inflation_problem(data: bytes, *, limit: int = INFLATE_LIMIT) -> str | None:
    """Why the file's compressed streams are refused (together they unpack to more than `limit`), or None. Every
    stream is looked at, including in objects nothing refers to. Raises nothing."""
    view = memoryview(data)
    left = limit
    for match in _STREAM_START.finditer(data):
        left -= _unpacked_size(view[match.end():], left)
        if left < 0:
            return (f"unpacks to more than {limit // (1024 * 1024)} MB (its compressed content is built to "
                    "swell when opened, a \u201cdecompression bomb\u201d), so it cannot be opened safely")
    return None


def pdf_problem(data: bytes) -> str | None:
    """Why an uploaded file is not accepted as a document, or None if it is a PDF a reader opens safely: it starts
    with %PDF-, its compressed streams do not swell past INFLATE_LIMIT, pypdf parses it, it has at least one page,
    is not encrypted, and has no JavaScript or launch action. The reason completes a sentence that starts with the
    file's name."""
    if not looks_like_pdf(data):
        return "is not a PDF (its content does not start like a PDF, whatever its name)"
    if b"/JavaScript" in data:  # also in objects nothing refers to, which the walk below does not reach
        return _ACTIONS["/JavaScript"]
    if b"/Launch" in data:
        return _ACTIONS["/Launch"]
    swelling = inflation_problem(data)
    if swelling:
        return swelling
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a damaged but readable file is judged below, not by pypdf's warnings
        try:
            reader = PdfReader(io.BytesIO(data))
            if reader.is_encrypted:
                return ("is encrypted (protected by a password), so it cannot be checked or read by the reviewers; "
                        "save it without protection")
            if len(reader.pages) < 1:
                return "has no page"
            return _active_content(reader)
        except RecursionError:
            return "is not a PDF that can be opened (its structure is nested too deeply)"
        except Exception as exc:  # pypdf raises many kinds on damaged files; each means "cannot be opened"
            detail = " ".join(str(exc).split())[:120]
            return f"is not a PDF that can be opened (it starts like one, but reading it failed: {detail})"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
