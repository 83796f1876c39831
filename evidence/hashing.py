"""Canonical JSON and its SHA-256: the one way Gambit fingerprints a snapshot (a call's data, a dossier's inputs, a
submitted bid), so that the same content always gives the same hash, whatever the order of its keys."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any


def canonical_json(data: Any, *, default: Callable[[Any], Any] | None = None, compact: bool = True) -> str:
    """`data` as canonical JSON with its keys sorted. Compact (the default): no spaces, text kept as UTF-8 (not \\u
    escapes). `compact=False` is Python's plain form (", " and ": ", \\u escapes), the form a submitted bid
    version has been fingerprinted in since its first version, kept so that its hash does not depend on when it
    was submitted. `default` turns a value JSON cannot hold into one it can (json.dumps' hook). Raises TypeError
    for such a value without it, ValueError for a circular reference."""
    if not compact:
        return json.dumps(data, sort_keys=True, default=default)
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=default)


def canonical_sha256(data: Any, *, default: Callable[[Any], Any] | None = None, compact: bool = True) -> str:
    """The SHA-256 (hex) of `canonical_json(data, ...)` in UTF-8. Raises what canonical_json raises."""
    return hashlib.sha256(canonical_json(data, default=default, compact=compact).encode()).hexdigest()
