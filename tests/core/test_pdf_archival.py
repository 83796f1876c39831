"""Every PDF Gambit issues is tagged (PDF/UA-1) and archival (PDF/A-3), and stays so once signed: the dossiers, the
board pack, the minutes (the record and a reader's copy), the contract (issued, countersigned, and its draft) and
the demo's uploaded letters. Each is read back with pypdf: the structure tree and its reading order (headings in
order, tables with header cells, a Figure with alternative text for every chart bar), /MarkInfo, /Lang, the title in
the document information and in the XMP, the PDF/A and PDF/UA identification; the dossier, the pack and the contract
carry the data they were made from as associated JSON files whose bytes are the frozen data and whose hashes match;
and Gambit's signature still verifies (`flask pdf verify`, pyHanko through evidence.signing).

The demo (`flask seed --demo`) makes every kind the code issues, once for the whole run, in an app and database of
its own; the tests only read it."""

from __future__ import annotations

import hashlib
import io
import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree

import pytest
from pypdf import PdfReader
from pypdf.generic import ArrayObject, BooleanObject, DictionaryObject, IndirectObject

from core.db import db
from tests.conftest import join_render_threads

pytestmark = pytest.mark.no_db

RDF = "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}"
DC = "{http://purl.org/dc/elements/1.1/}"
PDFAID = "{http://www.aiim.org/pdfa/ns/id/}"
PDFUAID = "{http://www.aiim.org/pdfua/ns/id/}"
PDF_NS = "{http://ns.adobe.com/pdf/1.3/}"
EXTENSION = "{http://www.aiim.org/pdfa/ns/extension/}"
SCHEMA = "{http://www.aiim.org/pdfa/ns/schema#}"


@dataclass
class Issued:
    """One PDF as Gambit issued it, and what it must carry."""

    kind: str
    data: bytes
    title: str  # how its title starts
    signed_as: str | None = None  # the document the signature names; None: not signed by Gambit
    files: dict[str, tuple[object, str]] = field(default_factory=dict)  # name: (the JSON it holds, its SHA-256)
    tables: bool = False
    charts: bool = False


def _fresh_app(tmp_path, signing_ca):
    from app import create_app

    return create_app({"TESTING": True, "SECRET_KEY": "x", "SERVER_NAME": "gambit.test",
                       "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / f'archival-{uuid.uuid4().hex[:8]}.sqlite3'}",
                       "UPLOAD_DIR": str(tmp_path / "uploads"), "SIGNING_PKCS12": str(signing_ca.path),
                       "SIGNING_PASSPHRASE": signing_ca.passphrase, "ARGON2_TIME_COST": 1,
                       "ARGON2_MEMORY_COST": 1024, "RATELIMIT_ENABLED": False, "WTF_CSRF_ENABLED": False,
                       "MAIL_ENABLED": False, "OUTBOX_DISPATCH": "manual"})


def _collect(app) -> dict[str, Issued]:
    """Every PDF the demo issued, read from where Gambit stores it, with the data it was made from."""
    from sqlalchemy import select

    from bids.models import Bid, BidDocument
    from board import queries as board
    from board.models import Decision, Dossier
    from contracts import services as contracts
    from contracts.models import Contract
    from contracts.queries import pdf_path
    from core.db import utcnow
    from scoring.visibility import Sight

    upload_dir = app.config["UPLOAD_DIR"]
    out: dict[str, Issued] = {}
    dossiers = db.session.scalars(select(Dossier).order_by(Dossier.id)).all()
    bid_dossier = next(d for d in dossiers if d.kind == "bid")
    version = db.session.get(Bid, bid_dossier.bid_id).last_version
    out["dossier"] = Issued(
        "dossier", (board.dossier_dir(upload_dir) / bid_dossier.stored_name).read_bytes(),
        f"Dossier {bid_dossier.identifier} — ", f"dossier {bid_dossier.identifier}", charts=True, files={
            f"bid-{bid_dossier.bid_id}-version-{version.number}.json": (
                {"data": version.data_dict, "documents": version.documents_list}, version.sha256),
            "dossier-inputs.json": (json.loads(bid_dossier.inputs), bid_dossier.inputs_sha256)})
    pack = next(d for d in dossiers if d.kind == "pack")
    out["board pack"] = Issued(
        "board pack", (board.dossier_dir(upload_dir) / pack.stored_name).read_bytes(),
        f"Board pack {pack.identifier} — ", f"board pack {pack.identifier}", tables=True, charts=True,
        files={"pack-inputs.json": (json.loads(pack.inputs), pack.inputs_sha256)})
    decision = db.session.scalars(select(Decision)).one()
    out["minutes"] = Issued(
        "minutes", (board.dossier_dir(upload_dir) / decision.minutes_stored_name).read_bytes(),
        f"Minutes of decision DECISION-{decision.id} — ", f"minutes of decision DECISION-{decision.id}", tables=True)
    out["minutes copy"] = Issued(
        "minutes copy", board.minutes_copy(decision, Sight.everything(), reader="Rita Reader", now=utcnow()),
        f"Minutes of decision DECISION-{decision.id} — ", tables=True)
    contract = db.session.scalars(select(Contract).where(Contract.status == "signed")).one()
    terms = {f"contract-{contract.reference}-terms.json": (
        json.loads(contract.terms_json), hashlib.sha256(contract.terms_json.encode()).hexdigest())}
    out["contract"] = Issued("contract", pdf_path(upload_dir, contract).read_bytes(),
                             f"Contract {contract.reference} — ", f"contract {contract.reference}", tables=True,
                             files=terms)
    out["countersigned contract"] = Issued(
        "countersigned contract", pdf_path(upload_dir, contract, signed=True).read_bytes(),
        f"Contract {contract.reference} — ", f"contract {contract.reference}", tables=True, files=terms)
    draft = contracts.build_terms(contract)
    frozen = json.dumps(draft.as_dict(), sort_keys=True, ensure_ascii=False)  # as issuing a contract freezes it
    out["draft contract"] = Issued(
        "draft contract", contracts.render_contract_pdf(contract, draft, draft=True),
        f"Contract {contract.reference} — ", tables=True, files={f"contract-{contract.reference}-terms.json": (
            json.loads(frozen), hashlib.sha256(frozen.encode()).hexdigest())})
    for doc in db.session.scalars(select(BidDocument).order_by(BidDocument.id)).all():
        kind = "demo letter" if doc.kind == "signed_letter" else "demo guarantee"
        if kind not in out:
            stored = Path(upload_dir) / "bids" / str(doc.bid_id) / doc.stored_name
            out[kind] = Issued(kind, stored.read_bytes(), "Bid of " if kind == "demo letter" else "Bank guarantee")
    return out


@pytest.fixture(scope="session")
def issued(tmp_path_factory, signing_ca) -> dict[str, Issued]:
    """Every kind of PDF Gambit issues, made once for the run by the demo in an app of its own."""
    app = _fresh_app(tmp_path_factory.mktemp("archival"), signing_ca)
    with app.app_context():
        db.create_all()
    result = app.test_cli_runner().invoke(args=["seed", "--demo"])
    assert result.exit_code == 0, result.output
    with app.app_context(), app.test_request_context():
        out = _collect(app)
    out["_app"] = app  # type: ignore[assignment]
    yield out
    join_render_threads()
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


KINDS = ["dossier", "board pack", "minutes", "minutes copy", "contract", "countersigned contract", "draft contract",
         "demo letter", "demo guarantee"]


def _reader(pdf: Issued) -> PdfReader:
    return PdfReader(io.BytesIO(pdf.data))


def _xmp(reader: PdfReader) -> ElementTree.Element:
    packet = reader.trailer["/Root"]["/Metadata"].get_object().get_data()
    return ElementTree.fromstring(packet[packet.index(b"<x:xmpmeta"):packet.rindex(b"</x:xmpmeta>") + 12])


def _property(xmp: ElementTree.Element, name: str) -> str | None:
    """A simple XMP property, written as an attribute or as an element of an rdf:Description."""
    for description in xmp.iter(f"{RDF}Description"):
        if name in description.attrib:
            return description.attrib[name]
        child = description.find(name)
        if child is not None and child.text:
            return child.text
    return None


def _elements(reader: PdfReader):
    """The structure elements in reading order (depth first, in the order of each element's /K)."""

    def walk(node):
        node = node.get_object()
        if not isinstance(node, DictionaryObject):
            return
        if "/S" in node:
            yield node
        kids = node.get("/K")
        if kids is None:
            return
        for kid in kids if isinstance(kids, ArrayObject) else [kids]:
            if isinstance(kid, IndirectObject | DictionaryObject) and "/Obj" not in kid.get_object():
                yield from walk(kid)

    yield from walk(reader.trailer["/Root"]["/StructTreeRoot"])


def _embedded(reader: PdfReader) -> dict[str, DictionaryObject]:
    names = reader.trailer["/Root"].get("/Names", {}).get("/EmbeddedFiles", {}).get("/Names", [])
    return {str(names[i]): names[i + 1].get_object() for i in range(0, len(names), 2)}


@pytest.mark.parametrize("kind", KINDS)
def test_every_issued_pdf_is_tagged_with_its_title_and_language(issued, kind):
    pdf = issued[kind]
    reader = _reader(pdf)
    root = reader.trailer["/Root"]
    assert "/StructTreeRoot" in root, kind
    assert root["/MarkInfo"]["/Marked"] == BooleanObject(True)
    assert root["/Lang"] == "en"
    assert root["/ViewerPreferences"]["/DisplayDocTitle"] == BooleanObject(True)
    title = reader.metadata["/Title"]
    assert title.startswith(pdf.title), title
    xmp = _xmp(reader)
    assert xmp.find(f".//{DC}title/{RDF}Alt/{RDF}li").text == title
    assert all(page["/Tabs"] == "/S" for page in reader.pages)  # annotations (links, the signature) in that order
    kinds = [str(e["/S"]) for e in _elements(reader)]
    assert kinds[0] == "/Document" and "/P" in kinds and "/Span" in kinds
    # Each object stands on its own (no object stream): pyHanko, checking a countersignature, reads an object stream
    # again for each structure element it visits.
    assert b"/ObjStm" not in pdf.data[:pdf.data.index(b"%%EOF")]


@pytest.mark.parametrize("kind", KINDS)
def test_every_issued_pdf_declares_pdf_a_3_and_pdf_ua_1_and_stays_so_when_signed(issued, kind):
    pdf = issued[kind]
    reader = _reader(pdf)
    xmp = _xmp(reader)
    assert _property(xmp, f"{PDFAID}part") == "3"
    assert _property(xmp, f"{PDFAID}conformance") == "A"
    assert _property(xmp, f"{PDFUAID}part") == "1"
    # PDF/A admits the PDF/UA identification only with an extension schema that describes it, under its prefixes.
    schemas = xmp.find(f".//{EXTENSION}schemas")
    described = ElementTree.tostring(schemas).decode()
    assert "http://www.aiim.org/pdfua/ns/id/" in described and 'pdfuaid' in described
    assert described.count("pdfaSchema:") >= 3 and "pdfaProperty:" in described
    root = reader.trailer["/Root"]
    assert root["/OutputIntents"][0]["/S"] == "/GTS_PDFA1"
    # PDF/A: the document information and the XMP agree; pyHanko, signing, writes the producer into both.
    producer = reader.metadata.get("/Producer")
    assert producer == _property(xmp, f"{PDF_NS}Producer")
    assert (producer is not None) == (pdf.signed_as is not None or kind.startswith("demo")), producer


@pytest.mark.parametrize("kind", KINDS)
def test_headings_come_in_order_from_one_h1(issued, kind):
    levels = [int(str(e["/S"])[2:]) for e in _elements(_reader(issued[kind])) if str(e["/S"]) in
              {f"/H{n}" for n in range(1, 7)}]
    assert levels and levels[0] == 1, levels
    assert levels.count(1) == 1
    assert all(b <= a + 1 for a, b in zip(levels, levels[1:], strict=False)), levels  # no level skipped


@pytest.mark.parametrize("kind", [k for k in KINDS if k not in ("dossier", "demo letter", "demo guarantee")])
def test_tables_have_header_cells_that_their_data_cells_point_to(issued, kind):
    elements = list(_elements(_reader(issued[kind])))
    tables = [e for e in elements if e["/S"] == "/Table"]
    assert tables, f"the {kind} has a table"
    headers = {str(e["/ID"]) for e in elements if e["/S"] == "/TH"}
    assert headers
    cells = [e for e in elements if e["/S"] == "/TD"]
    assert cells
    for cell in cells:
        pointed = [str(h) for h in cell["/A"]["/Headers"]]
        assert pointed and set(pointed) <= headers, pointed


@pytest.mark.parametrize("kind", KINDS)
def test_every_figure_has_alternative_text_and_every_chart_bar_is_one(issued, kind):
    figures = [e for e in _elements(_reader(issued[kind])) if e["/S"] == "/Figure"]
    assert all(str(f.get("/Alt", "")).strip() for f in figures)
    if issued[kind].charts:
        assert len(figures) >= 10  # a bar per criterion
        assert all(str(f["/Alt"]).startswith("Bar of criterion (") for f in figures)
        assert any(" on the scale 0 to 5" in str(f["/Alt"]) for f in figures)
    else:
        assert not figures


@pytest.mark.parametrize("kind", KINDS)
def test_the_dossier_pack_and_contract_carry_the_data_they_were_made_from(issued, kind):
    pdf = issued[kind]
    reader = _reader(pdf)
    files = _embedded(reader)
    assert set(files) == set(pdf.files)
    associated = [ref.get_object() for ref in reader.trailer["/Root"].get("/AF", [])]
    assert len(associated) == len(files)  # each listed once
    for name, (expected, digest) in pdf.files.items():
        spec = files[name]
        assert spec in associated
        assert spec["/UF"] == name and spec["/AFRelationship"] in ("/Source", "/Data")
        stream = spec["/EF"]["/F"].get_object()
        data = stream.get_data()
        assert stream["/Subtype"] == "/application/json"
        assert json.loads(data) == expected
        assert hashlib.sha256(data).hexdigest() == digest  # the hash Gambit recorded for that data
        assert stream["/Params"]["/CheckSum"].original_bytes == hashlib.md5(data).digest()  # the PDF's own check
        assert stream["/Params"]["/Size"] == len(data)


@pytest.mark.parametrize("kind", [k for k in KINDS if k in ("dossier", "board pack", "minutes", "contract",
                                                             "countersigned contract")])
def test_the_signed_pdfs_still_verify_with_flask_pdf_verify_and_pyhanko(issued, kind, tmp_path):
    from evidence.signing import inspect_pdf, load_identity, verify_issued

    pdf = issued[kind]
    app = issued["_app"]
    path = tmp_path / "issued.pdf"
    path.write_bytes(pdf.data)
    result = app.test_cli_runner().invoke(args=["pdf", "verify", str(path)])
    assert result.exit_code == 0, result.output
    assert f"Issued by Gambit: {pdf.signed_as}, signed on" in result.output
    with app.app_context():
        identity = load_identity()
        verdict = verify_issued(pdf.data, identity=identity)
        assert verdict.ok and verdict.document == pdf.signed_as, verdict.lines()
        signatures = inspect_pdf(pdf.data, trust_roots=identity.chain_der).signatures
    assert signatures and all(s.intact for s in signatures)
    # Gambit's signature widget: printable and not hidden (PDF/A), zero-sized off the page (no appearance, no tag).
    reader = _reader(pdf)
    widgets = [a.get_object() for page in reader.pages for a in page.get("/Annots", [])
               if a.get_object().get("/FT") == "/Sig"]
    ours = next(w for w in widgets if w["/T"] == "GambitSignature")
    assert int(ours["/F"]) & 0b110 == 0b100
    x1, y1, x2, y2 = (float(v) for v in ours["/Rect"])
    assert x1 == x2 and y1 == y2 and x1 < 0 and y1 < 0
