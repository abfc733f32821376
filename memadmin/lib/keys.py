"""Keyed hashes of data-subject ids and Ed25519 signatures of receipts, each with key ids.

Keys come from ``MEMADMIN_HASHING_KEYS`` and ``MEMADMIN_SIGNING_KEYS`` (never ``SECRET_KEY``), so
rotating ``SECRET_KEY`` breaks no stored hash and no receipt. The first key is the active one.

A signing key's secret is either the URL-safe base64 of a 32-byte Ed25519 seed, or any other
text of 32+ characters from which the seed is derived with HKDF-SHA256. Receipts are verified
with the public keys alone (``public_keys()``, published by the app, or
``MEMADMIN_RECEIPT_PUBLIC_KEYS`` on a machine that holds no secret): whoever can verify a
receipt cannot forge one.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
import json
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

#: The signature algorithm of receipts (named in every signed document).
SIGNATURE_ALGORITHM = "ed25519"
#: Receipts signed before Ed25519 carry no algorithm: HMAC-SHA256 with the signing secret.
LEGACY_ALGORITHM = "hmac-sha256"


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


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    """Strict: only the canonical unpadded encoding decodes (no spare bits may differ)."""
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64(data) != text:
        raise ValueError("not canonical base64")
    return data


@functools.lru_cache(maxsize=32)
def _private_key(secret: str) -> Ed25519PrivateKey:
    try:
        seed = _unb64(secret)
    except (binascii.Error, ValueError):
        seed = b""
    if len(seed) != 32:
        seed = HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
                    info=b"memadmin receipt signing key (ed25519)").derive(secret.encode())
    return Ed25519PrivateKey.from_private_bytes(seed)


def _raw_public(key: Ed25519PrivateKey) -> str:
    return _b64(key.public_key().public_bytes(serialization.Encoding.Raw,
                                              serialization.PublicFormat.Raw))


def public_keys() -> dict[str, str]:
    """{key id: URL-safe base64 raw Ed25519 public key} of every key receipts may carry: the
    configured signing keys' and ``MEMADMIN_RECEIPT_PUBLIC_KEYS``."""
    keys = {kid: _raw_public(_private_key(secret))
            for kid, secret in settings.MEMADMIN_SIGNING_KEYS.items()}
    return {**getattr(settings, "MEMADMIN_RECEIPT_PUBLIC_KEYS", {}), **keys}


def sign(value: Any) -> tuple[str, str]:
    """(key id, URL-safe base64 Ed25519 signature) of ``value``'s canonical JSON."""
    kid, secret = _active(settings.MEMADMIN_SIGNING_KEYS)
    return kid, _b64(_private_key(secret).sign(canonical_json(value)))


def verify(value: Any, key_id: str, signature: str,
           public: dict[str, str] | None = None) -> bool:
    """Whether ``signature`` is key ``key_id``'s Ed25519 signature of ``value``. Needs public
    keys only (``public``, else ``public_keys()``)."""
    encoded = (public if public is not None else public_keys()).get(key_id)
    if encoded is None:
        return False
    try:
        key = Ed25519PublicKey.from_public_bytes(_unb64(encoded))
        key.verify(_unb64(signature), canonical_json(value))
    except (InvalidSignature, ValueError, binascii.Error):
        return False
    return True


def verify_legacy_hmac(value: Any, key_id: str, signature: str) -> bool:
    """A receipt signed before Ed25519 (HMAC-SHA256): this needs the signing secret."""
    key = settings.MEMADMIN_SIGNING_KEYS.get(key_id)
    if key is None:
        return False
    expected = hmac.new(key.encode(), canonical_json(value), hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature)


def _fernet(secret: str, purpose: str) -> Any:
    from cryptography.fernet import Fernet

    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
               info=f"memadmin opaque token: {purpose}".encode()).derive(secret.encode())
    return Fernet(base64.urlsafe_b64encode(key))


def opaque_token(text: str, *, purpose: str) -> str:
    """``text`` encrypted (Fernet, a key derived from the active hashing key): a token that may
    travel in a URL without showing what it stands for (e.g. a subject id being searched)."""
    kid, secret = _active(settings.MEMADMIN_HASHING_KEYS)
    return f"{kid}.{_fernet(secret, purpose).encrypt(text.encode()).decode()}"


def opaque_token_open(token: str, *, purpose: str, max_age: int) -> str | None:
    """The text of a token made by ``opaque_token`` at most ``max_age`` seconds ago, else None."""
    from cryptography.fernet import InvalidToken

    kid, _, body = token.partition(".")
    secret = settings.MEMADMIN_HASHING_KEYS.get(kid)
    if secret is None or not body:
        return None
    try:
        return _fernet(secret, purpose).decrypt(body.encode(), ttl=max_age).decode()
    except (InvalidToken, UnicodeDecodeError, ValueError):
        return None


def secret_digest(secret: str) -> str:
    """SHA-256 of a high-entropy token (tokens are random, so no salt or stretching is needed)."""
    return hashlib.sha256(secret.encode()).hexdigest()
