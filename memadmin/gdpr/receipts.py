"""Signed receipts of subject requests.

A receipt says what was asked, who decided, what every provider answered and what verification
found, with the subject's keyed hash and key id (never the clear id). It is signed over its
canonical JSON with the active key of ``MEMADMIN_SIGNING_KEYS`` (not ``SECRET_KEY``), so it
still verifies after ``SECRET_KEY`` rotates. The downloadable document is
``{"receipt": ..., "key_id": ..., "signature": ...}``; ``manage.py verify_receipt FILE`` checks
one.
"""

from __future__ import annotations

import json
from typing import Any

from memadmin.gdpr.models import SubjectRequest, SubjectRequestStep
from memadmin.gdpr.scrub import ERASED, redact, subject_label
from memadmin.lib import keys

RECEIPT_VERSION = 1
#: States whose receipt is sealed (the request's outcome so far).
SEALED_STATES = frozenset({"completed", "partial", "denied", "cancelled"})


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def _username(user: Any) -> str | None:
    return user.get_username() if user is not None else None


def _redacted(sr: SubjectRequest, text: str) -> str:
    """A receipt never carries the clear subject id, not even quoted in a reason."""
    return redact(text, sr.subject_id, subject_label(sr))


def _step(step: SubjectRequestStep, subject: str | None) -> dict[str, Any]:
    return {"provider": step.provider_label, "state": step.state, "found": step.found,
            "removed": step.removed, "held": step.held, "exported": step.exported,
            "residue": step.residue, "attempts": step.attempts,
            "error": redact(step.error, subject, ERASED),
            "finished_at": _iso(step.finished_at)}


def receipt_build(sr: SubjectRequest) -> dict[str, Any]:
    """The receipt's content: JSON-native values only, so a downloaded copy re-canonicalises to
    the same bytes."""
    steps = SubjectRequestStep.objects.filter(request=sr).order_by("pk")
    return {
        "version": RECEIPT_VERSION,
        "request": str(sr.pk),
        "kind": sr.kind,
        "workspace": sr.workspace.slug,
        "subject_hash": sr.subject_hash,
        "subject_key_id": sr.subject_key_id,
        "reason": _redacted(sr, sr.reason),
        "state": sr.state,
        "override_hold": sr.override_hold,
        "override_reason": _redacted(sr, sr.override_reason),
        "decision_reason": _redacted(sr, sr.decision_reason),
        "approval_digest": sr.approval_digest,
        "steps": [_step(s, sr.subject_id) for s in steps],
        "verification": json.loads(keys.canonical_json(sr.verification or {})),
        "times": {"created": _iso(sr.created_at), "submitted": _iso(sr.submitted_at),
                  "approved": _iso(sr.decided_at) if sr.state != "denied" else None,
                  "denied": _iso(sr.decided_at) if sr.state == "denied" else None,
                  "started": _iso(sr.started_at), "finished": _iso(sr.completed_at),
                  "due": _iso(sr.due_at)},
        "actors": {"requested_by": _username(sr.requested_by),
                   "decided_by": _username(sr.decided_by),
                   "cancelled_by": _username(sr.cancelled_by),
                   "override_by": _username(sr.override_by)},
    }


def receipt_seal(sr: SubjectRequest) -> None:
    """Build, sign and store the receipt on the request (in the caller's transaction)."""
    receipt = receipt_build(sr)
    key_id, signature = keys.sign(receipt)
    sr.receipt, sr.receipt_key_id, sr.receipt_signature = \
        receipt, key_id, signature
    sr.save(update_fields=["receipt", "receipt_key_id", "receipt_signature"])


def receipt_document(sr: SubjectRequest) -> dict[str, Any]:
    """What the download gives: the receipt with its key id and signature."""
    if sr.receipt is None:
        raise ValueError("this request has no receipt yet")
    return {"receipt": sr.receipt, "key_id": sr.receipt_key_id,
            "signature": sr.receipt_signature}


class ReceiptInvalid(Exception):
    """Why a receipt document does not verify."""


def receipt_verify(document: Any) -> str:
    """The key id of a valid receipt document; ``ReceiptInvalid`` naming what failed."""
    if not isinstance(document, dict) or set(document) != {"receipt", "key_id", "signature"}:
        raise ReceiptInvalid("malformed: expected an object with receipt, key_id and signature")
    receipt, key_id, signature = document["receipt"], document["key_id"], document["signature"]
    if not isinstance(receipt, dict) or not isinstance(key_id, str) or \
            not isinstance(signature, str):
        raise ReceiptInvalid("malformed: receipt must be an object, key_id and signature text")
    from django.conf import settings

    if key_id not in settings.MEMADMIN_SIGNING_KEYS:
        raise ReceiptInvalid(f"unknown key id {key_id!r}")
    if not keys.verify(receipt, key_id, signature):
        raise ReceiptInvalid("bad signature: the receipt was changed or signed by another key")
    return key_id
