"""Email over SMTP, from the settings. Off unless MAIL_ENABLED; tests run a real SMTP server (aiosmtpd)."""

from __future__ import annotations

import logging
import smtplib
from email.message import EmailMessage

from flask import current_app

log = logging.getLogger(__name__)


class MailError(RuntimeError):
    """The message could not be handed to the SMTP server."""


def send_mail(to: list[str] | str, subject: str, body: str) -> bool:
    """Send a plain-text message. Returns False (and logs) when mail is disabled; raises MailError when the
    server refuses or cannot be reached."""
    cfg = current_app.config
    recipients = [to] if isinstance(to, str) else list(to)
    if not cfg.get("MAIL_ENABLED"):
        log.info("mail disabled; not sent to %s: %s", recipients, subject)
        return False
    msg = EmailMessage()
    msg["From"] = cfg["MAIL_SENDER"]
    msg["To"] = ", ".join(recipients)
    msg["Subject"] = subject
    msg.set_content(body)
    try:
        with smtplib.SMTP(cfg["MAIL_SERVER"], cfg["MAIL_PORT"], timeout=10) as smtp:
            if cfg.get("MAIL_USE_TLS"):
                smtp.starttls()
            if cfg.get("MAIL_USERNAME"):
                smtp.login(cfg["MAIL_USERNAME"], cfg["MAIL_PASSWORD"])
            smtp.send_message(msg)
    except (OSError, smtplib.SMTPException) as exc:
        raise MailError(f"could not send '{subject}' to {', '.join(recipients)}: {exc}") from exc
    return True
