"""Issue 17: Gambit signs what it issues (checked with pyHanko's own validation, not only Gambit's code), anyone
can verify it, and the signatures of uploaded letters, guarantees and countersigned contracts are judged."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign.validation import SignatureCoverageLevel, validate_pdf_signature
from pyhanko_certvalidator import ValidationContext

from evidence import signing
from evidence.pdf import html_to_pdf
from tests.pdfs import valid_pdf
from tests.signing import (
    append_unsigned_revision,
    flip_one_signed_byte,
    rewrite_first_page,
    sign,
    trusted_signer,
    untrusted_signer,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rendered(app):
    """One small real PDF from WeasyPrint, signed by Gambit as a dossier is."""
    with app.app_context():
        pdf = html_to_pdf("<h1>Dossier</h1><p>Test.</p>")
        return pdf, signing.sign_issued(pdf, document="dossier FWWCM-2015-BID7-D2")


def _pyhanko_status(data: bytes, signing_ca):
    sig = PdfFileReader(io.BytesIO(data), strict=False).embedded_signatures[0]
    roots = [signing._asn1_cert(signing_ca.ca.public_bytes(__import__("cryptography").hazmat.primitives
                                                          .serialization.Encoding.DER))]
    return sig, validate_pdf_signature(sig, ValidationContext(trust_roots=roots, allow_fetching=False))


def test_gambits_signature_validates_with_pyhanko_and_names_the_document(app, rendered, signing_ca):
    plain, signed = rendered
    assert signed.startswith(plain)  # an incremental update: the rendered bytes are kept as they are
    sig, status = _pyhanko_status(signed, signing_ca)
    assert status.intact and status.valid and status.trusted and status.bottom_line
    assert status.coverage == SignatureCoverageLevel.ENTIRE_FILE
    assert str(sig.sig_object["/Reason"]) == "Issued by Gambit: dossier FWWCM-2015-BID7-D2"
    assert "Gambit test signer" in status.signing_cert.subject.human_friendly
    with app.app_context():
        verdict = signing.verify_issued(signed)
    assert verdict.ok
    assert re.fullmatch(r"Issued by Gambit: dossier FWWCM-2015-BID7-D2, signed on \d+ \w+ \d{4} at \d\d:\d\d UTC, "
                        r"unchanged since\.", verdict.headline)


def test_one_changed_byte_breaks_the_signature(app, rendered, signing_ca):
    tampered = flip_one_signed_byte(rendered[1])
    _, status = _pyhanko_status(tampered, signing_ca)
    assert not status.intact and not status.bottom_line
    with app.app_context():
        verdict = signing.verify_issued(tampered)
    assert not verdict.ok
    assert verdict.headline == ("Modified after signing: the bytes Gambit signed have been changed, so the signature "
                                "no longer matches them. This is not the document Gambit issued.")


def test_an_unsigned_revision_appended_is_reported(app, rendered, signing_ca):
    appended = append_unsigned_revision(rendered[1])
    _, status = _pyhanko_status(appended, signing_ca)
    assert status.intact and status.coverage == SignatureCoverageLevel.ENTIRE_REVISION
    with app.app_context():
        verdict = signing.verify_issued(appended)
    assert not verdict.ok
    assert verdict.headline.startswith("Modified after signing: Gambit's signed revision is intact, but ")
    assert "no later signature covers them" in verdict.headline


def test_another_key_and_no_signature_are_told_apart(app, rendered, signing_ca):
    forged = sign(rendered[0], untrusted_signer(signing_ca), reason="Issued by Gambit: dossier FWWCM-2015-BID7-D2")
    with app.app_context():
        verdict = signing.verify_issued(forged)
        unsigned = signing.verify_issued(rendered[0])
        not_pdf = signing.verify_issued(b"GIF89a")
    assert not verdict.ok and verdict.headline.startswith(
        "Signed by another key: this PDF is signed by Mallory (Elsewhere), not with Gambit's signing key "
        "(Gambit test signer (FIDE test)).")
    assert unsigned.headline.startswith("Not signed: this PDF carries no digital signature")
    assert not_pdf.headline.startswith("Not a PDF")


def test_flask_pdf_verify_prints_the_verdict_and_exits_by_it(app, rendered, tmp_path):
    good, bad = tmp_path / "good.pdf", tmp_path / "bad.pdf"
    good.write_bytes(rendered[1])
    bad.write_bytes(flip_one_signed_byte(rendered[1]))
    runner = app.test_cli_runner()
    result = runner.invoke(args=["pdf", "verify", str(good)])
    assert result.exit_code == 0 and result.output.startswith("Issued by Gambit: dossier FWWCM-2015-BID7-D2")
    result = runner.invoke(args=["pdf", "verify", str(bad)])
    assert result.exit_code == 1 and result.output.startswith("Modified after signing")


REWRITTEN = ["Modified after signing: Gambit's signed revision is intact, but ",
             "pyHanko's difference analysis: Error in diff operation between revision 1 and 2: There are unexplained "
             "xrefs in revision 2",
             "What was added also changes the content Gambit signed (more than adding a signature or filling in a "
             "form field)."]


def test_flask_pdf_verify_of_a_page_rewritten_after_signing_gives_the_reason_and_no_traceback(app, rendered, tmp_path,
                                                                                             signing_ca, capfd):
    """pyHanko logs its failed difference analysis of the changed file as a warning with a traceback; the verdict
    says what it found instead, in the command run in process and in a process of its own (its own logging)."""
    changed = tmp_path / "changed.pdf"
    changed.write_bytes(rewrite_first_page(rendered[1]))
    result = app.test_cli_runner().invoke(args=["pdf", "verify", str(changed)])
    printed = result.output + "".join(capfd.readouterr())
    assert result.exit_code == 1 and result.output.startswith(REWRITTEN[0])
    assert "Traceback" not in printed and all(line in printed for line in REWRITTEN)
    env = {"PATH": os.environ.get("PATH", ""), "FLASK_APP": "app", "GAMBIT_INSTANCE": str(tmp_path / "instance"),
           "SECRET_KEY": "verify-test", "SIGNING_PKCS12": str(signing_ca.path),
           "SIGNING_PASSPHRASE": signing_ca.passphrase, "LOG_LEVEL": "INFO"}
    run = subprocess.run([sys.executable, "-m", "flask", "pdf", "verify", str(changed)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and run.stdout.startswith(REWRITTEN[0]), run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr and all(line in run.stdout for line in REWRITTEN)


def test_the_public_verify_page_stores_nothing_and_the_certificate_is_offered(app, client, rendered, signing_ca):
    import os

    upload_dir = app.config["UPLOAD_DIR"]
    before = sorted(os.walk(upload_dir))
    response = client.post("/verify", data={"file": (io.BytesIO(rendered[1]), "dossier.pdf")},
                           content_type="multipart/form-data")
    page = response.get_data(as_text=True)
    assert response.status_code == 200 and "Issued by Gambit: dossier FWWCM-2015-BID7-D2" in page
    response = client.post("/verify", data={"file": (io.BytesIO(append_unsigned_revision(rendered[1])), "x.pdf")},
                           content_type="multipart/form-data")
    assert "Modified after signing: Gambit&#39;s signed revision is intact" in response.get_data(as_text=True)
    assert sorted(os.walk(upload_dir)) == before
    response = client.get("/signing/certificate.pem")
    from cryptography import x509

    certs = x509.load_pem_x509_certificates(response.data)
    assert certs[0] == signing_ca.cert and certs[1] == signing_ca.ca


# ------------------------------------------------------------------------------------ uploaded documents


def _letters(rendered_plain, signing_ca):
    good = sign(rendered_plain, trusted_signer(signing_ca), reason="Letter of application")
    return {
        "unsigned": (valid_pdf(), "not signed (it carries no digital signature)"),
        "intact": (good, "signed by Olena Signatory \\(Ukrainian Chess Federation\\) on .* UTC, intact, trusted"),
        "modified": (append_unsigned_revision(good), "signed by Olena Signatory \\(Ukrainian Chess Federation\\) "
                     "on .* UTC, changed after signing \\(content was added that no signature covers\\), trusted"),
        "untrusted": (sign(rendered_plain, untrusted_signer(signing_ca)),
                      "signed by Mallory \\(Elsewhere\\) on .* UTC, intact, not trusted \\(the signer's certificate is "
                      "not on the secretariat's trust list, nor issued by one on it\\)"),
    }


@pytest.fixture
def trusted_test_ca(app, signing_ca):
    from core.db import db, utcnow
    from evidence import trust

    with app.app_context():
        trust.add_certificate(signing.pem(signing_ca.ca), actor=None, now=utcnow())
        db.session.commit()


@pytest.mark.parametrize("case", ["unsigned", "intact", "modified", "untrusted"])
def test_an_uploaded_letter_is_judged_in_the_compliance_report(app, client, login_as, practice, rendered,
                                                               signing_ca, trusted_test_ca, case):
    from tests.bids.web import start_bid, upload

    content, words = _letters(rendered[0], signing_ca)[case]
    login_as("bidder")
    bid_id = start_bid(client)
    upload(client, bid_id, "signed_letter", content, "letter.pdf")
    upload(client, bid_id, "guarantee", content, "guarantee.pdf")
    page = client.get(f"/bids/{bid_id}").get_data(as_text=True).replace("&#39;", "'")
    letter = re.search(r"The signed bid letter \(Art\. 15\.2\(k\)\): ([^<]*)</li>", page).group(1)
    guarantee = re.search(r"The bank guarantee \(Art\. 15\.2\(j\)\): ([^<]*)</li>", page).group(1)
    assert re.match(words if case != "unsigned" else re.escape(words), letter), letter
    assert re.match(words if case != "unsigned" else re.escape(words), guarantee), guarantee
    if case != "intact":
        assert letter.endswith("Under the call's bidding procedure, this is reported to the reviewers; it does not "
                               "stop the submission.")


@pytest.fixture
def scored(app, event, make):
    from tests.board.conftest import scored_call
    from tests.scoring.factories_scoring import ScoringFactory

    return scored_call(app, event, ScoringFactory(app, make))


def test_the_dossier_prints_what_the_signatures_amount_to(app, scored, signing_ca, trusted_test_ca, rendered, make):
    """Read back from the dossier PDF with pypdf: each case in words."""
    import hashlib
    import secrets
    from pathlib import Path

    from pypdf import PdfReader

    from accounts.models import User
    from bids.models import Bid, BidDocument
    from bids.services import recheck_document_signatures
    from board import queries as board_queries
    from board import services as board
    from core.db import db, utcnow

    letters = _letters(rendered[0], signing_ca)
    admin = make.user(roles=("admin",))
    with app.app_context():
        upload_dir = app.config["UPLOAD_DIR"]
        # Letters (15.2(k)) in each case, and bank guarantees (15.2(j)): Lviv's unsigned, Madrid's intact.
        for bid_key, kind, case in (("lviv", "signed_letter", "intact"), ("tbilisi", "signed_letter", "modified"),
                                    ("madrid", "signed_letter", "untrusted"), ("lviv", "guarantee", "unsigned"),
                                    ("madrid", "guarantee", "intact")):
            bid = db.session.get(Bid, scored[bid_key])
            content = letters[case][0]
            name = f"{secrets.token_hex(16)}.pdf"
            folder = Path(upload_dir) / "bids" / str(bid.id)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(content)
            db.session.add(BidDocument(bid_id=bid.id, kind=kind, original_name=f"{kind}.pdf",
                                       stored_name=name, sha256=hashlib.sha256(content).hexdigest(),
                                       size_bytes=len(content), uploaded_at=utcnow(), uploaded_by_id=bid.owner_id))
        db.session.flush()
        assert recheck_document_signatures(actor=None, now=utcnow(), upload_dir=upload_dir) >= 5
        db.session.expire_all()  # the bids were loaded before their letters were added
        actor = db.session.get(User, admin)
        texts = {}
        for bid_key in ("lviv", "tbilisi", "madrid"):
            dossier = board.ensure_dossier(db.session.get(Bid, scored[bid_key]), actor=actor, now=utcnow(),
                                           upload_dir=upload_dir)
            data = (board_queries.dossier_dir(upload_dir) / dossier.stored_name).read_bytes()
            texts[bid_key] = " ".join(" ".join(p.extract_text() for p in PdfReader(io.BytesIO(data)).pages).split())
            assert signing.verify_issued(data).ok
        db.session.rollback()
    assert re.search(r"signed by Olena Signatory \(Ukrainian Chess Federation\) on .{5,40} UTC, intact, trusted",
                     texts["lviv"])
    assert "changed after signing (content was added that no signature covers), trusted" in texts["tbilisi"]
    # Each document's words in the compliance report's notes and again beside it among the attachments.
    assert "The bank guarantee (Art. 15.2(j)): not signed (it carries no digital signature)" in texts["lviv"]
    assert re.search(r"The bank guarantee \(Art\. 15\.2\(j\)\): signed by Olena Signatory \(Ukrainian Chess "
                     r"Federation\) on .{5,40} UTC, intact, trusted", texts["madrid"]), texts["madrid"]
    assert re.search(r"The bank guarantee: guarantee\.pdf .{0,120}Signature: signed by Olena Signatory",
                     texts["madrid"])
    assert re.search(r"signed by Mallory \(Elsewhere\) on .{5,40} UTC, intact, not trusted", texts["madrid"]), \
        texts["madrid"][texts["madrid"].find("Attachments"):][:600]


# ------------------------------------------------------------------------------------ countersigning


def test_countersigning_keeps_gambits_revision_and_adds_a_valid_signature(app, signing_ca):
    from contracts.rules.countersigning import countersign_problem

    with app.app_context():
        issued = signing.sign_issued(valid_pdf(), document="contract FWWCM-2015-1-v1")
        key = __import__("hashlib").sha256(signing.load_identity().public_key_der()).hexdigest()

    def problem(content: bytes) -> str | None:
        import hashlib

        return countersign_problem(
            name="up.pdf", reference="FWWCM-2015-1-v1", issued_sha256=hashlib.sha256(issued).hexdigest(),
            issued_size=len(issued), content_sha256=hashlib.sha256(content).hexdigest(),
            keeps_issued=content.startswith(issued), inspection=signing.inspect_pdf(content), gambit_key_sha256=key)

    again = "Sign the issued PDF itself digitally (without printing, scanning or saving it anew) and upload that."
    organizer = trusted_signer(signing_ca, "Anna Organizer", "Lviv Chess")
    assert problem(issued) == ("up.pdf is FWWCM-2015-1-v1 exactly as Gambit issued it: it carries no "
                               f"countersignature. {again}")
    assert problem(valid_pdf()) == ("up.pdf does not contain the contract Gambit issued: it was made anew (printed to "
                                    "PDF, scanned or re-saved), so FIDE's signed version is gone and it carries no "
                                    f"signature at all. {again}")
    changed = sign(flip_one_signed_byte(issued), organizer, field="Organizer")
    assert problem(changed).startswith(f"up.pdf changes the version that Gambit signed: its first {len(issued)} bytes "
                                       "differ from FWWCM-2015-1-v1 as issued.")
    assert problem(append_unsigned_revision(issued)) == (
        f"up.pdf keeps FWWCM-2015-1-v1 as issued but adds no signature to it. {again}")
    assert problem(append_unsigned_revision(sign(issued, organizer, field="Organizer"))).startswith(
        "up.pdf: the file was changed after it was countersigned")
    assert problem(sign(issued, organizer, field="Organizer")) is None


def test_a_page_rewritten_then_countersigned_is_refused_and_fails_verification(app, signing_ca):
    """A later revision that replaces a page's content, then signed over by the organizer, keeps Gambit's bytes and
    is covered by an intact signature: only the difference analysis tells it changed what Gambit signed."""
    import hashlib

    from contracts.rules.countersigning import countersign_problem

    with app.app_context():
        issued = signing.sign_issued(valid_pdf(), document="contract FWWCM-2015-1-v1")
        forged = sign(rewrite_first_page(issued), trusted_signer(signing_ca, "Anna Organizer", "Lviv Chess"),
                      field="Organizer")
        inspection = signing.inspect_pdf(forged)
        verdict = signing.verify_issued(forged)
        key = hashlib.sha256(signing.load_identity().public_key_der()).hexdigest()
    assert forged.startswith(issued)
    ours = [s for s in inspection.signatures if s.public_key_sha256 == key]
    assert ours[0].intact and ours[0].altered_after and not ours[0].good
    assert "a later revision alters the signed content" in ours[0].words()
    assert countersign_problem(
        name="up.pdf", reference="FWWCM-2015-1-v1", issued_sha256=hashlib.sha256(issued).hexdigest(),
        issued_size=len(issued), content_sha256=hashlib.sha256(forged).hexdigest(), keeps_issued=True,
        inspection=inspection, gambit_key_sha256=key) == (
        "up.pdf keeps FWWCM-2015-1-v1 as issued but changes its content afterwards (a later revision alters the "
        "pages or the document beyond adding a signature), so it is not the contract Gambit issued, countersigned. "
        "Sign the issued PDF itself digitally (without printing, scanning or saving it anew) and upload that.")
    assert not verdict.ok and verdict.headline.startswith("Modified after signing: Gambit's signed revision is "
                                                          "intact, but a later revision of the file changes its")


# ------------------------------------------------------------------------------------ the call's procedure


def test_the_procedure_value_is_checked_when_the_call_is_loaded(reg):
    import json

    from events.regulation import RegulationError, regulation_from_dict

    assert reg.signatures.unsigned_letter == "warn"  # the 2015 call's file: warn, don't block
    with pytest.raises(RegulationError, match=r"signatures.unsigned_letter: use warn or block, got 'maybe'"):
        regulation_from_dict({**json.loads(reg.snapshot), "signatures": {"unsigned_letter": "maybe"}})


def test_a_call_that_blocks_refuses_an_unsigned_letter_until_a_good_one_is_attached(app, reg, make, signing_ca,
                                                                                   trusted_test_ca, rendered):
    import dataclasses
    import json

    from accounts.models import User
    from bids import services
    from bids.services import BidError
    from core.db import db, utcnow
    from demo.seed import practice_regulation
    from events.regulation import regulation_from_dict
    from events.services import load_event
    from tests.bids.factories import valid_bid

    owner_id = make.user(roles=("bidder",))
    with app.app_context():
        now = utcnow()
        practice = practice_regulation(reg, now=now)
        blocking = regulation_from_dict({**json.loads(practice.snapshot), "signatures": {"unsigned_letter": "block"}})
        event, _ = load_event(blocking, actor=None, now=now, source="test")
        owner = db.session.get(User, owner_id)
        bid = services.create_bid(event, owner=owner, actor=owner, now=now)
        data = dataclasses.replace(valid_bid(event.regulation), signed_on=now.date())
        services.apply_data(bid, data)
        db.session.flush()
        upload = dict(upload_dir=app.config["UPLOAD_DIR"], max_bytes=10**7, actor=owner, now=now)
        services.store_document(bid, "signed_letter", filename="letter.pdf", content=valid_pdf(), **upload)
        if data.guarantee_offered:
            services.store_document(bid, "guarantee", filename="g.pdf", content=valid_pdf(), **upload)
        with pytest.raises(BidError) as refused:
            services.submit_bid(bid, actor=owner, now=now)
        assert str(refused.value) == (
            "The bid cannot be submitted yet. The signed bid letter (Art. 15.2(k)): not signed (it carries no digital "
            "signature). Under the call's bidding procedure, the bid cannot be submitted until a letter with a good "
            "signature is attached.")
        good = sign(rendered[0], trusted_signer(signing_ca), reason="Letter of application")
        services.store_document(bid, "signed_letter", filename="letter.pdf", content=good, **upload)
        assert services.submit_bid(bid, actor=owner, now=now).number == 1  # an unsigned guarantee only warns
        db.session.rollback()


def test_the_trust_list_page_adds_a_certificate_and_judges_stored_letters_again(app, client, login_as, practice,
                                                                                rendered, signing_ca):
    from bids.models import BidDocument
    from core.db import db
    from tests.bids.web import start_bid, upload

    login_as("bidder")
    bid_id = start_bid(client)
    upload(client, bid_id, "signed_letter", sign(rendered[0], trusted_signer(signing_ca)), "letter.pdf")
    with app.app_context():
        doc = db.session.scalars(__import__("sqlalchemy").select(BidDocument).where(BidDocument.bid_id == bid_id)).one()
        assert doc.inspection.signatures[0].trusted is False
    client.post("/logout")
    login_as("admin")
    response = client.post("/admin/trust", data={"file": (io.BytesIO(b"-----BEGIN PRIVATE KEY-----"), "key.pem")},
                           content_type="multipart/form-data")
    assert response.status_code == 422
    assert "The file is not an X.509 certificate (PEM or DER)" in response.get_data(as_text=True)
    response = client.post("/admin/trust", data={"file": (io.BytesIO(signing.pem(signing_ca.ca)), "ca.pem")},
                           content_type="multipart/form-data")
    assert response.status_code == 302
    page = client.get("/admin/trust").get_data(as_text=True)
    assert ("Gambit Test CA (FIDE test) is on the trust list; 1 stored document had its signatures checked again."
            in page)
    with app.app_context():
        doc = db.session.get(BidDocument, doc.id)
        assert doc.inspection.signatures[0].trusted is True
    response = client.post("/admin/trust", data={"file": (io.BytesIO(signing.pem(signing_ca.ca)), "ca.pem")},
                           content_type="multipart/form-data")
    assert "Gambit Test CA (FIDE test) is already on the trust list." in response.get_data(as_text=True)


def test_a_signing_identity_that_cannot_be_loaded_is_said_on_the_public_page_not_a_500(another_app, event, tmp_path):
    """A wrong SIGNING_PKCS12 (or passphrase) must not take the public call page down: it says the identity is
    unavailable, and where the reason is."""
    bad = tmp_path / "broken.p12"
    bad.write_bytes(b"not a PKCS#12 file")
    app = another_app(SIGNING_PKCS12=str(bad), SIGNING_PASSPHRASE="wrong")
    response = app.test_client().get("/events/fwwcm-2015")
    assert response.status_code == 200
    page = response.get_data(as_text=True)
    assert "signing identity cannot be loaded just now (the server's log says why)" in page


@pytest.fixture
def broken_identity(app, monkeypatch, tmp_path):
    """The app's SIGNING_PKCS12 pointing at a file that is no PKCS#12 (with a wrong passphrase), for one test."""
    bad = tmp_path / "broken.p12"
    bad.write_bytes(b"not a PKCS#12 file")
    monkeypatch.setitem(app.config, "SIGNING_PKCS12", str(bad))
    monkeypatch.setitem(app.config, "SIGNING_PASSPHRASE", "wrong")
    with app.app_context(), pytest.raises(signing.SigningError):
        signing.load_identity()  # the identity really cannot be loaded: what the pages below must survive


UNAVAILABLE = "Gambit's signing identity cannot be loaded just now (the server's log says why)."


def test_a_signing_identity_that_cannot_be_loaded_is_said_on_verify_certificate_and_trust_pages_not_a_500(
        app, client, login_as, rendered, broken_identity):
    """The verify page and the certificate download cannot work without the identity: they say so (503); the
    trust list can, and says the identity is unavailable where it would show Gambit's certificate."""
    for response in (client.get("/verify"),
                     client.post("/verify", data={"file": (io.BytesIO(rendered[1]), "dossier.pdf")},
                                 content_type="multipart/form-data")):
        page = response.get_data(as_text=True).replace("&#39;", "'")
        assert response.status_code == 503
        assert f"{UNAVAILABLE} No PDF can be verified here until it is back" in page
        assert "Issued by Gambit" not in page
    response = client.get("/signing/certificate.pem")
    assert response.status_code == 503
    assert f"<h1>{UNAVAILABLE}</h1>" in response.get_data(as_text=True).replace("&#39;", "'")
    login_as("admin")
    response = client.get("/admin/trust")
    page = response.get_data(as_text=True).replace("&#39;", "'")
    assert response.status_code == 200
    assert f"{UNAVAILABLE} Gambit cannot sign what it issues until it is back" in page
    assert "Add to the trust list" in page
