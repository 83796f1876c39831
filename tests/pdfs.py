"""PDFs for tests, made with pypdf: a real one, and the hostile kinds an upload must refuse."""

from __future__ import annotations

import io

from pypdf import PdfWriter
from pypdf.generic import ArrayObject, DictionaryObject, NameObject, TextStringObject


def _bytes(writer: PdfWriter) -> bytes:
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def valid_pdf(pages: int = 1) -> bytes:
    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=595, height=842)
    return _bytes(writer)


def encrypted_pdf() -> bytes:
    writer = PdfWriter()
    writer.add_blank_page(width=595, height=842)
    writer.encrypt(user_password="", owner_password="owner", algorithm="RC4-128")
    return _bytes(writer)


def javascript_pdf() -> bytes:
    writer = PdfWriter()
    writer.add_blank_page(width=595, height=842)
    action = DictionaryObject({NameObject("/S"): NameObject("/JavaScript"),
                               NameObject("/JS"): TextStringObject("app.alert('hello');")})
    names = DictionaryObject({NameObject("/Names"): ArrayObject([TextStringObject("hello"),
                                                                 writer._add_object(action)])})
    writer._root_object[NameObject("/Names")] = DictionaryObject({NameObject("/JavaScript"): names})
    return _bytes(writer)


def launch_pdf() -> bytes:
    writer = PdfWriter()
    writer.add_blank_page(width=595, height=842)
    action = DictionaryObject({NameObject("/S"): NameObject("/Launch"),
                               NameObject("/F"): TextStringObject("calc.exe")})
    writer._root_object[NameObject("/OpenAction")] = writer._add_object(action)
    return _bytes(writer)


def no_page_pdf() -> bytes:
    return _bytes(PdfWriter())


EXECUTABLE = b"MZ\x90\x00\x03\x00\x00\x00%PDF-1.4 hidden header after an executable stub\n" + b"\x00" * 200
HTML = b"<!doctype html><html><body><script>alert(1)</script>%PDF-1.4</body></html>"
HEADER_ONLY = b"%PDF-1.4\nthis is not a document at all\n%%EOF\n"
