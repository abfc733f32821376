"""Keyed hashes of data-subject ids and signatures of receipts, each with key ids.

Keys come from ``MEMADMIN_HASHING_KEYS`` and ``MEMADMIN_SIGNING_KEYS`` (never ``SECRET_KEY``), so
rotating ``SECRET_KEY`` breaks no stored hash and no receipt. The first key is the active one.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

from django.conf import settings


def _active(keys: dict[str, str]) -> tuple[str, str]:
    kid = next(iter(keys))
    return kid, keys[kid]


def subject_hash(
    workspace_id: object, subject_id: str, *, key_id: str | None = None
) -> tuple[str, str]:
    """(key id, hex digest) of a subject id, scoped to one workspace."""
    keys: dict[str, str] = settings.MEMADMIN_HASHING_KEYS
    kid, key = (key_id, keys[key_id]) if key_id else _active(keys)
    digest = hmac.new(key.encode(), f"{workspace_id}\x1f{subject_id}".encode(), hashlib.sha256)
    return kid, digest.hexdigest()


def subject_hashes_all_keys(workspace_id: object, subject_id: str) -> list[tuple[str, str]]:
    """The subject's hash under every configured key (for lookups that must survive rotation)."""
    return [subject_hash(workspace_id, subject_id, key_id=kid)
            for kid in settings.MEMADMIN_HASHING_KEYS]


def canonical_json(value: Any) -> bytes:
    """Deterministic JSON: sorted keys, no whitespace, UTF-8."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str).encode("utf-8")


def sign(value: Any) -> tuple[str, str]:
    """(key id, hex HMAC-SHA256) of ``value``'s canonical JSON."""
    kid, key = _active(settings.MEMADMIN_SIGNING_KEYS)
    return kid, hmac.new(key.encode(), canonical_json(value), hashlib.sha256).hexdigest()


def verify(value: Any, key_id: str, signature: str) -> bool:
    key = settings.MEMADMIN_SIGNING_KEYS.get(key_id)
    if key is None:
        return False
    expected = hmac.new(key.encode(), canonical_json(value), hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature)


def secret_digest(secret: str) -> str:
    """SHA-256 of a high-entropy token (tokens are random, so no salt or stretching is needed)."""
    return hashlib.sha256(secret.encode()).hexdigest()
