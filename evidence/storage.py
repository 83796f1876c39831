"""Storing a file under a server-made name (store_file), and the one way to read a stored file: its bytes are
served only if their SHA-256 is the one recorded when it was stored, and that record (the row naming the file)
is the one the audit log bound when it was written (evidence.rows). A missing or altered file, or a row whose hash
column was changed beneath the audit log, is refused with a message saying so, and the refusal is written to the
audit log, so a file swapped on disk, with or without its hash column, is noticed the first time anyone opens
it."""

from __future__ import annotations

import errno
import hashlib
import re
import secrets
import unicodedata
from datetime import datetime
from pathlib import Path
from typing import Any

from flask import Response, current_app, has_app_context, render_template
from sqlalchemy import event as sa_event
from sqlalchemy.orm import Session
from werkzeug.datastructures import Headers

from core.db import db
from evidence import audit


def display_name(filename: str | None, default: str) -> str:
    """An uploaded file's name as text to show, never as a file name: the last part of the path (either kind of
    slash), without control or format characters (NUL, line breaks, the bidi overrides that make
    "invoice\u202efdp.exe" show as "invoiceexe.pdf", zero-width marks), at most 200 characters."""
    base = re.split(r"[\\/]", filename or "")[-1]
    cleaned = "".join(ch for ch in base if unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Co", "Cn"))
    cleaned = " ".join(cleaned.split())[:200].strip()
    return cleaned if cleaned not in ("", ".", "..") else default


class StorageError(RuntimeError):
    """The upload folder refused a file (full, read-only, not writable): nothing of it was kept. The message says
    which, for the person whose document it was."""


_STORE_REASONS = {
    errno.ENOSPC: "the server's upload folder is full",
    errno.EDQUOT: "the server's upload folder is over its quota",
    errno.EROFS: "the server's upload folder is read-only",
    errno.EACCES: "the server may not write into its upload folder",
    errno.EPERM: "the server may not write into its upload folder",
}


def storage_message(exc: OSError) -> str:
    reason = _STORE_REASONS.get(exc.errno or 0, f"the server's upload folder refused it ({exc.strerror or exc})")
    return f"The document could not be stored: {reason}. Nothing was recorded; tell the secretariat."


def store_file(folder: Path | str, content: bytes, *, suffix: str = ".pdf") -> str:
    """Write `content` into `folder` (made if missing) under a name the server makes (32 random hex digits and
    `suffix`), never the uploader's, and return that name. Raises StorageError when the file cannot be written
    (a partly written file is removed first).

    The file belongs to the current transaction of `db.session`: if that transaction ends without a commit (rolled
    back, the connection cut at COMMIT, the session closed), the file is removed, so no file is left without the
    row that records it."""
    folder = Path(folder)
    name = f"{secrets.token_hex(16)}{suffix}"
    path = folder / name
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    except OSError as exc:
        path.unlink(missing_ok=True)
        raise StorageError(storage_message(exc)) from exc
    if has_app_context():  # a file stored inside a transaction goes if the transaction does not commit
        db.session().info.setdefault(_PENDING, []).append(path)
    return name


_PENDING = "gambit_files_pending"


@sa_event.listens_for(Session, "after_commit")
def _files_kept(session: Session) -> None:
    session.info.pop(_PENDING, None)  # their rows are committed


@sa_event.listens_for(Session, "after_transaction_end")
def _files_dropped(session: Session, transaction) -> None:
    if transaction.parent is None:  # the outermost transaction ended without a commit: its files go
        for path in session.info.pop(_PENDING, []):
            path.unlink(missing_ok=True)


class StoredFileError(RuntimeError):
    """A stored file is missing or its bytes no longer have the SHA-256 recorded for it."""


def read_verified(path: Path | None, sha256: str | None, *, what: str, obj: Any, actor, now: datetime) -> bytes:
    """The bytes of the stored file at `path`, checked against the recorded `sha256`.

    `what` names the file for people ("the dossier UKR-2015-D1"). `obj` is the row that names the file; when it is
    evidence, `sha256` is trusted only if the row is as its latest audit entry recorded it (one indexed lookup).
    Raises StoredFileError when the row was changed beneath the audit log, or the file is missing or altered,
    after writing `file.refused` (about `obj`) to the audit log; the caller commits that entry.
    """
    tampered = audit.evidence_problem(obj)
    if tampered is not None:
        audit.record("file.refused", obj, actor=actor, now=now,
                     data={"what": what, "file": path.name if path is not None else "", "recorded": sha256 or "",
                           "found": "record changed beneath the audit log", "problem": tampered})
        current_app.logger.error("stored file refused: %s", tampered)
        raise StoredFileError(f"The stored file of {what} is not served: its record was tampered with ({tampered}). "
                              "The refusal is recorded in the audit log; tell the secretariat, who can restore it "
                              "from a backup.")
    try:
        data = path.read_bytes() if path is not None else None
    except OSError:
        data = None
    if data is None:
        found = "missing"
        message = (f"The stored file of {what} is missing, so it is not served. The refusal is recorded in the "
                   "audit log; tell the secretariat, who can restore it from a backup.")
    else:
        found = hashlib.sha256(data).hexdigest()
        if sha256 and found == sha256:
            return data
        message = (f"The stored file of {what} no longer matches the SHA-256 recorded when it was stored "
                   f"(recorded {(sha256 or 'none')[:16]}…, found {found[:16]}…): it was altered on disk, so it is "
                   "not served. The refusal is recorded in the audit log; tell the secretariat, who can restore "
                   "it from a backup.")
    audit.record("file.refused", obj, actor=actor, now=now,
                 data={"what": what, "file": path.name if path is not None else "", "recorded": sha256 or "",
                       "found": found})
    raise StoredFileError(message)


def refused(exc: StoredFileError) -> Response:
    """The page for a refused stored file (409), after committing the refusal's audit entry."""
    db.session.commit()
    return Response(render_template("error.html", code=409, message=str(exc)), status=409)


def send_bytes(data: bytes, *, download_name: str, as_attachment: bool = True, etag: str | None = None,
               mimetype: str = "application/pdf") -> Response:
    """Verified bytes under the server's `download_name`, as an attachment unless told otherwise, never sniffed."""
    headers = Headers()
    headers.set("Content-Disposition", "attachment" if as_attachment else "inline", filename=download_name)
    headers.set("X-Content-Type-Options", "nosniff")
    headers.set("Cache-Control", "private")
    response = Response(data, mimetype=mimetype, headers=headers)
    if etag:
        response.set_etag(etag)
    return response


def send_verified(path: Path | None, sha256: str | None, *, what: str, obj: Any, actor, now: datetime,
                  download_name: str, as_attachment: bool = True) -> Response:
    """A view's answer for a stored file: its verified bytes (see send_bytes), or the 409 page saying why it is
    refused (see refused). Never raises StoredFileError."""
    try:
        data = read_verified(path, sha256, what=what, obj=obj, actor=actor, now=now)
    except StoredFileError as exc:
        return refused(exc)
    return send_bytes(data, download_name=download_name, as_attachment=as_attachment, etag=sha256)
