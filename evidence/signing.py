"""Digital signatures (PAdES, with pyHanko): Gambit signs every PDF it issues, anyone can check a PDF it issued,
and the signatures of uploaded documents are read and judged. No rule of the regulations lives here.

The signing identity is a PKCS#12 file named by SIGNING_PKCS12 (passphrase SIGNING_PASSPHRASE). Without it, a
development CA and a signing certificate are generated once into the instance folder (like the secret key);
every certificate of that kind carries DEV_MARK in its subject, so every page and message that shows a
signature made with it says it is a development identity.
"""

from __future__ import annotations

import contextvars
import hashlib
import io
import logging
import os
import secrets
import threading
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from asn1crypto import x509 as asn1_x509
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import (
    BestAvailableEncryption,
    Encoding,
    NoEncryption,
    PublicFormat,
    pkcs12,
)
from cryptography.x509.oid import NameOID
from flask import current_app
from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign import fields, signers
from pyhanko.sign.diff_analysis import ModificationLevel
from pyhanko.sign.signers import Signer, SimpleSigner
from pyhanko.sign.timestamps import HTTPTimeStamper
from pyhanko.sign.validation import SignatureCoverageLevel, validate_pdf_signature
from pyhanko.sign.validation.settings import KeyUsageConstraints
from pyhanko_certvalidator import ValidationContext

from evidence.pdf import PdfError, inflation_problem, looks_like_pdf

log = logging.getLogger(__name__)
# An untrusted signer is an expected finding, reported in words; pyHanko would also log it as a warning each time.
logging.getLogger("pyhanko.sign.validation.generic_cms").setLevel(logging.ERROR)

# What pyHanko's validation logs while inspect_pdf runs (a difference analysis that failed on a changed file, with
# its traceback) is a finding about the file, not a fault of Gambit: it is kept for the verdict instead of being
# written to the log.
_findings: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("pyhanko_findings", default=None)


class _KeepFindings(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        kept = _findings.get()
        if kept is None:
            return True
        words = record.getMessage()
        why = str(record.exc_info[1]).strip() if record.exc_info and record.exc_info[1] is not None else ""
        if why:  # its first line says why; the lines after it list the objects concerned
            words += f": {why.splitlines()[0]}"
        kept.append(" ".join(words.split()))
        return False


# A logger's filters see the records made on that very logger: every pyHanko logger there is once pyHanko's
# signing and validation modules are imported (above).
for _logger in [n for n in logging.root.manager.loggerDict if n == "pyhanko" or n.startswith("pyhanko.")]:
    logging.getLogger(_logger).addFilter(_KeepFindings())

REASON_PREFIX = "Issued by Gambit: "
DEV_MARK = "Development identity - not for real documents"
DEV_FILE = "signing-dev.p12"
DEV_CA_FILE = "signing-dev-ca.pem"
_lock = threading.Lock()


class SigningError(PdfError):
    """The signing identity cannot be loaded or the PDF cannot be signed (the message says which). A PdfError:
    an unsigned PDF is not issued, and every caller that handles a failed render handles this too."""


# ------------------------------------------------------------------------------------------ certificates


def _name(common_name: str, organisation: str, unit: str | None):
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, organisation)]
    if unit:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, unit))
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    return x509.Name(attrs)


def make_ca(common_name: str, *, organisation: str = "Gambit", unit: str | None = DEV_MARK, years: int = 10):
    """A new certification authority: (private key, self-signed certificate), EC P-256 (fast to make)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = _name(common_name, organisation, unit)
    now = datetime.now(UTC) - timedelta(days=1)
    ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + timedelta(days=365 * years))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False,
                                         key_encipherment=False, data_encipherment=False, key_agreement=False,
                                         key_cert_sign=True, crl_sign=True, encipher_only=False,
                                         decipher_only=False), critical=True)
            .add_extension(ski, critical=False)
            .sign(key, hashes.SHA256()))
    return key, cert


def make_signer_cert(ca_key, ca_cert, common_name: str, *, organisation: str = "Gambit",
                     unit: str | None = DEV_MARK, years: int = 5):
    """A signing certificate issued by (ca_key, ca_cert): (private key, certificate), with the key usages a
    document signature needs (digital signature, non-repudiation)."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.now(UTC) - timedelta(days=1)
    ca_ski = ca_cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    cert = (x509.CertificateBuilder().subject_name(_name(common_name, organisation, unit))
            .issuer_name(ca_cert.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + timedelta(days=365 * years))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=True, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                         crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return key, cert


def pkcs12_bytes(key, cert, cas: Sequence = (), passphrase: str = "", name: str = "gambit") -> bytes:
    """The identity as a PKCS#12 file (encrypted with `passphrase` when one is given)."""
    encryption = BestAvailableEncryption(passphrase.encode()) if passphrase else NoEncryption()
    return pkcs12.serialize_key_and_certificates(name.encode(), key, cert, list(cas) or None, encryption)


def pem(cert) -> bytes:
    return cert.public_bytes(Encoding.PEM)


def _write_once(path: Path, data: bytes) -> None:
    """Write `data` to `path` unless it exists; two processes at once: the first link wins (see config.py)."""
    tmp = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        tmp.unlink()


DEV_CA_KEY_FILE = "signing-dev-ca.p12"


def dev_ca(folder: str | Path):
    """The development CA of the instance in `folder`: (private key, certificate), made on first use (kept with
    no passphrase, mode 0600, like the secret key). Only a development instance has one: the demo issues its
    bidders' signing certificates from it."""
    folder = Path(folder)
    path = folder / DEV_CA_KEY_FILE
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        ca_key, ca_cert = make_ca("Gambit development CA")
        _write_once(path, pkcs12_bytes(ca_key, ca_cert, name="gambit-dev-ca"))
    bundle = pkcs12.load_pkcs12(path.read_bytes(), None)
    assert bundle.key is not None and bundle.cert is not None  # written above with both
    return bundle.key, bundle.cert.certificate


def ensure_dev_identity(folder: str | Path) -> Path:
    """The development identity's PKCS#12 in `folder`, generated on first use (a signing certificate issued by
    dev_ca, both marked DEV_MARK; no passphrase, mode 0600 like the secret key), and the CA certificate beside it
    as PEM (for `pyhanko sign validate --trust`)."""
    folder = Path(folder)
    path = folder / DEV_FILE
    if not path.exists():
        ca_key, ca_cert = dev_ca(folder)
        key, cert = make_signer_cert(ca_key, ca_cert, "Gambit development signing identity")
        _write_once(path, pkcs12_bytes(key, cert, [ca_cert]))
    ca_pem = folder / DEV_CA_FILE
    if not ca_pem.exists():
        ca_pem.write_bytes(pem(dev_ca(folder)[1]))
    return path


def issue_identity(ca_key, ca_cert, common_name: str, organisation: str, *, unit: str | None = DEV_MARK) -> Identity:
    """A new signing identity issued by (ca_key, ca_cert): how the demo and the tests sign as a bidder."""
    key, cert = make_signer_cert(ca_key, ca_cert, common_name, organisation=organisation, unit=unit)
    return identity_from_pkcs12(pkcs12_bytes(key, cert, [ca_cert]))


# ------------------------------------------------------------------------------------------ the identity


@dataclass(frozen=True)
class Identity:
    """Gambit's signing identity as loaded: the pyHanko signer, its certificate and chain (DER)."""

    signer: Signer
    cert_der: bytes
    chain_der: tuple[bytes, ...]
    development: bool
    tsa_url: str = ""

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(self.cert_der).hexdigest()

    @property
    def subject(self) -> str:
        return describe_cert(self.cert_der)

    def certificates_pem(self) -> bytes:
        """The signing certificate and its chain, PEM, to download and trust in a PDF reader."""
        return b"".join(pem(x509.load_der_x509_certificate(d)) for d in (self.cert_der, *self.chain_der))

    def public_key_der(self) -> bytes:
        return _public_key(self.cert_der)


def _public_key(cert_der: bytes) -> bytes:
    return x509.load_der_x509_certificate(cert_der).public_key().public_bytes(
        Encoding.DER, PublicFormat.SubjectPublicKeyInfo)


def is_development(cert_der: bytes) -> bool:
    """A certificate made by ensure_dev_identity (or any marked so): it proves nothing outside a test instance."""
    cert = x509.load_der_x509_certificate(cert_der)
    return any(a.value == DEV_MARK for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATIONAL_UNIT_NAME))


def describe_cert(cert_der: bytes) -> str:
    """"Jane Doe (Ukrainian Chess Federation)": the subject's common name and organisation."""
    subject = x509.load_der_x509_certificate(cert_der).subject
    cn = [a.value for a in subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
    org = [a.value for a in subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    who = str(cn[0]) if cn else subject.rfc4514_string()
    return f"{who} ({org[0]!s})" if org and str(org[0]) not in who else who


def load_identity(app=None) -> Identity:
    """Gambit's signing identity: SIGNING_PKCS12 (with SIGNING_PASSPHRASE), else the development identity in the
    instance folder (made on first use). Cached per file and modification time. Raises SigningError when the
    file cannot be read or opened."""
    # Flask types current_app as the app it proxies, without the proxy's own methods.
    app = app or current_app._get_current_object()  # type: ignore[attr-defined]
    configured = app.config.get("SIGNING_PKCS12") or ""
    path = Path(configured) if configured else ensure_dev_identity(app.instance_path)
    passphrase = (app.config.get("SIGNING_PASSPHRASE") or "") if configured else ""
    try:
        stamp = (str(path), path.stat().st_mtime_ns, passphrase, app.config.get("SIGNING_TSA_URL") or "")
        raw = path.read_bytes()
    except OSError as exc:
        raise SigningError(f"the signing identity {path} cannot be read ({exc.strerror})") from None
    cache = app.extensions.setdefault("gambit_signing", {})
    with _lock:
        found = cache.get("identity")
        if found is not None and cache.get("stamp") == stamp:
            return found
        try:
            identity = identity_from_pkcs12(raw, passphrase, tsa_url=stamp[3])
        except SigningError as exc:
            raise SigningError(f"the signing identity {path} cannot be opened: {exc}") from None
        cache.update(identity=identity, stamp=stamp)
        return identity


# ------------------------------------------------------------------------------------------ signing


def sign_issued(data: bytes, *, document: str, identity: Identity | None = None) -> bytes:
    """`data` (a PDF Gambit just rendered) with Gambit's invisible PAdES signature appended as an incremental
    update; the signature's reason names `document` ("dossier FWWCM-2015-BID3-D1"), which is how a verifier
    tells which document and version it is. Raises SigningError."""
    identity = identity or load_identity()
    return sign_with(data, identity, reason=f"{REASON_PREFIX}{document}", field_name="GambitSignature")


def _invisible_field(name: str) -> fields.SigFieldSpec:
    """An invisible signature field that keeps a PDF/A-3 and PDF/UA-1 file so: its widget is printable and not
    hidden (PDF/A), zero-sized and off the page, so it needs no appearance (PDF/A) and no tag (PDF/UA); PDF/UA
    wants every widget on the page tagged or hidden, which PDF/A forbids."""
    return fields.SigFieldSpec(sig_field_name=name,
                               invis_sig_settings=fields.InvisSigSettings(set_print_flag=True, set_hidden_flag=False,
                                                                          box_out_of_bounds=True))


def sign_with(data: bytes, identity: Identity, *, reason: str, field_name: str) -> bytes:
    """`data` signed by `identity` in a new invisible signature field `field_name` (an incremental update: the
    bytes before it are kept as they are, and a PDF/A-3 or PDF/UA-1 file stays one: see _invisible_field). Also
    how the demo and the tests sign as someone else. Raises SigningError."""
    timestamper = None
    if identity.tsa_url:
        timestamper = HTTPTimeStamper(identity.tsa_url)
    meta = signers.PdfSignatureMetadata(field_name=field_name, reason=reason, subfilter=fields.SigSeedSubFilter.PADES,
                                        md_algorithm="sha256")
    try:
        writer = IncrementalPdfFileWriter(io.BytesIO(data), strict=False)
        out = signers.sign_pdf(writer, meta, signer=identity.signer, timestamper=timestamper,
                               new_field_spec=_invisible_field(field_name))
    except Exception as exc:  # pyHanko raises several kinds (PdfReadError, SigningError, network errors)
        raise SigningError(f"the PDF could not be signed: {exc}") from exc
    return out.getvalue()


def identity_from_pkcs12(raw: bytes, passphrase: str = "", *, tsa_url: str = "") -> Identity:
    """An Identity from PKCS#12 bytes. Raises SigningError when they cannot be opened."""
    try:
        bundle = pkcs12.load_pkcs12(raw, passphrase.encode() or None)
        signer = SimpleSigner.load_pkcs12_data(raw, other_certs=(), passphrase=passphrase.encode() or None)
    except ValueError as exc:
        raise SigningError(f"wrong passphrase or not a PKCS#12 file ({exc})") from None
    if bundle.cert is None or signer is None:
        raise SigningError("the PKCS#12 file holds no certificate and key")
    cert_der = bundle.cert.certificate.public_bytes(Encoding.DER)
    chain = tuple(c.certificate.public_bytes(Encoding.DER) for c in bundle.additional_certs)
    return Identity(signer=signer, cert_der=cert_der, chain_der=chain, development=is_development(cert_der),
                    tsa_url=tsa_url)


# ------------------------------------------------------------------------------------------ reading signatures


@dataclass(frozen=True)
class SignatureInfo:
    """One embedded signature, judged: who, when, whether the signed bytes are intact, whether the file was
    changed after it (by anything no later signature covers), and whether the signer is trusted."""

    signer: str
    signed_at: datetime | None
    timestamped: bool
    intact: bool
    modified_after: bool
    trusted: bool
    development: bool
    reason: str
    cert_sha256: str
    public_key_sha256: str
    revision_end: int  # where the signed revision ends (bytes): what a later countersignature must keep
    # A later revision changes what was signed (pyHanko's difference analysis finds more than signatures, form
    # filling and validation data added), even if a later signature covers it: a countersignature may not do that.
    altered_after: bool = False
    # What pyHanko's validation said of this signature beyond its verdict (why its difference analysis failed):
    # shown by the verdict, not stored.
    notes: tuple[str, ...] = field(default=(), compare=False)

    def words(self) -> str:
        """"signed by Jane Doe (UCF) on 2 March 2015 at 14:03 UTC, intact, trusted"."""
        when = f" on {self.signed_at:%-d %B %Y at %H:%M} UTC" if self.signed_at else ""
        parts = [f"signed by {self.signer}{when}"]
        if not self.intact:
            parts.append("altered after signing (the signed bytes no longer match the signature)")
        elif self.modified_after:
            parts.append("changed after signing (content was added that no signature covers)")
        elif self.altered_after:
            parts.append("changed after signing (a later revision alters the signed content, beyond adding "
                         "signatures or filling in form fields)")
        else:
            parts.append("intact")
        parts.append("trusted" if self.trusted else "not trusted (the signer's certificate is not on the "
                                                     "secretariat's trust list, nor issued by one on it)")
        if self.development:
            parts.append("a development identity, not for real documents")
        return ", ".join(parts)

    @property
    def good(self) -> bool:
        return self.intact and not self.modified_after and not self.altered_after and self.trusted

    def as_dict(self) -> dict:
        return {"signer": self.signer, "signed_at": self.signed_at.isoformat() if self.signed_at else None,
                "timestamped": self.timestamped, "intact": self.intact, "modified_after": self.modified_after,
                "trusted": self.trusted, "development": self.development, "reason": self.reason,
                "cert_sha256": self.cert_sha256, "public_key_sha256": self.public_key_sha256,
                "revision_end": self.revision_end, "altered_after": self.altered_after}

    @classmethod
    def from_dict(cls, d: dict) -> SignatureInfo:
        return cls(**{**d, "signed_at": datetime.fromisoformat(d["signed_at"]) if d.get("signed_at") else None})


@dataclass(frozen=True)
class Inspection:
    """Every signature of a PDF, in signing order; `problem` when the file could not be read at all."""

    signatures: tuple[SignatureInfo, ...] = ()
    problem: str = ""
    size: int = 0
    checked_at: datetime | None = None

    @property
    def signed(self) -> bool:
        return bool(self.signatures)

    def words(self) -> str:
        """The result in one sentence for the compliance report, the bid page and the dossier."""
        if self.problem:
            return f"its signatures could not be read ({self.problem})"
        if not self.signatures:
            return "not signed (it carries no digital signature)"
        return "; ".join(s.words() for s in self.signatures)

    @property
    def good(self) -> bool:
        """Signed, and every signature intact, unchanged after and trusted."""
        return self.signed and not self.problem and all(s.good for s in self.signatures)

    def as_dict(self) -> dict:
        return {"signatures": [s.as_dict() for s in self.signatures], "problem": self.problem, "size": self.size,
                "checked_at": self.checked_at.isoformat() if self.checked_at else None}

    @classmethod
    def from_dict(cls, d: dict) -> Inspection:
        return cls(signatures=tuple(SignatureInfo.from_dict(s) for s in d.get("signatures", [])),
                   problem=d.get("problem", ""), size=d.get("size", 0),
                   checked_at=datetime.fromisoformat(d["checked_at"]) if d.get("checked_at") else None)


def _asn1_cert(der: bytes):
    return asn1_x509.Certificate.load(der)


def inspect_pdf(data: bytes, *, trust_roots: Iterable[bytes] = (), now: datetime | None = None) -> Inspection:
    """Read and judge every signature in `data` (a PDF): pyHanko's validation for integrity and for trust
    (a path to one of `trust_roots`, DER certificates; no network: no fetching, revocation soft-fail), the
    signed revision's coverage for changes made after signing. Never raises: an unreadable file gives
    `problem`."""
    roots = [_asn1_cert(d) for d in trust_roots]
    # Judged before pyHanko reads a byte: it unpacks streams (up to 256 MB each) and reads no signature of an
    # encrypted file, which would then pass for "not signed".
    swelling = inflation_problem(data)
    if swelling:
        return Inspection(problem=f"it {swelling}", size=len(data), checked_at=now)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reader = PdfFileReader(io.BytesIO(data), strict=False)
            if reader.encrypted:
                return Inspection(problem="it is encrypted (protected by a password), so its signatures cannot be "
                                          "read; ask for a copy saved without protection", size=len(data),
                                  checked_at=now)
            embedded = list(reader.embedded_regular_signatures)
    except Exception as exc:  # a damaged file: pyHanko raises many kinds
        return Inspection(problem=" ".join(str(exc).split())[:160] or type(exc).__name__, size=len(data),
                          checked_at=now)
    results: list[dict[str, Any]] = []
    for sig in embedded:
        kept: list[str] = []
        token = _findings.set(kept)
        try:
            context = ValidationContext(trust_roots=roots, allow_fetching=False, revocation_mode="soft-fail")
            # Any certificate that can sign documents: a bank's or a federation's may lack non-repudiation.
            # The difference analysis runs: a later revision that rewrites a page and is then countersigned
            # leaves this signature intact and the file covered, yet changes what was signed.
            status = validate_pdf_signature(sig, context, skip_diff=False,
                                            key_usage_settings=KeyUsageConstraints(key_usage=set()))
            intact, valid = status.intact, status.valid
            level = status.modification_level
            altered = status.docmdp_ok is False or (level is not None and level > ModificationLevel.FORM_FILLING)
            trusted = bool(status.trusted)
            whole = status.coverage == SignatureCoverageLevel.ENTIRE_FILE
            when = status.signer_reported_dt
            stamp = status.timestamp_validity
            timestamped = stamp is not None
            if stamp is not None:
                when = stamp.timestamp
        except Exception as exc:  # a malformed signature: reported as not intact
            log.info("signature could not be validated: %s", exc)
            intact = valid = trusted = whole = timestamped = altered = False
            when = None
        finally:
            _findings.reset(token)
        cert_der = sig.signer_cert.dump()
        reason = ""
        try:
            reason = str(sig.sig_object.get("/Reason", ""))
        except Exception:  # noqa: S110 - an odd reason entry is simply not shown
            pass
        results.append(dict(
            signer=describe_cert(cert_der), signed_at=when.astimezone(UTC) if when else None, timestamped=timestamped,
            intact=bool(intact and valid), whole=whole, trusted=trusted and bool(intact and valid),
            development=is_development(cert_der), reason=reason,
            cert_sha256=hashlib.sha256(cert_der).hexdigest(),
            public_key_sha256=hashlib.sha256(_public_key(cert_der)).hexdigest(),
            revision_end=_revision_end(sig), altered_after=altered, notes=tuple(kept)))
    # A signature followed by changes is still unchanged where a later intact signature covers the whole file
    # (a countersignature covers every byte before it).
    sealed_from = None
    for i in range(len(results) - 1, -1, -1):
        if results[i]["whole"] and results[i]["intact"]:
            sealed_from = i
            break
    infos = []
    for i, r in enumerate(results):
        whole = r.pop("whole")
        modified = not whole and not (sealed_from is not None and sealed_from > i)
        infos.append(SignatureInfo(modified_after=modified, **r))
    return Inspection(signatures=tuple(infos), size=len(data), checked_at=now)


def _revision_end(sig) -> int:
    try:
        _, _, start2, len2 = sig.byte_range
        return int(start2) + int(len2)
    except Exception:  # a byte range of another shape: unknown
        return 0


# ------------------------------------------------------------------------------------------ verifying Gambit's


@dataclass(frozen=True)
class Verdict:
    """What `flask pdf verify` and the public verify page say about a PDF: issued by Gambit and unchanged, or
    exactly what is wrong."""

    ok: bool
    headline: str
    details: tuple[str, ...] = ()
    document: str = ""
    signed_at: datetime | None = None
    development: bool = False

    def lines(self) -> list[str]:
        return [self.headline, *self.details]


def _gambit_signatures(inspection: Inspection, identity: Identity) -> list[SignatureInfo]:
    key = hashlib.sha256(identity.public_key_der()).hexdigest()
    return [s for s in inspection.signatures if s.public_key_sha256 == key]


def verify_issued(data: bytes, *, identity: Identity | None = None) -> Verdict:
    """Whether `data` is a PDF Gambit issued, unchanged: signed with Gambit's key (the signature's reason names
    the document and version), the signed bytes intact, nothing added after that no later signature covers.
    Otherwise which of these is wrong. Never raises for a bad file."""
    identity = identity or load_identity()
    if not looks_like_pdf(data):
        return Verdict(False, "Not a PDF: the file does not start like a PDF, so it is not a document Gambit issued.")
    roots = identity.chain_der or (identity.cert_der,)
    inspection = inspect_pdf(data, trust_roots=roots)
    if inspection.problem:
        return Verdict(False, f"Not readable: the PDF could not be read ({inspection.problem}).")
    if not inspection.signed:
        return Verdict(False, "Not signed: this PDF carries no digital signature, so nothing shows that Gambit "
                              "issued it. Ask the secretariat for the signed copy.")
    ours = _gambit_signatures(inspection, identity)
    dev_note = ("Signed with a development identity that this Gambit instance generated for testing: it shows "
                "the check works, and proves nothing about a real document.")
    if not ours:
        others = ", ".join(s.signer for s in inspection.signatures)
        return Verdict(False, f"Signed by another key: this PDF is signed by {others}, not with Gambit's signing key "
                              f"({identity.subject}). It is not a document Gambit issued in this form.")
    sig = ours[0]
    document = sig.reason[len(REASON_PREFIX):] if sig.reason.startswith(REASON_PREFIX) else sig.reason
    when = f"{sig.signed_at:%-d %B %Y at %H:%M} UTC" if sig.signed_at else "at an unknown time"
    details = [f"Document: {document or 'not named in the signature'}.",
               f"Signed by {sig.signer} on {when}" + (" (time-stamped)." if sig.timestamped else ".")]
    if sig.development:
        details.append(dev_note)
    if not sig.intact:
        return Verdict(False, "Modified after signing: the bytes Gambit signed have been changed, so the signature "
                              "no longer matches them. This is not the document Gambit issued.",
                       tuple(details), document, sig.signed_at, sig.development)
    if not sig.trusted:
        return Verdict(False, "Signed by another key: the signature is intact but its certificate does not chain to "
                              "Gambit's certificate authority.", tuple(details), document, sig.signed_at,
                       sig.development)
    details += [f"pyHanko's difference analysis: {note.rstrip('.')}." for note in sig.notes]
    if sig.modified_after:
        if sig.altered_after:
            details.append("What was added also changes the content Gambit signed (more than adding a signature "
                           "or filling in a form field).")
        added = max(inspection.size - sig.revision_end, 0)
        return Verdict(False, f"Modified after signing: Gambit's signed revision is intact, but {added} bytes were "
                              "added to the file after Gambit signed it, and no later signature covers them. What "
                              "you see may differ from what Gambit issued.",
                       tuple(details), document, sig.signed_at, sig.development)
    if sig.altered_after:
        return Verdict(False, "Modified after signing: Gambit's signed revision is intact, but a later revision of "
                              "the file changes its content (more than adding a signature or filling in a form "
                              "field), even if it was signed afterwards. What you see is not what Gambit issued.",
                       tuple(details), document, sig.signed_at, sig.development)
    later = [s for s in inspection.signatures if s.revision_end > sig.revision_end and s not in ours]
    for other in later:
        details.append(f"Countersigned after Gambit: {other.words()}.")
    headline = (f"Issued by Gambit: {document}, signed on {when}, unchanged since"
                + (" except for the countersignature below." if later else "."))
    return Verdict(True, headline, tuple(details), document, sig.signed_at, sig.development)
