"""Secrets at rest: ``cryptography``'s MultiFernet under ``MEMADMIN_ENCRYPTION_KEYS``.

``encrypt(text) -> token`` always uses the first (active) key; ``decrypt(token) -> text`` tries
every configured key, so a key can be rotated in: put the new key first, run
``manage.py reencrypt_secrets``, then drop the old one. ``EncryptedTextField`` is a model field
whose column holds only tokens while Python code sees the clear text.

No app imports: settings are read when a value is encrypted or decrypted, never at import.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.db import models

#: Every Fernet token starts with these bytes (version 0x80, base64url): how a stored value
#: that is not a token yet (a clear value from before encryption) is told apart.
TOKEN_PREFIX = "gAAAAA"  # noqa: S105 - a format marker, not a secret


class DecryptionFailed(ValueError):
    """A stored value is not a token under any configured key (wrong or missing key)."""


def demo_key(secret_key: str) -> str:
    """A Fernet key derived from ``SECRET_KEY`` (DEBUG only: production sets real keys)."""
    digest = hashlib.sha256(f"memadmin:encryption:{secret_key}".encode()).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii")


def validate_keys(keys: dict[str, str]) -> None:
    """Raise ValueError (naming the key id, never the key) unless every key is a Fernet key."""
    for kid, key in keys.items():
        try:
            Fernet(key.encode("ascii"))
        except (ValueError, UnicodeEncodeError):
            raise ValueError(
                f"encryption key {kid!r} is not a Fernet key (32 url-safe base64-encoded "
                "bytes; make one with: python -c 'from cryptography.fernet import Fernet; "
                "print(Fernet.generate_key().decode())')") from None


def _fernet() -> MultiFernet:
    from django.conf import settings

    keys: dict[str, str] = settings.MEMADMIN_ENCRYPTION_KEYS
    if not keys:
        raise DecryptionFailed("MEMADMIN_ENCRYPTION_KEYS is not set")
    return MultiFernet([Fernet(key.encode("ascii")) for key in keys.values()])


def encrypt(text: str) -> str:
    """The token of ``text`` under the active key (the empty string stays empty)."""
    if text == "":
        return ""
    return _fernet().encrypt(text.encode("utf-8")).decode("ascii")


def decrypt(token: str) -> str:
    """The clear text of a token made by :func:`encrypt` under any configured key."""
    if token == "":
        return ""
    try:
        return _fernet().decrypt(token.encode("ascii")).decode("utf-8")
    except (InvalidToken, UnicodeError):
        raise DecryptionFailed(
            "a stored secret cannot be decrypted with MEMADMIN_ENCRYPTION_KEYS "
            "(was its key removed?)") from None


def rotate(token: str) -> str:
    """The same secret as a token under the active key."""
    if token == "":
        return ""
    try:
        return _fernet().rotate(token.encode("ascii")).decode("ascii")
    except InvalidToken:
        raise DecryptionFailed("a stored secret cannot be decrypted with "
                               "MEMADMIN_ENCRYPTION_KEYS") from None


def is_token(value: str) -> bool:
    return value.startswith(TOKEN_PREFIX)


class EncryptedTextField(models.TextField):
    """A text column that stores only Fernet tokens; the model attribute is the clear text.

    Lookups other than ``isnull`` and equality with ``""`` mean nothing on it (every
    encryption of the same text differs)."""

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        if value is None:
            return value
        return decrypt(value)

    def get_prep_value(self, value: Any) -> Any:
        value = super().get_prep_value(value)
        if value is None or value == "":
            return value
        return encrypt(value)
