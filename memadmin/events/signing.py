"""Standard Webhooks signatures (https://www.standardwebhooks.com/, the spec Svix and others
implement): what a receiver needs to trust a delivery.

- the secret is ``whsec_`` + base64 of 24-64 random bytes; the HMAC key is the decoded bytes;
- the signed content is ``{webhook-id}.{webhook-timestamp}.{body}`` (the raw body bytes);
- ``webhook-signature`` is a space-separated list of ``v1,<base64 HMAC-SHA256>``.

Pure Python, no Django.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets

PREFIX = "whsec_"
SECRET_BYTES = 32
MIN_BYTES, MAX_BYTES = 24, 64


class BadSecret(ValueError):
    """Not a usable ``whsec_`` secret; the message never repeats the value."""


def generate_secret() -> str:
    return PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode("ascii")


def secret_key(secret: str) -> bytes:
    """The HMAC key of a ``whsec_`` secret (raises BadSecret)."""
    if not secret.startswith(PREFIX):
        raise BadSecret("a signing secret starts with whsec_")
    try:
        key = base64.b64decode(secret[len(PREFIX):], validate=True)
    except (binascii.Error, ValueError):
        raise BadSecret("after whsec_ the secret must be base64") from None
    if not MIN_BYTES <= len(key) <= MAX_BYTES:
        raise BadSecret(f"the secret must decode to {MIN_BYTES} to {MAX_BYTES} bytes")
    return key


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header value for one delivery attempt."""
    content = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret_key(secret), content, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def headers(secret: str, msg_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    return {"webhook-id": msg_id, "webhook-timestamp": str(timestamp),
            "webhook-signature": sign(secret, msg_id, timestamp, body),
            "content-type": "application/json"}
