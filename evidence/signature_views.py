"""Signatures for people: the public verify page (a PDF is dropped, nothing is stored), Gambit's certificate to
download, the secretariat's trust list, and `flask pdf verify FILE`."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from flask import Blueprint, abort, current_app, flash, redirect, render_template, request, url_for
from flask.cli import with_appcontext
from flask_login import current_user
from flask_wtf.file import FileField
from werkzeug.exceptions import RequestEntityTooLarge

from core.auth import Role, roles_required
from core.db import db, utcnow
from core.forms import BaseForm
from core.limiter import rate_limited
from evidence import trust
from evidence.audit_views import register_audit_actions, register_audit_link
from evidence.signing import SigningError, load_identity, verify_issued
from evidence.storage import send_bytes

bp = Blueprint("signatures", __name__)
cli = Blueprint("pdf_cli", __name__, cli_group="pdf")

# Said, not raised, wherever the identity is needed: the reason (a path, a passphrase problem) is for the log only.
UNAVAILABLE = "Gambit's signing identity cannot be loaded just now (the server's log says why)."


@bp.app_template_global("signing_identity")
def _signing_identity():
    """Gambit's signing identity for templates and pages that show signatures (they label a development identity),
    or None when it cannot be loaded (a wrong SIGNING_PKCS12 or passphrase): the page then says so instead of
    failing. Never raises."""
    try:
        return load_identity()
    except SigningError as exc:
        current_app.logger.error("signing identity unavailable: %s", exc)
        return None


class VerifyForm(BaseForm):
    file = FileField("A PDF that Gambit issued (a dossier, board pack, minutes or contract)")


class TrustForm(BaseForm):
    file = FileField("Certificate file (PEM or DER: .pem, .crt, .cer)")


def _uploaded(form) -> tuple[bytes | None, str]:
    """The uploaded file's bytes (at most the upload limit), or None and the message saying why not."""
    limit = current_app.config["MAX_UPLOAD_MB"] * 1024 * 1024
    too_large = f"The file is larger than the limit of {current_app.config['MAX_UPLOAD_MB']} MB."
    if (request.content_length or 0) > current_app.config["MAX_CONTENT_LENGTH"]:
        return None, too_large
    try:
        valid = form.validate_on_submit()
    except RequestEntityTooLarge:
        return None, too_large
    upload = form.file.data
    if not valid or upload is None or not getattr(upload, "filename", ""):
        return None, "Choose a file to upload."
    content = upload.stream.read(limit + 1)
    if len(content) > limit:
        return None, too_large
    if not content:
        return None, "The file is empty."
    return content, ""


@bp.route("/verify", methods=["GET", "POST"])
@rate_limited("signatures.verify", "VERIFY_RATE_LIMIT")
def verify():
    """Anyone: is this PDF one Gambit issued, unchanged? The file is read in memory and never stored."""
    form = VerifyForm()
    verdict, error, status = None, "", 200
    identity = _signing_identity()
    if identity is None:
        # Nothing can be checked without Gambit's certificate: the page says so (a 503), the upload is not read.
        return render_template("signatures/verify.html", form=form, verdict=None, error="", identity=None,
                               unavailable=UNAVAILABLE), 503
    if request.method == "POST":
        content, error = _uploaded(form)
        if content is not None:
            verdict = verify_issued(content, identity=identity)
        else:
            form.file.errors = [error]  # said beside the field, which is marked invalid for screen readers
            status = 422
    return render_template("signatures/verify.html", form=form, verdict=verdict, error=error,
                           identity=identity), status


@bp.route("/signing/certificate.pem")
def certificate():
    """Gambit's signing certificate and its chain (PEM): to trust in a PDF reader or `pyhanko sign validate`."""
    identity = _signing_identity()
    if identity is None:
        return render_template("error.html", code=503, message=UNAVAILABLE), 503
    name = "gambit-development-signing-certificate.pem" if identity.development else "gambit-signing-certificate.pem"
    response = send_bytes(identity.certificates_pem(), download_name=name, mimetype="application/x-pem-file")
    response.headers["Cache-Control"] = "public, max-age=3600"
    return response


def _checked_again(checked: int) -> str:
    """What the secretariat is told of the stored signatures judged again after a change to the trust list."""
    if checked == 1:
        return "1 stored document had its signatures checked again."
    return f"{checked} stored documents had their signatures checked again."


@bp.route("/admin/trust", methods=["GET", "POST"])
@roles_required(Role.ADMIN)
def trust_list():
    """The secretariat's trust list: add a certificate; every stored upload's signatures are judged again."""
    form = TrustForm()
    error, status = "", 200
    if request.method == "POST":
        content, error = _uploaded(form)
        if content is not None:
            try:
                row = trust.add_certificate(content, actor=current_user, now=utcnow())
                checked = trust.recheck_all(actor=current_user, now=utcnow(),
                                            upload_dir=current_app.config["UPLOAD_DIR"])
            except trust.TrustError as exc:
                db.session.rollback()
                error = str(exc)
            else:
                db.session.commit()
                flash(f"{row.subject} is on the trust list; {_checked_again(checked)}", "success")
                return redirect(url_for("signatures.trust_list"))
        form.file.errors = [error]  # said beside the field, which is marked invalid for screen readers
        status = 422
    return render_template("signatures/trust.html", form=form, error=error, rows=trust.trust_list(),
                           remove_form=BaseForm(), identity=_signing_identity(),
                           unavailable=UNAVAILABLE), status


@bp.route("/admin/trust/<int:cert_id>/remove", methods=["POST"])
@roles_required(Role.ADMIN)
def remove_trusted(cert_id: int):
    row = db.session.get(trust.TrustedCertificate, cert_id)
    if row is None:
        abort(404)
    if not BaseForm().validate_on_submit():
        abort(400)
    subject = row.subject
    trust.remove_certificate(row, actor=current_user, now=utcnow())
    checked = trust.recheck_all(actor=current_user, now=utcnow(), upload_dir=current_app.config["UPLOAD_DIR"])
    db.session.commit()
    flash(f"{subject} is off the trust list; {_checked_again(checked)}", "success")
    return redirect(url_for("signatures.trust_list"))


@cli.cli.command("verify")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@with_appcontext
def verify_command(file: Path):
    """Say whether FILE is a PDF Gambit issued, unchanged since it was signed, or exactly what is wrong.
    Exit status 0 when it is, 1 when it is not."""
    try:
        verdict = verify_issued(file.read_bytes())
    except SigningError as exc:
        click.echo(f"Gambit's signing identity could not be loaded: {exc}", err=True)
        sys.exit(2)
    for line in verdict.lines():
        click.echo(line)
    sys.exit(0 if verdict.ok else 1)


# The trust list is one page: a certificate's entries link to it.
register_audit_link("TrustedCertificate", lambda ids: dict.fromkeys(ids, url_for("signatures.trust_list")))
register_audit_actions({"trust.add": "trusted the certificate of {subject} ({object})",
                        "trust.remove": "stopped trusting the certificate of {subject} ({object})"})
