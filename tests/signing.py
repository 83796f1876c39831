"""Signing for tests: identities issued by the run's throwaway CA (conftest `signing_ca`) or by a CA nobody
trusts, and the PDFs they sign."""

from __future__ import annotations

import io
from functools import lru_cache

from evidence import signing


@lru_cache(maxsize=16)
def _issued(ca_key, ca_cert, name: str, org: str) -> signing.Identity:
    return signing.issue_identity(ca_key, ca_cert, name, org, unit=None)


def trusted_signer(signing_ca, name: str = "Olena Signatory", org: str = "Ukrainian Chess Federation"):
    """An identity issued by the test CA (which a test puts on the trust list)."""
    return _issued(signing_ca.ca_key, signing_ca.ca, name, org)


def untrusted_signer(signing_ca, name: str = "Mallory", org: str = "Elsewhere"):
    """An identity issued by a CA that is never on the trust list."""
    return _issued(signing_ca.other_ca_key, signing_ca.other_ca, name, org)


def sign(data: bytes, identity: signing.Identity, *, reason: str = "Signed", field: str = "Signature1") -> bytes:
    return signing.sign_with(data, identity, reason=reason, field_name=field)


def append_unsigned_revision(data: bytes) -> bytes:
    """`data` with an incremental update that no signature covers (a changed document language)."""
    from pyhanko.pdf_utils import generic
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter

    writer = IncrementalPdfFileWriter(io.BytesIO(data), strict=False)
    writer.root["/Lang"] = generic.TextStringObject("fr")
    writer.update_root()
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def flip_one_signed_byte(data: bytes) -> bytes:
    """`data` with one byte changed inside the signed range: in the comment line under the header, which every
    reader skips, so the file still opens and only the signature can tell."""
    at = data.index(b"\n%", 5) + 2
    out = bytearray(data)
    out[at] = ord("X") if out[at] != ord("X") else ord("Y")
    return bytes(out)


def rewrite_first_page(data: bytes, text: bytes = b"FIDE PAYS EUR 9,999,999") -> bytes:
    """`data` with an incremental update that replaces the first page's content (what a forger would sign over)."""
    from pyhanko.pdf_utils import generic
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter

    writer = IncrementalPdfFileWriter(io.BytesIO(data), strict=False)
    page = writer.root["/Pages"]["/Kids"][0].get_object()
    page["/Contents"] = writer.add_object(generic.StreamObject(stream_data=b"BT /F1 48 Tf 72 700 Td (" + text
                                                               + b") Tj ET"))
    writer.update_container(page)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
