"""The secretariat's trust list: the certificates (usually certification authorities) whose signatures on
uploaded documents count as trusted. Only certificates are kept here, never keys."""

from __future__ import annotations

import hashlib
from datetime import datetime

from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from sqlalchemy import ForeignKey, LargeBinary, String, select
from sqlalchemy.orm import Mapped, mapped_column

from core.db import Model, db, utcnow
from core.hooks import Hook
from evidence import audit
from evidence.signing import describe_cert


class TrustedCertificate(Model):
    __tablename__ = "trusted_certificate"

    id: Mapped[int] = mapped_column(primary_key=True)
    sha256: Mapped[str] = mapped_column(String(64), unique=True)
    subject: Mapped[str] = mapped_column(String(500))
    der: Mapped[bytes] = mapped_column(LargeBinary)
    not_after: Mapped[datetime]
    added_at: Mapped[datetime] = mapped_column(default=utcnow)
    added_by_id: Mapped[int | None] = mapped_column(ForeignKey("user.id", ondelete="SET NULL"))


class TrustError(ValueError):
    """A certificate that cannot be put on the trust list; the message says why."""


def parse_certificate(content: bytes) -> bytes:
    """The DER bytes of the one certificate in `content` (PEM or DER; the first of a PEM bundle). Raises
    TrustError when it is neither."""
    if not content:
        raise TrustError("The file is empty. Choose a certificate file (.pem, .crt or .cer).")
    try:
        if b"-----BEGIN CERTIFICATE-----" in content:
            cert = x509.load_pem_x509_certificates(content)[0]
        else:
            cert = x509.load_der_x509_certificate(content)
    except ValueError:
        raise TrustError("The file is not an X.509 certificate (PEM or DER). Ask the signer's certification "
                         "authority for its certificate, not a key or a signed document.") from None
    return cert.public_bytes(Encoding.DER)


def add_certificate(content: bytes, *, actor, now: datetime) -> TrustedCertificate:
    """Put the certificate in `content` on the trust list (once: the same certificate twice is refused). Raises
    TrustError. Writes `trust.add` to the audit log."""
    der = parse_certificate(content)
    digest = hashlib.sha256(der).hexdigest()
    subject = describe_cert(der)
    if db.session.scalar(select(TrustedCertificate).where(TrustedCertificate.sha256 == digest)) is not None:
        raise TrustError(f"{subject} is already on the trust list.")
    not_after = x509.load_der_x509_certificate(der).not_valid_after_utc
    row = TrustedCertificate(sha256=digest, subject=subject[:500], der=der, not_after=not_after, added_at=now,
                             added_by_id=getattr(actor, "id", None))
    db.session.add(row)
    db.session.flush()
    audit.record("trust.add", row, actor=actor, now=now, data={"subject": subject, "sha256": digest})
    return row


def remove_certificate(row: TrustedCertificate, *, actor, now: datetime) -> None:
    """Take a certificate off the trust list. Writes `trust.remove` to the audit log."""
    audit.record("trust.remove", row, actor=actor, now=now, data={"subject": row.subject, "sha256": row.sha256})
    db.session.delete(row)
    db.session.flush()


def trusted_roots() -> list[bytes]:
    """The DER certificates on the trust list."""
    return list(db.session.scalars(select(TrustedCertificate.der).order_by(TrustedCertificate.id)))


def trust_list() -> list[TrustedCertificate]:
    return list(db.session.scalars(select(TrustedCertificate).order_by(TrustedCertificate.id)))


# Every stored upload whose signatures were judged against the trust list, judged again with the list as it now is:
# the bids' signed letters and guarantees and the contracts' countersigned copies (core knows no domain). Provided by
# app.py (create_app); it takes actor=, now= and upload_dir= and returns how many documents it checked.
recheck_signatures: Hook[..., int] = Hook("evidence.trust.recheck_signatures")


def recheck_all(*, actor, now: datetime, upload_dir: str) -> int:
    """Re-judge every stored upload's signatures against the trust list as it now is (the hook
    `recheck_signatures`); the number checked. Raises LookupError in an app not made by create_app."""
    return recheck_signatures(actor=actor, now=now, upload_dir=upload_dir)
