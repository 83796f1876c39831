"""The countersigned contract as pure rules: whether an uploaded PDF is the issued contract countersigned, and
whether the organizer's signature is trusted (or accepted with a reason)."""

from __future__ import annotations

# --------------------------------------------------------------------------------------- countersigning


def countersign_problem(*, name: str, reference: str, issued_sha256: str, issued_size: int, content_sha256: str,
                        keeps_issued: bool, inspection, gambit_key_sha256: str) -> str | None:
    """Why `name` is not the issued contract countersigned, or None when it is: it keeps the PDF Gambit issued
    byte for byte (`keeps_issued`: the file starts with those bytes; a signature added by a PDF reader is an
    incremental update that appends to the file) and adds at least one intact signature after it that covers the
    whole file. `inspection` is evidence.signing.Inspection of the upload; `gambit_key_sha256` the SHA-256 of Gambit's
    public key (SubjectPublicKeyInfo)."""
    again = "Sign the issued PDF itself digitally (without printing, scanning or saving it anew) and upload that."
    if content_sha256 == issued_sha256:
        return (f"{name} is {reference} exactly as Gambit issued it: it carries no countersignature. {again}")
    ours = [s for s in inspection.signatures if s.public_key_sha256 == gambit_key_sha256]
    if not keeps_issued:
        if not ours:
            unsigned = "" if inspection.signed else " and it carries no signature at all"
            return (f"{name} does not contain the contract Gambit issued: it was made anew (printed to PDF, scanned "
                    f"or re-saved), so FIDE's signed version is gone{unsigned}. {again}")
        return (f"{name} changes the version that Gambit signed: its first {issued_size} bytes differ from "
                f"{reference} as issued. A countersignature adds to the issued file; it never changes it. {again}")
    later = [s for s in inspection.signatures if s.revision_end > issued_size and s not in ours]
    if not later:
        return f"{name} keeps {reference} as issued but adds no signature to it. {again}"
    broken = [s for s in later if not s.intact]
    if broken:
        return f"{name}: the signature added after Gambit's is not valid ({broken[0].words()}). {again}"
    if not any(not s.modified_after for s in later):
        return (f"{name}: the file was changed after it was countersigned ({later[-1].words()}). Upload the file "
                "as it was signed.")
    if any(s.altered_after for s in ours):
        return (f"{name} keeps {reference} as issued but changes its content afterwards (a later revision alters "
                "the pages or the document beyond adding a signature), so it is not the contract Gambit issued, "
                f"countersigned. {again}")
    return None


def countersign_trust_problem(*, name: str, reference: str, signatures, accepted_reason: str) -> str | None:
    """Why the organizer's countersignature does not make the contract signed, or None when it does: at least one
    of `signatures` (evidence.signing.SignatureInfo, those added after Gambit's) must be trusted (its certificate, or
    one that issued it, on the secretariat's trust list, valid when checked, not known revoked), unless the
    secretariat accepts an untrusted one explicitly, with a reason (`accepted_reason`)."""
    if any(s.trusted for s in signatures) or accepted_reason.strip():
        return None
    words = "; ".join(s.words() for s in signatures)
    return (f"{name}: the organizer's signature is not trusted ({words}), so {reference} stays issued, not signed. "
            "Add the organizer's certificate (or the certification authority's that issued it) to the trust list "
            "and upload the file again, or accept this signature explicitly and say why.")
