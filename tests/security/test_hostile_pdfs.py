"""Issue 25, "not yet tried": encrypted and decompression-bomb PDFs, uploaded as a bid document, as the countersigned
contract, and dropped on the public /verify page. Each gets a clear refusal, never a 500, and nothing unpacks the
bomb: the peak of the memory Python allocates while the request runs stays a few MB (tracemalloc), where
unpacking it would take 300 MB.

The bomb is built here with zlib: a page whose content stream is 300 MB of zeros, compressed to 300 kB (and the
same compressed twice over, to 1 kB). evidence.pdf.inflation_problem counts what every stream unpacks to, a chunk at a
time, and refuses a file past INFLATE_LIMIT (256 MB), before pypdf or pyHanko reads it. Before issue 25 the bomb
was accepted as a bid document (pypdf counts its pages without unpacking them: the reviewers' readers would), and
an encrypted file on /verify was answered "Not signed" (pyHanko lists no signature of an encrypted file).
"""

from __future__ import annotations

import io
import tracemalloc
import zlib

import pytest

from core.db import db
from evidence.pdf import INFLATE_LIMIT
from tests import pdfs
from tests.bids.web import upload
from tests.security.hostile import ADMIN_EMAIL, OWNER_EMAIL, World
from tests.signing import sign, trusted_signer

INFLATED = INFLATE_LIMIT + 44 * 1024 * 1024  # 300 MB
PEAK_LIMIT = 64 * 1024 * 1024  # what the request may allocate at most (a bomb unpacked would be 300 MB)
BOMB_SAYS = "unpacks to more than 256 MB (its compressed content is built to swell when opened"
ENCRYPTED_SAYS = "is encrypted (protected by a password)"


def _zeros_compressed(size: int) -> bytes:
    comp = zlib.compressobj(9)
    chunk = b"\0" * (1 << 20)
    return b"".join(comp.compress(chunk) for _ in range(size >> 20)) + comp.flush()


def _one_page_pdf(content: bytes, filters: bytes) -> bytes:
    """A one-page PDF whose page content is the stream `content` under `filters`, with a correct xref table."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>",
               b"<< /Length %d /Filter %s >>\nstream\n" % (len(content), filters) + content + b"\nendstream"]
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    start = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    out.writelines(b"%010d 00000 n \n" % o for o in offsets)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, start))
    return out.getvalue()


@pytest.fixture(scope="module")
def bombs() -> dict[str, bytes]:
    once = _zeros_compressed(INFLATED)
    return {"bomb.pdf": _one_page_pdf(once, b"/FlateDecode"),
            "double-bomb.pdf": _one_page_pdf(zlib.compress(once, 9), b"[/FlateDecode /FlateDecode]")}


def _bomb_inside_the_issued_contract(issued: bytes, compressed: bytes) -> bytes:
    """The issued contract with an incremental update adding the bomb as an object, then countersigned: it keeps
    the issued bytes and carries a valid signature, so only the bomb check stands in its way."""
    from pyhanko.pdf_utils import generic
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter

    writer = IncrementalPdfFileWriter(io.BytesIO(issued), strict=False)
    stream = generic.StreamObject({generic.NameObject("/Filter"): generic.NameObject("/FlateDecode")},
                                  encoded_data=compressed)
    writer.root["/GambitBomb"] = writer.add_object(stream)
    writer.update_root()
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


class Peak:
    """The most memory Python allocated inside the block (tracemalloc), in bytes."""

    def __enter__(self):
        tracemalloc.start()
        return self

    def __exit__(self, *exc):
        self.bytes = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()


@pytest.fixture
def world(app, make, event, practice):
    return World(app, make, event, practice)


@pytest.mark.parametrize("name", ["bomb.pdf", "double-bomb.pdf", "locked.pdf"])
def test_a_bomb_or_an_encrypted_pdf_as_a_bid_document_is_refused(app, world, bombs, name):
    content = bombs.get(name) or pdfs.encrypted_pdf()
    bid_id = world.draft_bid()
    client = world.client(OWNER_EMAIL)
    with Peak() as peak:
        response = upload(client, bid_id, "signed_letter", content, name)
    assert response.status_code == 302
    page = client.get(response.location).get_data(as_text=True)
    assert f"The signed bid letter: {name} {ENCRYPTED_SAYS if name == 'locked.pdf' else BOMB_SAYS}" in page
    assert peak.bytes < PEAK_LIMIT
    with app.app_context():
        from bids.models import Bid

        assert db.session.get(Bid, bid_id).documents == []


@pytest.mark.parametrize("name", ["bomb.pdf", "double-bomb.pdf", "locked.pdf", "signed-bomb.pdf"])
def test_a_bomb_or_an_encrypted_pdf_as_the_countersigned_contract_is_refused(app, world, bombs, signing_ca, name):
    from contracts import queries
    from contracts.models import Contract

    contract_id, _ = world.contract()
    with app.app_context():
        issued = queries.pdf_path(app.config["UPLOAD_DIR"], db.session.get(Contract, contract_id)).read_bytes()
    if name == "signed-bomb.pdf":
        content = sign(_bomb_inside_the_issued_contract(issued, _zeros_compressed(INFLATED)),
                       trusted_signer(signing_ca, "Anna Organizer", "Lviv Chess"), field="Organizer")
    else:
        content = bombs.get(name) or pdfs.encrypted_pdf()
    client = world.client(ADMIN_EMAIL)
    with Peak() as peak:
        response = client.post(f"/contracts/{contract_id}/sign", data={"file": (io.BytesIO(content), name)},
                               content_type="multipart/form-data")
    assert response.status_code in (302, 422), response.status_code
    page = (client.get(response.location) if response.status_code == 302 else response).get_data(as_text=True)
    said = ENCRYPTED_SAYS if name == "locked.pdf" else BOMB_SAYS
    assert f"{name} {said}" in page
    assert peak.bytes < PEAK_LIMIT
    with app.app_context():
        contract = db.session.get(Contract, contract_id)
        assert contract.status == "issued" and contract.signed_pdf_sha256 is None


@pytest.mark.parametrize("name", ["bomb.pdf", "double-bomb.pdf", "locked.pdf"])
def test_a_bomb_or_an_encrypted_pdf_on_the_verify_page_is_answered_plainly(app, client, bombs, name):
    content = bombs.get(name) or pdfs.encrypted_pdf()
    with Peak() as peak:
        response = client.post("/verify", data={"file": (io.BytesIO(content), name)},
                               content_type="multipart/form-data")
    assert response.status_code == 200
    page = response.get_data(as_text=True)
    said = ("it is encrypted (protected by a password), so its signatures cannot be read" if name == "locked.pdf"
            else f"it {BOMB_SAYS}")
    assert f"Not readable: the PDF could not be read ({said}" in page
    assert peak.bytes < PEAK_LIMIT


def test_a_genuine_pdf_is_not_taken_for_a_bomb():
    from evidence.pdf import inflation_problem

    assert inflation_problem(_one_page_pdf(_zeros_compressed(8 * 1024 * 1024), b"/FlateDecode")) is None
    assert inflation_problem(pdfs.valid_pdf(pages=3)) is None
