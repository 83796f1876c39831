"""contracts.rules.countersigning as the secretariat reads it: each reason an upload is not the issued contract
countersigned, and why an untrusted countersignature leaves it issued, word for word. The inspections are the
values evidence.signing.inspect_pdf returns (its SignatureInfo and Inspection), one for each case an upload can be:
Gambit's signature ends where the issued file ends (ISSUED bytes); the organizer's revision ends after it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from contracts.rules.countersigning import countersign_problem, countersign_trust_problem
from evidence.signing import Inspection, SignatureInfo

ISSUED = 1000  # bytes of the issued PDF
GAMBIT_KEY = "a" * 64
AGAIN = "Sign the issued PDF itself digitally (without printing, scanning or saving it anew) and upload that."
NAME, REF = "signed.pdf", "FWWCM-2015-1-v1"


def signature(signer: str, *, key: str = "b" * 64, end: int = ISSUED + 500, intact: bool = True,
              modified_after: bool = False, altered_after: bool = False, trusted: bool = True) -> SignatureInfo:
    return SignatureInfo(signer=signer, signed_at=datetime(2015, 7, 2, 14, 3, tzinfo=UTC), timestamped=False,
                         intact=intact, modified_after=modified_after, trusted=trusted, development=False, reason="",
                         cert_sha256="c" * 64, public_key_sha256=key, revision_end=end, altered_after=altered_after)


GAMBIT = signature("Gambit (FIDE)", key=GAMBIT_KEY, end=ISSUED)
ORGANIZER = signature("Anna Organizer (Lviv Chess)")


def problem(*signatures: SignatureInfo, keeps_issued: bool = True, content: str = "d" * 64) -> str | None:
    return countersign_problem(name=NAME, reference=REF, issued_sha256="e" * 64, issued_size=ISSUED,
                               content_sha256=content, keeps_issued=keeps_issued,
                               inspection=Inspection(signatures=signatures, size=ISSUED + 500),
                               gambit_key_sha256=GAMBIT_KEY)


def test_the_issued_file_countersigned_after_gambits_signature_is_accepted():
    assert problem(GAMBIT, ORGANIZER) is None
    assert problem(GAMBIT, signature("Second signatory"), ORGANIZER) is None


def test_the_issued_file_itself_carries_no_countersignature():
    assert problem(GAMBIT, content="e" * 64) == (
        f"{NAME} is {REF} exactly as Gambit issued it: it carries no countersignature. {AGAIN}")


def test_a_file_made_anew_says_whether_it_carries_any_signature_at_all():
    assert problem(keeps_issued=False) == (
        f"{NAME} does not contain the contract Gambit issued: it was made anew (printed to PDF, scanned or re-saved), "
        f"so FIDE's signed version is gone and it carries no signature at all. {AGAIN}")
    assert problem(ORGANIZER, keeps_issued=False) == (
        f"{NAME} does not contain the contract Gambit issued: it was made anew (printed to PDF, scanned or re-saved), "
        f"so FIDE's signed version is gone. {AGAIN}")


def test_a_file_that_keeps_gambits_signature_but_not_its_bytes_changes_the_signed_version():
    assert problem(GAMBIT, ORGANIZER, keeps_issued=False) == (
        f"{NAME} changes the version that Gambit signed: its first {ISSUED} bytes differ from {REF} as issued. A "
        f"countersignature adds to the issued file; it never changes it. {AGAIN}")


@pytest.mark.parametrize("signatures", [
    (GAMBIT,),
    (GAMBIT, signature("Signed within the issued bytes", end=ISSUED)),  # ends where the issued file ends
    (signature("Gambit again", key=GAMBIT_KEY, end=ISSUED + 500),),  # only Gambit's own key after the issue
], ids=["gambits-only", "ends-at-the-issued-size", "gambits-key-later"])
def test_the_issued_file_with_no_signature_added_after_it_is_refused(signatures):
    assert problem(*signatures) == f"{NAME} keeps {REF} as issued but adds no signature to it. {AGAIN}"


def test_a_broken_countersignature_is_named():
    broken = signature("Anna Organizer (Lviv Chess)", intact=False)
    assert problem(GAMBIT, ORGANIZER, broken) == (
        f"{NAME}: the signature added after Gambit's is not valid (signed by Anna Organizer (Lviv Chess) on 2 July "
        "2015 at 14:03 UTC, altered after signing (the signed bytes no longer match the signature), trusted). "
        f"{AGAIN}")


def test_a_file_changed_after_every_countersignature_names_the_last_one():
    first = signature("First signatory", modified_after=True)
    second = signature("Second signatory", modified_after=True)
    last = signature("Last signatory", modified_after=True)
    assert problem(GAMBIT, first, second, last) == (
        f"{NAME}: the file was changed after it was countersigned (signed by Last signatory on 2 July 2015 at 14:03 "
        "UTC, changed after signing (content was added that no signature covers), trusted). Upload the file as it "
        "was signed.")
    assert problem(GAMBIT, first, ORGANIZER) is None  # one countersignature covers the whole file


def test_a_later_revision_that_alters_gambits_signed_content_is_refused():
    altered = signature("Gambit (FIDE)", key=GAMBIT_KEY, end=ISSUED, altered_after=True)
    assert problem(altered, ORGANIZER) == (
        f"{NAME} keeps {REF} as issued but changes its content afterwards (a later revision alters the pages or the "
        "document beyond adding a signature), so it is not the contract Gambit issued, countersigned. "
        f"{AGAIN}")


def test_an_untrusted_countersignature_is_named_unless_accepted_with_a_reason():
    untrusted = [signature("Mallory Selfmade", trusted=False), signature("Eve Other", trusted=False)]
    assert countersign_trust_problem(name=NAME, reference=REF, signatures=untrusted, accepted_reason=" \n") == (
        f"{NAME}: the organizer's signature is not trusted (signed by Mallory Selfmade on 2 July 2015 at 14:03 UTC, "
        "intact, not trusted (the signer's certificate is not on the secretariat's trust list, nor issued by one on "
        "it); signed by Eve Other on 2 July 2015 at 14:03 UTC, intact, not trusted (the signer's certificate is not "
        f"on the secretariat's trust list, nor issued by one on it)), so {REF} stays issued, not signed. Add the "
        "organizer's certificate (or the certification authority's that issued it) to the trust list and upload "
        "the file again, or accept this signature explicitly and say why.")
    assert countersign_trust_problem(name=NAME, reference=REF, signatures=untrusted,
                                     accepted_reason="Confirmed in person.") is None
    assert countersign_trust_problem(name=NAME, reference=REF, signatures=[*untrusted, ORGANIZER],
                                     accepted_reason="") is None
