"""The demo's accounts, for local use only: their password is printed in the README."""

from __future__ import annotations

from core.auth import Role

DEMO_PASSWORD = "gambit-demo-2015"

# email, name, organisation, roles, federation, president
DEMO_USERS = [
    ("admin@example.org", "Secretariat Admin", "FIDE Secretariat", [Role.ADMIN], None, False),
    ("bidder@example.org", "Oksana Bidder", "Ukrainian Chess Federation", [Role.BIDDER], "UKR", False),
    ("georgia@example.org", "Nino Bidder", "Georgian Chess Federation", [Role.BIDDER], "GEO", False),
    ("sponsor@example.org", "Omar Sponsor", "Gulf Chess Promotions LLC", [Role.BIDDER], "UAE", False),
    ("spain@example.org", "Lucia Bidder", "Federación Española de Ajedrez", [Role.BIDDER], "ESP", False),
    ("wcoc@example.org", "Walter Commission", "WCOC", [Role.WCOC], "GER", False),
    ("wcoc2@example.org", "Olha Commission", "WCOC", [Role.WCOC], "UKR", False),
    ("wcoc3@example.org", "Arjun Commission", "WCOC", [Role.WCOC], "IND", False),
    ("board@example.org", "Beatriz Board", "FIDE Presidential Board", [Role.BOARD], "ESP", False),
    ("president@example.org", "Pavel President", "FIDE", [Role.BOARD], "RUS", True),
]
