"""``manage.py verify_receipt FILE``: check a downloaded subject-request receipt.

Prints ``OK`` with the key id, or exits non-zero naming what failed: the file is malformed
(not UTF-8 JSON of the expected shape), its key id is unknown, or the signature does not match
(a changed byte). Keys come from ``MEMADMIN_SIGNING_KEYS``, so rotating ``SECRET_KEY`` changes
nothing here.
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
        try:
            key_id = receipt_verify(document)
        except ReceiptInvalid as exc:
            raise CommandError(f"FAILED: {exc}") from None
        receipt = document["receipt"]
        self.stdout.write(f"OK: signed with key id {key_id} "
                          f"(request {receipt.get('request')}, state {receipt.get('state')})")
