"""Admin operations over the wire, with a workspace admin credential."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from memadmin.audit.models import AuditEvent
from memadmin.memory.models import Freeze, MemoryItem, MemoryRevision
from memadmin.workspaces.services import resource_update
from tests.endpoint.conftest import SYSTEM, Api, deadline_at, envelope

SECRET = "The vault code is 7-7-3-1"


def test_it_reports_health(api: Api) -> None:
    answer = api.admin("health")

    assert answer["ok"] is True and answer["message"] == ""
    assert answer["latencyMs"] >= 0


def test_it_reports_capabilities(api: Api) -> None:
    answer = api.admin("capabilities")

    assert set(answer["operations"]) == {
        "recall", "tool", "observe", "health", "capabilities", "retain", "list", "export",
        "count", "get", "update", "delete", "forget", "freeze", "quarantine"}
    assert answer["idempotentWrites"] is True and answer["version"] == 1


def test_it_retains_replacing_and_appending(api: Api) -> None:
    first = api.retain("Bob prefers email.", tier="peers", key="bob",
                       dataSubjectId="customer-1")
    appended = api.retain("Bob is in Lisbon.", tier="peers", key="bob", mode="append")
    replaced = api.retain("Bob prefers phone.", tier="peers", key="bob")

    assert first == {"id": first["id"], "bytes": 18, "revision": 1}
    assert appended == {"id": first["id"], "bytes": 36, "revision": 2}
    assert replaced["revision"] == 3
    item = MemoryItem.objects.get(pk=first["id"])
    assert (item.content, item.data_subject_id) == ("Bob prefers phone.", "customer-1")
    assert item.updated_by.startswith("admin-credential:mac_")
    assert MemoryRevision.objects.filter(item=item).count() == 2


def test_it_retains_into_each_kind_of_tier(api: Api) -> None:
    daily = api.retain("Standup notes.", tier="daily", key="2026-09-10")
    crew = api.retain("Crew notes.", tier="CREW")
    fact = api.retain("A fact.", tier="facts", key="hosting")

    keys = {i.tier: i.key for i in MemoryItem.objects.filter(
        pk__in=[daily["id"], crew["id"], fact["id"]])}
    assert keys == {"daily": "2026-09-10", "CREW": "", "facts": "hosting"}


def test_it_refuses_retain_with_a_broken_tier_key_or_mode(api: Api) -> None:
    with api.unchanged():
        api.admin("retain", 400, "invalid_request", tier="notes", content="x", mode="replace",
                  request_valid=False)
        api.admin("retain", 400, "invalid_request", tier="daily", key="tomorrow", content="x",
                  mode="replace")
        api.admin("retain", 400, "invalid_request", tier="AGENT", key="k", content="x",
                  mode="replace")
        api.admin("retain", 400, "invalid_request", tier="facts", content="x", mode="merge",
                  request_valid=False)
        api.admin("retain", 413, "too_large", tier="facts", content="x" * 4097,
                  mode="replace")


def test_it_lists_items_newest_first_with_filters(api: Api) -> None:
    old = api.retain("Old note about apples.", dataSubjectId="customer-1")
    time.sleep(0.01)
    since = deadline_at(0)
    time.sleep(0.01)
    new = api.retain("New note about pears.", tier="peers", key="carol")

    def ids(**filters: object) -> list[str]:
        return [i["id"] for i in api.admin("list", filters=filters)["items"]]

    assert ids() == [new["id"], old["id"]]
    assert ids(tier="peers") == [new["id"]]
    assert ids(key="carol") == [new["id"]]
    assert ids(q="apples") == [old["id"]]
    assert ids(subject="customer-1") == [old["id"]]
    assert ids(updatedSince=since) == [new["id"]]
    assert ids(quarantine="clear", frozen=False) == [new["id"], old["id"]]
    item = api.admin("list", limit=1)["items"][0]
    assert item["partition"] == api.tokens.partition and item["content"] == "New note about pears."


def test_it_refuses_unknown_filters(api: Api) -> None:
    api.admin("list", 400, "invalid_request", filters={"colour": "red"}, request_valid=False)
    api.admin("count", 400, "invalid_request", filters={"tier": "notes"}, request_valid=False)


def test_it_pages_with_a_cursor(api: Api) -> None:
    made = [api.retain(f"note {n}")["id"] for n in range(5)]

    first = api.admin("list", limit=2)
    second = api.admin("list", limit=2, cursor=first["nextCursor"])
    third = api.admin("list", limit=2, cursor=second["nextCursor"])

    seen = [i["id"] for page in (first, second, third) for i in page["items"]]
    assert seen == made[::-1]
    assert third["nextCursor"] is None


def test_it_shrinks_list_and_export_pages_to_fit_64_kib(api: Api, tool_resource) -> None:
    resource_update(actor=SYSTEM, resource=tool_resource, item_max_bytes=16384)
    made = {api.retain(f"{n}" + "é" * 7000)["id"] for n in range(6)}  # ~14 KiB each

    for operation in ("list", "export"):
        seen: list[str] = []
        cursor: str | None = None
        pages = 0
        while True:
            fields: dict[str, str] = {"cursor": cursor} if cursor else {}
            answer = api.wire.post(_admin_body(api, operation, limit=50, **fields),
                                   api.tokens.admin)
            assert answer.status == 200 and answer.size <= 64 * 1024
            seen += [i["id"] for i in answer.json["items"]]
            pages += 1
            cursor = answer.json["nextCursor"]
            if cursor is None:
                break
        assert sorted(seen) == sorted(made) and pages >= 2


def _admin_body(api: Api, operation: str, **fields: Any) -> dict[str, Any]:
    return envelope(operation, partitions=[api.tokens.partition], **fields)


def test_it_counts_items(api: Api) -> None:
    for n in range(3):
        api.retain(f"note {n}")
    api.retain("a peer", tier="peers", key="dan")

    assert api.admin("count")["count"] == 4
    assert api.admin("count", filters={})["count"] == 4
    assert api.admin("count", filters={"tier": "peers"})["count"] == 1


def test_it_gets_an_item_with_its_revisions(api: Api) -> None:
    made = api.retain("first", tier="pins")
    api.retain("second", tier="pins")

    answer = api.admin("get", id=made["id"])

    assert answer["item"]["content"] == "second" and answer["item"]["revision"] == 2
    assert [(r["revision"], r["content"]) for r in answer["revisions"]] == [
        (1, "first"), (2, "second")]
    assert answer["omittedRevisions"] == 0


def test_it_omits_the_oldest_revisions_that_do_not_fit_64_kib(api: Api,
                                                               tool_resource) -> None:
    resource_update(actor=SYSTEM, resource=tool_resource, item_max_bytes=16384)
    made = api.retain("0" * 16000, tier="lessons")
    for n in range(1, 6):
        api.retain(str(n) * 16000, tier="lessons")

    answer = api.wire.post(_admin_body(api, "get", id=made["id"]), api.tokens.admin)

    assert answer.status == 200 and answer.size <= 64 * 1024
    revisions = answer.json["revisions"]
    assert answer.json["omittedRevisions"] == 6 - len(revisions) > 0
    assert [r["revision"] for r in revisions] == list(range(7 - len(revisions), 7))


def test_it_answers_not_found_for_an_unknown_item(api: Api) -> None:
    api.admin("get", 404, "not_found", id="00000000-0000-0000-0000-000000000000")


def test_it_updates_an_item_at_the_expected_revision(api: Api) -> None:
    made = api.retain("draft", tier="pins")

    answer = api.admin("update", id=made["id"], content="final", mode="replace",
                       expectedRevision=1)
    appended = api.admin("update", id=made["id"], content="addendum", mode="append",
                         expectedRevision=2)

    assert answer == {"id": made["id"], "bytes": 5, "revision": 2}
    assert appended["revision"] == 3
    assert MemoryItem.objects.get(pk=made["id"]).content == "final\naddendum"


def test_it_deletes_by_ids(api: Api) -> None:
    keep = api.retain("keep")
    gone = api.retain("gone")

    assert api.admin("delete", ids=[gone["id"]]) == {"removed": 1, "held": 0}
    assert list(MemoryItem.objects.values_list("id", flat=True)) == [_uuid(keep["id"])]


def test_it_deletes_by_filters_minus_exclusions_up_to_a_limit(api: Api) -> None:
    made = [api.retain(f"note {n}")["id"] for n in range(4)]
    api.retain("a peer", tier="peers", key="erin")

    answer = api.admin("delete", filters={"tier": "facts"}, excludeIds=[made[0]], limit=2)

    assert answer == {"removed": 2, "held": 0}
    assert MemoryItem.objects.filter(tier="facts").count() == 2
    assert MemoryItem.objects.filter(pk=made[0]).exists()


def test_it_forgets_an_item_and_a_data_subject(api: Api) -> None:
    one = api.retain("just this")
    api.retain("about them", dataSubjectId="customer-9")
    api.retain("more about them", tier="peers", key="them", dataSubjectId="customer-9")
    api.retain("unrelated")

    assert api.admin("forget", id=one["id"]) == {"removed": 1, "held": 0}
    assert api.admin("forget", dataSubjectId="customer-9") == {"removed": 2, "held": 0}
    assert api.admin("forget", dataSubjectId="customer-9") == {"removed": 0, "held": 0}
    assert list(MemoryItem.objects.values_list("content", flat=True)) == ["unrelated"]


def test_it_refuses_forget_without_exactly_one_selector(api: Api) -> None:
    made = api.retain("x", dataSubjectId="customer-1")
    with api.unchanged():
        api.admin("forget", 400, "invalid_request", request_valid=False)
        api.admin("forget", 400, "invalid_request", id=made["id"], dataSubjectId="customer-1",
                  request_valid=False)


def test_it_places_and_lifts_a_namespace_freeze(api: Api) -> None:
    target = {"level": "namespace", "partition": api.tokens.partition}

    assert api.admin("freeze", target=target, kind="freeze", reason="Audit") == {"ok": True}
    api.admin("retain", 409, "frozen", tier="facts", content="x", mode="replace")
    assert api.admin("freeze", target=target, kind="freeze", action="lift") == {"ok": True}
    api.retain("after the lift")

    row = Freeze.objects.get()
    assert (row.kind, row.reason, row.lifted_at is not None) == ("freeze", "Audit", True)
    assert row.created_by_label.startswith("admin-credential:")


def test_it_holds_frozen_items_back_from_delete_and_forget(api: Api, wire_compliance) -> None:
    held = api.retain("on hold", dataSubjectId="customer-3")
    free = api.retain("free", dataSubjectId="customer-3")
    api.admin("freeze", target={"level": "item", "itemId": held["id"]}, kind="legal_hold",
              reason="Litigation 42")

    assert api.admin("delete", ids=[held["id"]]) == {"removed": 0, "held": 1}
    assert api.admin("forget", dataSubjectId="customer-3") == {"removed": 1, "held": 1}
    api.admin("update", 409, "frozen", id=held["id"], content="x", mode="replace",
              expectedRevision=1)
    assert api.admin("forget", dataSubjectId="customer-3", overrideHold=True) == {
        "removed": 1, "held": 0}
    assert not MemoryItem.objects.filter(pk__in=[held["id"], free["id"]]).exists()


def test_it_freezes_a_whole_resource(api: Api, tool_resource) -> None:
    api.admin("freeze", target={"level": "resource", "resource": tool_resource.slug,
                                "partition": None, "itemId": None},
              kind="freeze", reason="Migration")

    api.agent("tool", 409, "frozen", tool="remember", arguments={"fact": "x"})


def test_it_refuses_a_freeze_without_reason_or_target(api: Api) -> None:
    with api.unchanged():
        api.admin("freeze", 400, "invalid_request", kind="freeze",
                  target={"level": "namespace", "partition": api.tokens.partition},
                  request_valid=False)
        api.admin("freeze", 400, "invalid_request", kind="freeze", reason="r",
                  target={"level": "item"}, request_valid=False)
        api.admin("freeze", 400, "invalid_request", kind="ice", reason="r",
                  target={"level": "namespace", "partition": api.tokens.partition},
                  request_valid=False)
        api.admin("freeze", 400, "invalid_request", kind="freeze", action="melt",
                  target={"level": "namespace", "partition": api.tokens.partition},
                  request_valid=False)


def test_it_sets_the_quarantine_state(api: Api) -> None:
    made = api.retain(SECRET)

    assert api.admin("quarantine", id=made["id"], state="pending") == {"ok": True}
    listed = api.admin("list", filters={"quarantine": "pending"})["items"][0]
    assert listed["id"] == made["id"]
    # Pending content stays home unless the workspace enables compliance over the wire.
    assert listed["content"] == "" and SECRET not in json.dumps(listed)
    assert api.agent("recall")["quarantined"] == [listed["source"]]
    api.admin("quarantine", id=made["id"], state="released")
    assert MemoryItem.objects.get(pk=made["id"]).quarantine_state == "released"
    api.admin("quarantine", 400, "invalid_request", id=made["id"], state="purged",
              request_valid=False)


def test_it_reaches_several_partitions_through_one_scope(api: Api) -> None:
    api.retain("in alice")
    api.admin("retain", partitions=[api.tokens.other_partition], tier="facts",
              content="in bob", mode="replace")
    both = [api.tokens.partition, api.tokens.other_partition]

    listed = api.admin("list", partitions=both)["items"]

    assert {i["partition"] for i in listed} == set(both)
    assert api.admin("count", partitions=both)["count"] == 2
    with api.unchanged():
        api.admin("retain", 400, "invalid_request", partitions=both, tier="facts",
                  content="where?", mode="replace")


def test_it_takes_a_single_partition_instead_of_a_scope(api: Api) -> None:
    api.admin("retain", partition=api.tokens.partition, tier="facts", content="x",
              mode="replace")

    assert api.admin("count", partition=api.tokens.partition)["count"] == 1


def test_it_audits_admin_calls_without_memory_content(api: Api) -> None:
    before = set(AuditEvent.objects.values_list("id", flat=True))
    made = api.retain(SECRET, dataSubjectId="customer-secret-id")
    api.admin("list")
    api.admin("export")
    api.admin("count")
    api.admin("get", id=made["id"])
    api.admin("update", id=made["id"], content=SECRET + " (2)", mode="replace",
              expectedRevision=1)
    api.admin("quarantine", id=made["id"], state="clear")
    api.admin("freeze", target={"level": "item", "itemId": made["id"]}, kind="freeze",
              reason="check")
    api.admin("freeze", target={"level": "item", "itemId": made["id"]}, kind="freeze",
              action="lift")
    api.admin("delete", ids=["00000000-0000-0000-0000-000000000000"])
    api.admin("forget", id=made["id"])
    api.admin("health")
    api.admin("capabilities")
    api.admin("retain", 400, "invalid_request", tier="notes", content=SECRET, mode="replace",
              request_valid=False)

    events = AuditEvent.objects.exclude(id__in=before).order_by("id")
    assert [e.action for e in events] == [
        "api.retain", "api.list", "api.export", "api.count", "api.get", "api.update",
        "api.quarantine", "api.freeze", "api.freeze", "api.delete", "api.forget"]
    by_action: dict[str, list[Any]] = {}
    for event in events:
        by_action.setdefault(event.action, []).append(event.data)
    # A reader of the trail can tell a hold placed from one lifted, and an override.
    assert [(d["kind"], d["action"], d["level"]) for d in by_action["api.freeze"]] == [
        ("freeze", "place", "item"), ("freeze", "lift", "item")]
    assert by_action["api.quarantine"][0]["state"] == "clear"
    assert by_action["api.forget"][0]["override_hold"] is False
    assert by_action["api.update"][0]["revision"] == 2
    for event in events:
        assert event.actor_label.startswith("admin-credential:mac_")
        dumped = json.dumps([event.data, event.target_id, event.target_type])
        assert "vault" not in dumped and "7-7-3-1" not in dumped
        assert "customer-secret-id" not in dumped


def test_it_audits_an_overridden_hold(api: Api, wire_compliance) -> None:
    made = api.retain("held", dataSubjectId="customer-4")
    api.admin("freeze", target={"level": "item", "itemId": made["id"]}, kind="legal_hold",
              reason="Case 9")

    api.admin("forget", dataSubjectId="customer-4", overrideHold=True)

    event = AuditEvent.objects.filter(action="api.forget").get()
    assert event.data["override_hold"] is True and event.data["by_subject"] is True
    assert event.data["removed"] == 1
    assert "customer-4" not in json.dumps(event.data)


def test_it_does_not_audit_agent_calls(api: Api) -> None:
    before = AuditEvent.objects.count()
    stored = api.remember(SECRET)
    api.agent("tool", tool="save", arguments={"content": SECRET})
    api.agent("tool", tool="list", arguments={})
    api.agent("tool", tool="read", arguments={"id": stored["id"]})
    api.agent("recall", input={"text": "vault"})

    assert AuditEvent.objects.count() == before


def _uuid(value: str) -> uuid.UUID:
    return uuid.UUID(value)
