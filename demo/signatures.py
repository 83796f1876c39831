"""The demo's signatures: the instance's development CA on the trust list, and bidders' signing identities
issued by it, so that a newcomer sees a verified signature on the demo letters and the countersigned contract."""

from __future__ import annotations

import hashlib
from datetime import datetime
from functools import lru_cache

from flask import current_app

from evidence import signing, trust


def seed_trust(*, actor, now: datetime) -> list[str]:
    """Put the development CA on the trust list (once)."""
    _, ca_cert = signing.dev_ca(current_app.instance_path)
    try:
        row = trust.add_certificate(signing.pem(ca_cert), actor=actor, now=now)
    except trust.TrustError:
        return []
    return [f"demo trust list: {row.subject}"]


@lru_cache(maxsize=32)
def _identity(instance_path: str, common_name: str, organisation: str) -> signing.Identity:
    ca_key, ca_cert = signing.dev_ca(instance_path)
    return signing.issue_identity(ca_key, ca_cert, common_name, organisation)


def demo_identity(common_name: str, organisation: str) -> signing.Identity:
    """A signing identity for a demo person, issued by the development CA (marked as a development identity)."""
    return _identity(current_app.instance_path, common_name, organisation)


def signed_by(data: bytes, common_name: str, organisation: str, *, reason: str) -> bytes:
    """`data` (a PDF) with the demo person's digital signature added."""
    digest = hashlib.sha256(f"{common_name}|{organisation}|{reason}".encode()).hexdigest()[:12]
    return signing.sign_with(data, demo_identity(common_name, organisation), reason=reason,
                             field_name=f"Signature-{digest}")
