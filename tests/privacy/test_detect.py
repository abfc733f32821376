"""The personal-data and secrets detector: types and exact spans, validators, redaction."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memadmin.privacy.detect import (
    TYPES,
    bsn_valid,
    detect,
    iban_valid,
    luhn,
    normal_phone,
    redact,
    ssn_valid,
    steuer_id_valid,
)

SET = Path(__file__).resolve().parents[1] / "data" / "pii" / "labelled.jsonl"
ROWS: list[dict[str, Any]] = [json.loads(line) for line in SET.read_text().splitlines()
                              if line.strip()]


def found(text: str) -> list[tuple[str, str]]:
    return [(f.type, text[f.start:f.end]) for f in detect(text).findings]


@pytest.mark.parametrize("row", ROWS, ids=[f"row{i}" for i in range(len(ROWS))])
def test_it_finds_exactly_the_labelled_spans(row: dict[str, Any]) -> None:
    assert sorted(found(row["text"])) == sorted(tuple(e) for e in row["expect"]), row["note"]


def test_the_labelled_set_covers_every_type_and_has_negatives() -> None:
    labelled = {e[0] for row in ROWS for e in row["expect"]}
    assert labelled == set(TYPES)
    assert sum(1 for row in ROWS if not row["expect"]) >= 30


def test_it_names_type_and_exact_span_in_str_indices() -> None:
    text = "🙂 naïve café — write to zoë@example.org, card 4111-1111-1111-1111."
    verdict = detect(text)
    assert verdict.types == ("card", "email")
    email, card = verdict.findings
    assert text[email.start:email.end] == "zoë@example.org"
    assert (card.type, text[card.start:card.end], card.kind) == (
        "card", "4111-1111-1111-1111", "visa")
    assert verdict.spans == ((email.start, email.end, "email"), (card.start, card.end, "card"))


def test_a_card_number_is_not_also_a_phone_number() -> None:
    assert found("call 4111 1111 1111 1111") == [("card", "4111 1111 1111 1111")]


def test_phone_numbers_are_normalised_for_matching() -> None:
    (finding,) = detect("ring +44 20 7946 0958 please").findings
    assert finding.normal == "+442079460958"
    assert normal_phone("020 7946 0958") == "+442079460958"
    assert normal_phone("not a number") == ""


@pytest.mark.parametrize(("digits", "ok"), [("4111111111111111", True),
                                            ("4111111111111112", False),
                                            ("79927398713", True)])
def test_luhn(digits: str, ok: bool) -> None:
    assert luhn(digits) is ok


def test_iban_checks_length_and_mod_97() -> None:
    assert iban_valid("GB29 NWBK 6016 1331 9268 19")
    assert not iban_valid("GB28 NWBK 6016 1331 9268 19")
    assert not iban_valid("GB29 NWBK 6016 1331 9268 1")   # one character short
    assert not iban_valid("QQ29NWBK60161331926819")         # no such country


def test_national_identifier_rules() -> None:
    assert ssn_valid("536", "22", "1234")
    assert not any(ssn_valid(*parts) for parts in [("000", "12", "3456"), ("666", "12", "3456"),
                                                   ("912", "12", "3456"), ("536", "00", "1234"),
                                                   ("536", "22", "0000")])
    assert bsn_valid("111222333") and not bsn_valid("111222334")
    assert steuer_id_valid("86095742719") and not steuer_id_valid("86095742718")
    assert not steuer_id_valid("01234567890")   # leading zero
    assert not steuer_id_valid("12345678903")   # no digit repeated


def test_a_bare_run_of_digits_needs_its_name_next_to_it() -> None:
    assert found("Kundennummer 111222333") == []
    assert found("BSN 111222333") == [("national_id", "111222333")]


def test_private_keys_span_the_whole_block_even_unterminated() -> None:
    text = "key:\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\nbye"
    (kind, value), = found(text)
    assert kind == "private_key" and value.startswith("-----BEGIN") and value.endswith("KEY-----")
    cut = "-----BEGIN PRIVATE KEY-----\nMIIEvQ and the rest was lost"
    assert found(cut) == [("private_key", cut)]


def test_a_jwt_needs_a_header_that_decodes_to_json_with_alg() -> None:
    fake = "eyJub3RoaW5nIjoxfQ.eyJzdWIiOiIxIn0.c2ln"   # header {"nothing":1}
    assert found(fake) == []


def test_redact_replaces_each_span_with_its_type() -> None:
    text = "mail a@example.com or b@example.com from 203.0.113.9"
    verdict = detect(text)
    assert redact(text, verdict.findings) == "mail [email] or [email] from [ip_address]"
    assert redact(text, verdict.findings, ["ip_address"]) == \
        "mail a@example.com or b@example.com from [ip_address]"


def test_it_refuses_what_is_not_text() -> None:
    with pytest.raises(TypeError):
        detect(b"bytes")  # type: ignore[arg-type]


def test_the_cost_stays_linear_on_hostile_runs() -> None:
    # Long runs of what candidates are made of: each must finish (bounded patterns), and a
    # finding count stays within its cap.
    for text in ["1 " * 20000, "a@" * 20000, "::" * 20000, "ab:" * 20000, "AB12 " * 8000,
                 "key=" + "A1b2" * 5000, "eyJ" * 10000, "-----BEGIN PRIVATE KEY-----" * 500]:
        verdict = detect(text)
        assert len(verdict.findings) <= 500
