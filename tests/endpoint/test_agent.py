"""Agent operations over the wire: recall and the four built-in tool behaviours."""

from __future__ import annotations

from typing import Any

import pytest

from memadmin.memory.models import MemoryItem
from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for
from tests.endpoint.conftest import Api

ADMIN_OPERATIONS = ["health", "capabilities", "retain", "list", "export", "count", "get",
                    "update", "delete", "forget", "freeze", "quarantine"]


# -- recall -------------------------------------------------------------------------------------


def test_it_recalls_text_sources_hits_quarantined_and_a_cursor(api: Api) -> None:
    stored = api.remember("We chose the free hosting tier for the demo.")

    answer = api.agent("recall", token=api.tokens.ro, input={"text": "hosting"}, maxBytes=8192)

    assert set(answer) == {"text", "sources", "hits", "quarantined", "cursor"}
    label = answer["sources"][0]["title"]
    assert answer["text"] == f"[{label}]\nWe chose the free hosting tier for the demo."
    assert answer["sources"] == [{"id": stored["id"], "title": label, "revision": 1,
                                  "updatedAt": answer["sources"][0]["updatedAt"]}]
    assert label.startswith("facts/") and label.endswith(".md")
    assert [h["source"] for h in answer["hits"]] == [label]
    assert 0 < answer["hits"][0]["score"] <= 1
    assert answer["quarantined"] == []
    assert answer["cursor"]


def test_it_recalls_empty_memory_as_empty_text_and_no_sources(api: Api) -> None:
    answer = api.agent("recall", input={"text": None})

    assert (answer["text"], answer["sources"], answer["hits"]) == ("", [], [])


def test_it_recalls_the_newest_memory_without_input_text(api: Api) -> None:
    api.remember("older fact")
    api.remember("newer fact")

    answer = api.agent("recall")

    assert answer["text"].index("newer fact") < answer["text"].index("older fact")


@pytest.mark.parametrize("max_bytes", [1, 2, 31, 100, 1000, None, 5000])
def test_it_cuts_recalled_text_to_max_bytes_on_a_utf8_boundary(api: Api,
                                                                max_bytes: int | None) -> None:
    api.remember("€" * 600)  # 1,800 bytes of three-byte characters
    full = api.agent("recall", maxBytes=16384)["text"]
    fields: dict[str, Any] = {} if max_bytes is None else {"maxBytes": max_bytes}

    text = api.agent("recall", **fields)["text"]

    # The resource's cap (1,024 bytes) applies when the caller asks for more or nothing.
    cap = min(max_bytes or 1024, 1024)
    size = len(text.encode("utf-8"))
    assert size <= cap
    assert size > cap - 3  # cut as late as the character boundaries allow
    assert full.startswith(text)


def test_it_answers_at_most_20_hits_and_100_sources(api: Api) -> None:
    for n in range(25):
        api.retain(f"fact number {n} about rivers")

    answer = api.agent("recall", input={"text": "rivers"}, limit=100)

    assert len(answer["hits"]) == 20
    assert len(answer["sources"]) <= 100
    assert all(len(h["snippet"]) <= 500 for h in answer["hits"])


def test_it_cuts_snippets_to_500_characters(api: Api) -> None:
    api.retain("word " * 800)

    answer = api.agent("recall", input={"text": "word"})

    assert len(answer["hits"][0]["snippet"]) == 500


def test_it_shows_a_quarantined_item_only_as_a_label(api: Api, local_config) -> None:
    api.remember("The visible fact about zebras.")
    held = api.remember("The held secret about zebras is 4711.")
    provider_for(local_config).set_quarantine(
        held["id"], "pending", scope=c.Scope.of(api.tokens.partition), deadline=5)
    label = MemoryItem.objects.get(pk=held["id"]).key

    asked: list[dict[str, Any]] = [{"input": {"text": "zebras"}}, {}]
    for fields in asked:
        answer = api.agent("recall", **fields)
        assert answer["quarantined"] == [f"facts/{label}.md"]
        assert "4711" not in answer["text"]
        assert held["id"] not in {s["id"] for s in answer["sources"]}
        assert all("4711" not in h["snippet"] for h in answer["hits"])
        assert "visible fact" in answer["text"]

    listed = api.agent("tool", tool="list", arguments={})["result"]["items"]
    assert held["id"] not in {i["id"] for i in listed}
    read = api.agent("tool", tool="read", arguments={"id": held["id"]})["result"]
    assert read == {"id": held["id"], "source": f"facts/{label}.md", "quarantined": True}


def test_it_keeps_recall_within_64_kib_for_content_json_escapes_twofold(api: Api,
                                                                        tool_resource) -> None:
    # Control characters (six bytes each as JSON) are refused when written; backslashes and
    # quotes are the worst that can be stored: two bytes each on the wire.
    from memadmin.workspaces.services import resource_update
    from tests.endpoint.conftest import SYSTEM

    resource_update(actor=SYSTEM, resource=tool_resource, max_bytes=16384, item_max_bytes=16384)
    for n in range(20):
        api.retain(f"esc{n} " + '\\"' * 1500)  # 3,005 bytes, about 6 KiB as JSON

    answer = api.agent("recall", maxBytes=16384)  # the wire answer is checked to be <= 64 KiB

    assert answer["text"].startswith("[facts/")
    assert 8000 < len(answer["text"].encode("utf-8")) <= 16384
    assert len(answer["sources"]) == 20


# -- tools --------------------------------------------------------------------------------------


def test_it_remembers_a_fact_as_a_new_facts_item(api: Api) -> None:
    result = api.remember("Use the free hosting tier.")

    assert result["status"] == "stored" and result["revision"] == 1
    item = MemoryItem.objects.get(pk=result["id"])
    assert (item.tier, item.content, item.namespace.partition_key) == (
        "facts", "Use the free hosting tier.", api.tokens.partition)
    assert item.updated_by.startswith("agent:mat_")
    assert api.remember("Another fact.")["id"] != result["id"]


def test_it_remembers_a_fact_about_a_data_subject(api: Api) -> None:
    result = api.remember("Prefers email.", subject="customer-7")

    assert MemoryItem.objects.get(pk=result["id"]).data_subject_id == "customer-7"


def test_it_saves_a_document_replacing_it(api: Api) -> None:
    first = api.agent("tool", tool="save", arguments={"content": "Be brief."})["result"]
    second = api.agent("tool", tool="save", arguments={"content": "Be kind.",
                                                       "document": "AGENT"})["result"]
    pins = api.agent("tool", tool="save", arguments={"content": "Pinned.",
                                                     "document": "pins"})["result"]

    assert (second["id"], second["revision"]) == (first["id"], 2)
    assert MemoryItem.objects.get(pk=first["id"]).content == "Be kind."
    assert MemoryItem.objects.get(pk=pins["id"]).tier == "pins"


def test_it_lists_items_newest_first_page_by_page(api: Api) -> None:
    ids = [api.remember(f"fact {n}")["id"] for n in range(5)]
    api.agent("tool", tool="save", arguments={"content": "doc"})

    facts = api.agent("tool", tool="list", arguments={"tier": "facts", "limit": 3})["result"]
    rest = api.agent("tool", tool="list", arguments={"tier": "facts", "limit": 3,
                                                     "cursor": facts["nextCursor"]})["result"]

    assert [i["id"] for i in facts["items"] + rest["items"]] == ids[::-1]
    assert rest["nextCursor"] is None
    assert facts["items"][0] == {"id": ids[-1], "source": facts["items"][0]["source"],
                                 "tier": "facts", "key": facts["items"][0]["key"],
                                 "bytes": 6, "revision": 1}
    everything = api.agent("tool", tool="list", token=api.tokens.ro, arguments={})["result"]
    assert len(everything["items"]) == 6


def test_it_reads_an_item_by_id(api: Api) -> None:
    stored = api.remember("The office is in Lisbon.")

    result = api.agent("tool", tool="read", token=api.tokens.ro,
                       arguments={"id": stored["id"]})["result"]

    assert result == {"id": stored["id"], "source": result["source"],
                      "content": "The office is in Lisbon.", "revision": 1}


def test_it_answers_not_found_for_reading_an_unknown_item(api: Api) -> None:
    api.agent("tool", 404, "not_found", tool="read",
              arguments={"id": "00000000-0000-0000-0000-000000000000"})
    api.agent("tool", 404, "not_found", tool="read", arguments={"id": "not-a-uuid"})


def test_it_refuses_a_malformed_cursor_in_the_list_tool(api: Api) -> None:
    api.agent("tool", 400, "invalid_request", tool="list", arguments={"cursor": "garbage!"})


def test_it_answers_unsupported_for_a_declared_tool_without_behaviour(api: Api) -> None:
    api.agent("tool", 501, "unsupported", tool="search", arguments={})


# -- tool refusals ------------------------------------------------------------------------------


@pytest.mark.parametrize("arguments", [
    {"fact": 5},                                  # wrong type
    {},                                           # missing required
    {"fact": "x", "extra": True},                 # additional property
    {"fact": "x" * 2001},                         # over maxLength
    {"fact": "x", "subject": ["a"]},              # wrong nested type
], ids=["wrong-type", "missing-required", "additional-property", "too-long", "nested-type"])
def test_it_refuses_tool_arguments_failing_their_schema(api: Api, arguments) -> None:
    with api.unchanged():
        error = api.agent("tool", 400, "invalid_request", tool="remember", arguments=arguments)
    assert error["details"] == {"errors": error["details"]["errors"]}
    assert error["details"]["errors"] >= 1


def test_it_refuses_arguments_that_are_not_an_object(api: Api) -> None:
    with api.unchanged():
        api.agent("tool", 400, "invalid_request", tool="remember", arguments=["fact"],
                  request_valid=False)


def test_it_refuses_a_tool_the_resource_does_not_declare(api: Api) -> None:
    with api.unchanged():
        api.agent("tool", 400, "invalid_request", tool="forget_everything", arguments={})
        api.agent("tool", 400, "invalid_request", tool=7, arguments={}, request_valid=False)


@pytest.mark.parametrize("tool,arguments", [("remember", {"fact": "x"}),
                                            ("save", {"content": "x"})])
def test_it_refuses_a_write_tool_with_a_read_only_token(api: Api, tool: str,
                                                        arguments: dict[str, str]) -> None:
    with api.unchanged():
        # The envelope's "access" is not a grant: the token decides.
        api.agent("tool", 403, "forbidden", token=api.tokens.ro, tool=tool,
                  arguments=arguments, access="read-write")


def test_it_refuses_tools_to_an_admin_credential(api: Api) -> None:
    with api.unchanged():
        api.admin("tool", 403, "forbidden", partition=api.tokens.partition, tool="remember",
                  arguments={"fact": "x"})


@pytest.mark.parametrize("operation", ADMIN_OPERATIONS)
def test_it_refuses_admin_operations_to_agent_tokens(api: Api, operation: str) -> None:
    api.remember("present")
    with api.unchanged():
        api.agent(operation, 403, "forbidden", request_valid=None, tier="facts", content="x",
                  mode="replace", id="x", filters={}, ids=["x"])
