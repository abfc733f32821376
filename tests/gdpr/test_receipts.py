"""Signed receipts: what they hold (never the clear id), ``manage.py verify_receipt`` on a
downloaded copy, tamper detection byte by byte, unknown keys, and SECRET_KEY rotation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memadmin.gdpr.models import SubjectRequest
from memadmin.gdpr.receipts import receipt_document
from memadmin.gdpr.transitions import (
    subject_request_cancel,
    subject_request_create,
    subject_request_deny,
    subject_request_submit,
)
from tests.gdpr.conftest import SUBJECT, run_job
from tests.gdpr.helpers import receipt_of

pytestmark = pytest.mark.django_db
KEYS = {"2026-a": "signing key a " + "x" * 40, "2025-old": "signing key old " + "y" * 40}


@pytest.fixture(autouse=True)
def signing_keys(settings):
    settings.MEMADMIN_SIGNING_KEYS = dict(KEYS)


@pytest.fixture
def completed(actor, workspace, put) -> SubjectRequest:
    workspace.four_eyes_erasure = False
    workspace.save()
    put("likes tea")
    request = subject_request_create(actor=actor("carl"), workspace=workspace, kind="erasure",
                                     subject_id=SUBJECT, reason="Letter of 2 March")
    subject_request_submit(actor=actor("carl"), subject_request=request)
    assert run_job(SubjectRequest.objects.get(pk=request.pk).job) == "succeeded"
    return SubjectRequest.objects.get(pk=request.pk)


def download(request: SubjectRequest, path: Path) -> Path:
    path.write_text(json.dumps(receipt_document(request), indent=2, ensure_ascii=False))
    return path


def verify(path: Path) -> str:
    from io import StringIO

    out = StringIO()
    call_command("verify_receipt", str(path), stdout=out)
    return out.getvalue()


def test_a_receipt_says_what_happened_without_the_clear_id(completed) -> None:
    receipt = completed.receipt
    assert receipt["state"] == "completed" and receipt["kind"] == "erasure"
    assert receipt["workspace"] == "acme"
    assert (receipt["subject_hash"], receipt["subject_key_id"]) == \
        (completed.subject_hash, completed.subject_key_id)
    assert receipt["steps"] == [{
        "provider": "Built-in", "items": [], "state": "done", "found": None, "removed": 1,
        "held": 0,
        "exported": 0, "residue": 0, "attempts": 1, "error": "", "resolution": None,
        "finished_at": receipt["steps"][0]["finished_at"]}]
    assert receipt["actors"]["requested_by"] == "carl"
    assert all(receipt["times"][k] for k in ("created", "submitted", "started", "finished"))
    assert receipt["verification"]["total_residue"] == 0
    assert SUBJECT not in json.dumps(receipt)
    assert completed.receipt_key_id == "2026-a"


def test_a_downloaded_receipt_verifies(completed, tmp_path: Path) -> None:
    assert "OK: signed with key id 2026-a" in verify(download(completed, tmp_path / "r.json"))


def test_every_changed_byte_fails(completed, tmp_path: Path) -> None:
    original = download(completed, tmp_path / "r.json").read_bytes()
    # Flip one bit in bytes spread over the whole file (structure, keys, values, signature).
    positions = sorted({int(i * (len(original) - 1) / 60) for i in range(61)})
    for position in positions:
        changed = bytearray(original)
        changed[position] ^= 0x01
        path = tmp_path / f"changed-{position}.json"
        path.write_bytes(bytes(changed))
        with pytest.raises(CommandError, match="FAILED"):
            verify(path)


def test_it_names_what_failed(completed, tmp_path: Path) -> None:
    document = receipt_document(completed)
    cases = {
        "unknown key id": {**document, "key_id": "nope"},
        "bad signature": {**document, "receipt": {**document["receipt"], "state": "denied"}},
        "malformed": {"receipt": document["receipt"]},
    }
    for expected, body in cases.items():
        path = tmp_path / "case.json"
        path.write_text(json.dumps(body))
        with pytest.raises(CommandError, match=expected):
            verify(path)
    for raw in (b"", b"\xff\xfe\x00", b"[1, 2]", b'{"receipt": 1, "key_id": 2, "signature": 3}'):
        path = tmp_path / "raw.json"
        path.write_bytes(raw)
        with pytest.raises(CommandError, match="malformed"):
            verify(path)


def test_rotating_secret_key_breaks_no_receipt(completed, tmp_path: Path, settings) -> None:
    path = download(completed, tmp_path / "r.json")
    settings.SECRET_KEY = "a completely different secret key " + "z" * 30
    assert "OK" in verify(path)
    # A newer signing key becomes active: receipts signed with the older one still verify.
    settings.MEMADMIN_SIGNING_KEYS = {"2027-b": "signing key b " + "w" * 40, **KEYS}
    assert "OK: signed with key id 2026-a" in verify(path)
    # Dropping the key that signed it is an unknown key id.
    settings.MEMADMIN_SIGNING_KEYS = {"2027-b": "signing key b " + "w" * 40}
    with pytest.raises(CommandError, match="unknown key id"):
        verify(path)


def test_cancelled_and_denied_requests_get_receipts(actor, workspace) -> None:
    request = subject_request_create(actor=actor("carl"), workspace=workspace, kind="access",
                                     subject_id=SUBJECT, reason="Phone call")
    subject_request_cancel(actor=actor("carl"), subject_request=request)
    request = SubjectRequest.objects.get(pk=request.pk)
    assert receipt_of(request)["state"] == "cancelled"
    assert receipt_of(request)["actors"]["cancelled_by"] == "carl"
    assert receipt_document(request)["key_id"] == "2026-a"


def test_an_open_request_has_no_receipt_to_download(actor, workspace) -> None:
    request = subject_request_create(actor=actor("carl"), workspace=workspace, kind="access",
                                     subject_id=SUBJECT, reason="Phone call")
    with pytest.raises(ValueError, match="no receipt"):
        receipt_document(request)


def test_a_receipt_never_quotes_the_clear_id_not_even_in_a_reason(actor, workspace,
                                                                  carol) -> None:
    cancelled = subject_request_create(actor=actor("carl"), workspace=workspace,
                                       kind="erasure", subject_id=SUBJECT,
                                       reason=f"{SUBJECT} phoned on 2 March")
    subject_request_cancel(actor=actor("carl"), subject_request=cancelled)
    cancelled = SubjectRequest.objects.get(pk=cancelled.pk)
    assert SUBJECT not in json.dumps(cancelled.receipt)
    assert SUBJECT not in cancelled.reason and "phoned on 2 March" in cancelled.reason

    denied = subject_request_create(actor=actor("carl"), workspace=workspace, kind="erasure",
                                    subject_id=SUBJECT, reason="Letter of 2 March")
    subject_request_submit(actor=actor("carl"), subject_request=denied)
    subject_request_deny(actor=actor("carol"), subject_request=denied,
                         reason=f"we could not verify that the writer is {SUBJECT}")
    denied = SubjectRequest.objects.get(pk=denied.pk)
    assert SUBJECT not in json.dumps(denied.receipt) and SUBJECT not in denied.decision_reason


def test_a_receipt_is_signed_with_ed25519_and_verifies_with_the_public_key_alone(
        completed, tmp_path: Path, settings, client) -> None:
    from memadmin.gdpr.receipts import ReceiptInvalid, receipt_verify

    document = receipt_document(completed)
    assert document["algorithm"] == "ed25519"
    published = client.get("/receipt-keys.json").json()  # no login: public keys only
    assert published["algorithm"] == "ed25519" and set(published["keys"]) == set(KEYS)
    assert not any(secret in json.dumps(published) for secret in KEYS.values())
    keys_file = tmp_path / "keys.json"
    keys_file.write_text(json.dumps(published))
    path = download(completed, tmp_path / "r.json")
    # A verifier without any secret: no signing key configured at all.
    settings.MEMADMIN_SIGNING_KEYS = {"other": "an unrelated signing key " + "q" * 40}
    from io import StringIO

    out = StringIO()
    call_command("verify_receipt", str(path), "--public-keys", str(keys_file), stdout=out)
    assert "OK: signed with key id 2026-a" in out.getvalue()
    # The public key cannot sign: a receipt "signed" with the published key material fails.
    forged = {**document, "receipt": {**document["receipt"], "state": "denied"},
              "signature": published["keys"]["2026-a"]}
    with pytest.raises(ReceiptInvalid, match="bad signature"):
        receipt_verify(forged, public=published["keys"])


def test_a_receipt_signed_before_ed25519_still_verifies_with_the_signing_secret(
        completed) -> None:
    import hashlib
    import hmac

    from memadmin.gdpr.receipts import receipt_verify
    from memadmin.lib.keys import canonical_json

    legacy = {"receipt": completed.receipt, "key_id": "2026-a",
              "signature": hmac.new(KEYS["2026-a"].encode(), canonical_json(completed.receipt),
                                    hashlib.sha256).hexdigest()}
    assert receipt_verify(legacy) == "2026-a"
    with pytest.raises(Exception, match="bad signature"):
        receipt_verify({**legacy, "signature": "0" * 64})
