"""``manage.py verify_receipt FILE``: check a downloaded subject-request receipt.

Prints ``OK`` with the key id, or exits non-zero naming what failed: the file is malformed
(not UTF-8 JSON of the expected shape), its key id is unknown, or the signature does not match
(a changed byte). An Ed25519 receipt needs public keys only: ``--public-keys FILE`` (the JSON
that ``/receipt-keys.json`` publishes), else those of ``MEMADMIN_RECEIPT_PUBLIC_KEYS`` and
``MEMADMIN_SIGNING_KEYS``. A receipt from before Ed25519 (HMAC) needs ``MEMADMIN_SIGNING_KEYS``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from memadmin.gdpr.receipts import ReceiptInvalid, receipt_verify


class Command(BaseCommand):
    help = "Verify the signature of a subject-request receipt (a downloaded JSON file)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("file", help="the receipt file")
        parser.add_argument("--public-keys", dest="public_keys", default=None,
                            help="a JSON file of {key id: public key}, as the app publishes")

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["file"]
        try:
            raw = Path(name).read_bytes()
        except OSError as exc:
            raise CommandError(f"cannot read {name}: {exc.strerror}") from None
        try:
            document = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise CommandError("FAILED: malformed: the file is not UTF-8 JSON") from None
        public = _public_keys(options["public_keys"]) if options["public_keys"] else None
        try:
            key_id = receipt_verify(document, public=public)
        except ReceiptInvalid as exc:
            raise CommandError(f"FAILED: {exc}") from None
        receipt = document["receipt"]
        self.stdout.write(f"OK: signed with key id {key_id} "
                          f"(request {receipt.get('request')}, state {receipt.get('state')})")


def _public_keys(name: str) -> dict[str, str]:
    try:
        data = json.loads(Path(name).read_text(encoding="utf-8"))
    except OSError as exc:
        raise CommandError(f"cannot read {name}: {exc.strerror}") from None
    except (UnicodeDecodeError, ValueError):
        raise CommandError("the public keys file is not UTF-8 JSON") from None
    keys = data.get("keys") if isinstance(data, dict) and "keys" in data else data
    if not isinstance(keys, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in keys.items()):
        raise CommandError('the public keys file must hold {"key id": "public key", ...}')
    return keys
