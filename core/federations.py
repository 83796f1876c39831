"""FIDE member federations and their countries, from seed_data/federations.toml: reference data every step reads
(a user's federation, a bid's host country), no rule of a call, so it sits below the domains."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from babel import Locale

FEDERATIONS_FILE = Path(__file__).resolve().parent.parent / "seed_data" / "federations.toml"


@dataclass(frozen=True)
class Federation:
    code: str
    name: str
    country: str


@lru_cache(maxsize=1)
def federations() -> dict[str, Federation]:
    data = tomllib.loads(FEDERATIONS_FILE.read_text(encoding="utf-8"))
    return {code: Federation(code, v["name"], v["country"]) for code, v in sorted(data.items())}


def federation_name(code: str) -> str:
    """"China" for "CHN": the name of a FIDE member federation; the code itself if it is unknown. Raises nothing."""
    found = federations().get((code or "").upper())
    return found.name if found else code


def federation_choices() -> list[tuple[str, str]]:
    return [(f.code, f"{f.name} ({f.code})") for f in sorted(federations().values(), key=lambda f: f.name)]


@lru_cache(maxsize=1)
def country_names() -> dict[str, str]:
    """ISO code → country name, as the federations name them (England, Scotland, Wales share GB)."""
    names = dict(Locale("en").territories)
    return {f.country: names.get(f.country, f.name) for f in federations().values()}


def country_choices() -> list[tuple[str, str]]:
    return sorted(country_names().items(), key=lambda kv: kv[1])
