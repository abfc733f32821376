"""Per-resource personal-data and secrets policies on the built-in store's write path, and what
agents receive under each (bytes checked with canary values)."""

from __future__ import annotations

import json

import pytest

from memadmin.memory.models import MemoryItem, MemoryRevision
from memadmin.privacy.screening import match_key
from memadmin.workspaces.services import resource_update

from .conftest import SYSTEM_ACTOR

pytestmark = pytest.mark.django_db

CANARY_EMAIL = "canary.7f3a@example.org"
CANARY_CARD = "4666 1760 3137 2159"
AWS_KEY = "AKIAQ7CANARYKEY12345"
PEM = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAcanarycanary\n"
       "-----END RSA PRIVATE KEY-----")


def set_policy(resource, **policy):
    return resource_update(actor=SYSTEM_ACTOR, resource=resource, **policy)


def everything_stored() -> str:
    """Every stored text of every item and revision, for "never stored in clear" checks."""
    return json.dumps([list(MemoryItem.objects.values_list("content", "pii_spans", "pii_keys")),
                       list(MemoryRevision.objects.values_list("content", flat=True))])


def test_it_records_labels_and_keeps_the_content(api, tool_resource) -> None:
    stored = api.remember(f"Reach Ana at {CANARY_EMAIL} or +44 20 7946 0958.")
    item = MemoryItem.objects.get(pk=stored["id"])
    assert item.content == f"Reach Ana at {CANARY_EMAIL} or +44 20 7946 0958."
    assert item.pii_types == ["email", "phone"]
    assert [item.content[s:e] for s, e, _ in item.pii_spans or []] == [
        CANARY_EMAIL, "+44 20 7946 0958"]
    workspace_id = tool_resource.workspace_id
    assert sorted(item.pii_keys) == sorted([match_key(workspace_id, "email", CANARY_EMAIL),
                                            match_key(workspace_id, "phone", "+442079460958")])
    assert CANARY_EMAIL not in json.dumps(item.pii_keys)
    # Under "record" agents receive the item as written.
    assert CANARY_EMAIL in api.agent("recall", input={"text": "Ana"})["text"]


def test_a_rewrite_replaces_the_labels(api, tool_resource) -> None:
    first = api.retain(f"Ana: {CANARY_EMAIL}", tier="peers", key="ana")
    api.retain("Ana moved; no contact details yet.", tier="peers", key="ana")
    item = MemoryItem.objects.get(pk=first["id"])
    assert (item.pii_types, item.pii_spans, item.pii_keys) == ([], [], [])


def test_an_append_labels_the_whole_content(api, tool_resource) -> None:
    first = api.retain(f"Ana: {CANARY_EMAIL}", tier="peers", key="ana")
    api.retain(f"Card: {CANARY_CARD}", tier="peers", key="ana", mode="append")
    item = MemoryItem.objects.get(pk=first["id"])
    assert item.pii_types == ["card", "email"]
    assert sorted(item.content[s:e] for s, e, _ in item.pii_spans or []) == [
        CANARY_CARD, CANARY_EMAIL]


def test_the_list_filter_selects_by_type(api, tool_resource) -> None:
    with_card = api.retain(f"Paid with {CANARY_CARD}.", tier="peers", key="paid")
    api.retain(f"Mail {CANARY_EMAIL}.", tier="peers", key="mail")
    page = api.admin("list", filters={"pii": "card"})
    assert [i["id"] for i in page["items"]] == [with_card["id"]]
    assert api.admin("count", filters={"pii": "card"})["count"] == 1
    error = api.admin("list", 400, "invalid_request", filters={"pii": "shoe_size"},
                      request_valid=False)
    assert "unknown" in error["message"] or "pii" in error["message"]


def test_refuse_answers_invalid_request_naming_the_type_never_the_value(api, tool_resource) -> None:
    set_policy(tool_resource, pii_policy="refuse")
    with api.unchanged(audit=False):
        error = api.agent("tool", 400, "invalid_request", tool="remember",
                          arguments={"fact": f"Ana's card is {CANARY_CARD}, mail {CANARY_EMAIL}"})
    assert "Payment card number (card)" in error["message"]
    assert "E-mail address (email)" in error["message"]
    assert error["details"]["types"] == ["card", "email"]
    assert CANARY_EMAIL not in json.dumps(error) and "3137" not in json.dumps(error)
    assert api.remember("Ana likes tea.")["status"] == "stored"


def test_secrets_are_redacted_by_default_never_stored_in_clear(api, tool_resource) -> None:
    stored = api.remember(f"Deploy with {AWS_KEY} then use this key:\n{PEM}\nDone.")
    item = MemoryItem.objects.get(pk=stored["id"])
    assert item.content == "Deploy with [api_key] then use this key:\n[private_key]\nDone."
    assert item.bytes == len(item.content.encode())
    assert item.pii_types == ["api_key", "private_key"]
    assert [item.content[s:e] for s, e, _ in item.pii_spans or []] == [
        "[api_key]", "[private_key]"]
    # An edit of the item keeps the redacted text as the previous revision: still no secret.
    api.admin("update", id=stored["id"], content=f"Rotated: {AWS_KEY}", mode="replace",
              expectedRevision=1)
    blob = everything_stored()
    assert AWS_KEY not in blob and "canarycanary" not in blob
    assert MemoryItem.objects.get(pk=stored["id"]).content == "Rotated: [api_key]"


def test_secrets_can_be_refused(api, tool_resource) -> None:
    set_policy(tool_resource, secrets_policy="refuse")
    with api.unchanged(audit=False):
        error = api.admin("retain", 400, "invalid_request", tier="peers", key="k",
                          content=f"token {AWS_KEY}", mode="replace")
    assert error["message"] == "this resource refuses content holding secrets: API key (api_key)"
    assert AWS_KEY not in json.dumps(error)


def test_redact_on_recall_hides_values_from_agents_only(api, tool_resource) -> None:
    set_policy(tool_resource, pii_policy="redact_on_recall")
    note = f"Ana (mail {CANARY_EMAIL}) paid with {CANARY_CARD} on Tuesday."
    stored = api.remember(note)
    recall = api.agent("recall", input={"text": "Tuesday"})
    assert "Ana (mail [email]) paid with [card] on Tuesday." in recall["text"]
    read = api.agent("tool", tool="read", arguments={"id": stored["id"]})
    listed = api.agent("tool", tool="list", arguments={})
    empty_query = api.agent("recall", input={})
    for answer in (recall, read, listed, empty_query):
        raw = json.dumps(answer)
        assert CANARY_EMAIL not in raw and "3137" not in raw
    assert read["result"]["content"] == "Ana (mail [email]) paid with [card] on Tuesday."
    # Staff-side (admin credential) reads and the stored row keep the value.
    assert api.admin("get", id=stored["id"])["item"]["content"] == note
    assert MemoryItem.objects.get(pk=stored["id"]).content == note


def test_redaction_covers_items_written_before_detection(api, tool_resource) -> None:
    stored = api.retain(f"Old note: {CANARY_EMAIL}", tier="peers", key="old")
    MemoryItem.objects.filter(pk=stored["id"]).update(pii_spans=None, pii_types=[])
    set_policy(tool_resource, pii_policy="redact_on_recall")
    assert "Old note: [email]" in api.agent("recall", input={"text": "note"})["text"]


# -- batch writes and observed turns take the same path --------------------------------------


def test_a_batch_redacts_secrets_and_labels_personal_data(api, tool_resource) -> None:
    answer = api.agent("tool", tool="remember", batch=[
        {"fact": f"Deploy key {AWS_KEY} for the staging bucket."},
        {"fact": f"Ana's mail is {CANARY_EMAIL}."}])
    ids = [entry["id"] for entry in answer["result"]["items"]]
    key_item, mail_item = (MemoryItem.objects.get(pk=pk) for pk in ids)
    assert key_item.content == "Deploy key [api_key] for the staging bucket."
    assert key_item.pii_types == ["api_key"]
    assert mail_item.pii_types == ["email"] and mail_item.pii_keys
    observed = api.agent("observe", turns=[{"role": "user", "text": f"my key is {AWS_KEY}"}])
    assert observed["stored"] == 1
    assert AWS_KEY not in everything_stored()


def test_a_batch_on_a_refusing_resource_is_refused_whole(api, tool_resource) -> None:
    set_policy(tool_resource, pii_policy="refuse")
    with api.unchanged(audit=False):
        error = api.agent("tool", 400, "invalid_request", tool="remember", batch=[
            {"fact": "nothing personal"}, {"fact": f"card {CANARY_CARD}"}])
    assert error["details"]["index"] == 1 and error["details"]["types"] == ["card"]
    assert CANARY_CARD not in json.dumps(error)
