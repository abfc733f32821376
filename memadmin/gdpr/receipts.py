"""Signed receipts of subject requests.

A receipt says what was asked, who decided, what every provider answered and what verification
found, with the subject's keyed hash and key id (never the clear id). It is signed over its
canonical JSON with the active Ed25519 key of ``MEMADMIN_SIGNING_KEYS`` (not ``SECRET_KEY``),
so it still verifies after ``SECRET_KEY`` rotates, and verifying needs only the public key. The
downloadable document is ``{"receipt", "key_id", "algorithm": "ed25519", "signature"}``;
``manage.py verify_receipt FILE [--public-keys KEYS.json]`` checks one."""

from __future__ import annotations

import json
import re
from typing import Any

from memadmin.gdpr.models import (
    NOT_ENFORCED_NOTE,
    SubjectRequest,
    SubjectRequestItem,
    SubjectRequestStep,
)
from memadmin.gdpr.scrub import ERASED, redact, subject_label
from memadmin.lib import keys

RECEIPT_VERSION = 3  # 2: Ed25519, approval digest, reasons without the clear id; 3: items
#: Kinds that freeze or lift (their receipts name the providers that cannot).
FREEZING_KINDS = frozenset({"restriction", "lift"})
#: States whose receipt is sealed (the request's outcome so far).
SEALED_STATES = frozenset({"completed", "partial", "completed_with_exceptions", "denied",
                           "cancelled"})


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def _username(user: Any) -> str | None:
    return user.get_username() if user is not None else None


def _redacted(sr: SubjectRequest, text: str) -> str:
    """A receipt never carries the clear subject id, not even quoted in a reason."""
    return redact(text, sr.subject_id, subject_label(sr))


def _item(row: SubjectRequestItem) -> dict[str, Any]:
    """What a receipt says of an item a request touched: ids, revisions and hashes only."""
    return {"item": row.item_id, "tier": row.tier, "state": row.state,
            "from_revision": row.from_revision, "to_revision": row.to_revision,
            "old_sha256": row.old_hash or None, "new_sha256": row.new_hash or None,
            "note": row.note}


def _step(step: SubjectRequestStep, subject: str | None) -> dict[str, Any]:
    items = [_item(row) for row in step.items.order_by("pk")]
    return {"provider": step.provider_label, "items": items, "state": step.state,
            "found": step.found,
            "removed": step.removed, "held": step.held, "exported": step.exported,
            "residue": step.residue, "attempts": step.attempts,
            "error": redact(step.error, subject, ERASED),
            "resolution": {"by": _username(step.resolved_by), "at": _iso(step.resolved_at),
                           "justification": step.resolution} if step.state == "resolved"
            else None,
            "finished_at": _iso(step.finished_at)}


def receipt_build(sr: SubjectRequest) -> dict[str, Any]:
    """The receipt's content: JSON-native values only, so a downloaded copy re-canonicalises to
    the same bytes."""
    steps = SubjectRequestStep.objects.filter(request=sr).select_related(
        "resolved_by").order_by("pk")
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
        "extension": {"months": sr.extension_months,
                      "reason": _redacted(sr, sr.extension_reason),
                      "by": _username(sr.extended_by)} if sr.extension_months else None,
        "steps": [_step(s, sr.subject_id) for s in steps],
        "lifts": str(sr.lifts_id) if sr.lifts_id else None,
        "cannot_freeze": [s.provider_label for s in steps if s.state == "unsupported"]
        if sr.kind in FREEZING_KINDS else None,
        "freeze_not_enforced": [s.provider_label for s in steps
                                if NOT_ENFORCED_NOTE in s.error]
        if sr.kind in FREEZING_KINDS else None,
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


def _legacy(signature: str) -> bool:
    """An HMAC-SHA256 signature from before Ed25519 (64 hex digits)."""
    return bool(re.fullmatch(r"[0-9a-f]{64}", signature))


def receipt_document(sr: SubjectRequest) -> dict[str, Any]:
    """What the download gives: the receipt with its key id, algorithm and signature (a receipt
    sealed before Ed25519 keeps its old shape, without ``algorithm``)."""
    if sr.receipt is None:
        raise ValueError("this request has no receipt yet")
    document = {"receipt": sr.receipt, "key_id": sr.receipt_key_id,
                "signature": sr.receipt_signature}
    if not _legacy(sr.receipt_signature):
        document["algorithm"] = keys.SIGNATURE_ALGORITHM
    return document


class ReceiptInvalid(Exception):
    """Why a receipt document does not verify."""


def receipt_verify(document: Any, public: dict[str, str] | None = None) -> str:
    """The key id of a valid receipt document; ``ReceiptInvalid`` naming what failed.

    An Ed25519 receipt is checked against public keys only: ``public`` ({key id: URL-safe
    base64 raw key}), else the keys the app publishes (``keys.public_keys()``). A receipt from
    before Ed25519 (no ``algorithm``) is an HMAC and needs ``MEMADMIN_SIGNING_KEYS``."""
    if not isinstance(document, dict) or not (
            set(document) == {"receipt", "key_id", "signature", "algorithm"}
            or set(document) == {"receipt", "key_id", "signature"}):
        raise ReceiptInvalid("malformed: expected an object with receipt, key_id, algorithm "
                             "and signature")
    receipt, key_id, signature = document["receipt"], document["key_id"], document["signature"]
    algorithm = document.get("algorithm", keys.LEGACY_ALGORITHM)
    if not isinstance(receipt, dict) or not isinstance(key_id, str) or \
            not isinstance(signature, str):
        raise ReceiptInvalid("malformed: receipt must be an object, key_id and signature text")
    if algorithm == keys.SIGNATURE_ALGORITHM:
        known = public if public is not None else keys.public_keys()
        if key_id not in known:
            raise ReceiptInvalid(f"unknown key id {key_id!r}")
        valid = keys.verify(receipt, key_id, signature, public=known)
    elif algorithm == keys.LEGACY_ALGORITHM and "algorithm" not in document:
        from django.conf import settings

        if key_id not in settings.MEMADMIN_SIGNING_KEYS:
            raise ReceiptInvalid(f"unknown key id {key_id!r}")
        valid = keys.verify_legacy_hmac(receipt, key_id, signature)
    else:
        raise ReceiptInvalid(f"malformed: unknown algorithm {algorithm!r}")
    if not valid:
        raise ReceiptInvalid("bad signature: the receipt was changed or signed by another key")
    return key_id
