"""Writes are deduplicated by (partition or scope, operationId): a retry replays the result."""

from __future__ import annotations

from memadmin.memory.models import MemoryItem, MemoryRevision
from tests.endpoint.conftest import Api, envelope


def test_it_replays_an_agent_write_with_the_same_operation_id_and_body(api: Api) -> None:
    body = envelope("tool", partition=api.tokens.partition, tool="remember",
                    arguments={"fact": "Exactly once."})

    first = api.wire.post(body, api.tokens.rw)
    with api.unchanged():
        again = api.wire.post(body, api.tokens.rw)

    assert first.status == again.status == 200
    assert again.json == first.json
    assert MemoryItem.objects.count() == 1  # a facts item gets a new key each time otherwise


def test_it_replays_an_admin_write_even_after_the_item_moved_on(api: Api) -> None:
    body = envelope("retain", partitions=[api.tokens.partition], tier="pins", content="one",
                    mode="append")
    first = api.wire.post(body, api.tokens.admin).json
    api.retain("two", tier="pins", mode="append")

    again = api.wire.post(body, api.tokens.admin).json

    assert again == first == {"id": first["id"], "bytes": 3, "revision": 1}
    item = MemoryItem.objects.get()
    assert (item.content, item.revision) == ("one\ntwo", 2)
    assert MemoryRevision.objects.count() == 1


def test_it_replays_update_delete_and_forget(api: Api) -> None:
    made = api.retain("draft", tier="pins")
    other = api.retain("other")
    update = envelope("update", partitions=[api.tokens.partition], id=made["id"],
                      content="final", mode="replace", expectedRevision=1)
    delete = envelope("delete", partitions=[api.tokens.partition], ids=[other["id"]])
    forget = envelope("forget", partitions=[api.tokens.partition], id=made["id"])

    answers = [api.wire.post(body, api.tokens.admin).json for body in (update, delete, forget)]
    api.retain("a new pin", tier="pins")  # the same (tier, key) as the forgotten item
    with api.unchanged(audit=False):
        replays = [api.wire.post(body, api.tokens.admin).json
                   for body in (update, delete, forget)]

    assert replays == answers
    assert answers[1:] == [{"removed": 1, "held": 0}, {"removed": 1, "held": 0}]
    assert MemoryItem.objects.get().content == "a new pin"  # not forgotten a second time


def test_it_refuses_the_same_operation_id_with_another_body(api: Api) -> None:
    first = envelope("tool", partition=api.tokens.partition, tool="remember",
                     arguments={"fact": "The first fact."})
    api.wire.post(first, api.tokens.rw)
    changed = {**first, "arguments": {"fact": "A different fact."},
               "deadlineAt": first["deadlineAt"]}

    with api.unchanged():
        error = api.wire.refused(changed, api.tokens.rw, 409, "idempotency_mismatch")
        admin = envelope("retain", partition=api.tokens.partition,
                         operation_id=first["operationId"], tier="facts",
                         content="Yet another.", mode="replace")
        api.wire.refused(admin, api.tokens.admin, 409, "idempotency_mismatch")

    assert error["message"]
    assert MemoryItem.objects.get().content == "The first fact."


def test_it_refuses_an_admin_operation_id_reused_with_other_arguments(api: Api) -> None:
    made = api.retain("draft", tier="pins")
    body = envelope("update", partitions=[api.tokens.partition], id=made["id"],
                    content="final", mode="replace", expectedRevision=1)
    api.wire.post(body, api.tokens.admin)

    with api.unchanged():
        api.wire.refused({**body, "mode": "append"}, api.tokens.admin, 409,
                         "idempotency_mismatch")
        api.wire.refused({**body, "expectedRevision": 2}, api.tokens.admin, 409,
                         "idempotency_mismatch")


def test_it_keys_operation_ids_by_partition(api: Api) -> None:
    body = envelope("retain", partitions=[api.tokens.partition], tier="facts",
                    content="same id, two partitions", mode="replace")
    elsewhere = {**body, "scope": {"partitions": [api.tokens.other_partition]}}

    one = api.wire.post(body, api.tokens.admin).json
    two = api.wire.post(elsewhere, api.tokens.admin).json

    assert one["id"] != two["id"]
    assert MemoryItem.objects.count() == 2


def test_it_does_not_record_reads(api: Api) -> None:
    api.remember("a fact")
    body = envelope("recall", partition=api.tokens.partition, input={"text": "fact"})

    with api.unchanged():
        first = api.wire.post(body, api.tokens.rw).json
        changed = {**body, "input": {"text": "something else"}}
        assert api.wire.post(changed, api.tokens.rw).status == 200

    assert first["text"]
