"""The ``mem0`` kind beyond the parity suite, against the real ``mem0ai`` library (local Qdrant
path, SQLite history, LangChain's deterministic fake embedder, telemetry off): memories agents
added themselves, revisions from Mem0's history, erasure that leaves nothing in that history,
and faults (storage refusing writes, no time left)."""

from __future__ import annotations

import sqlite3
import subprocess
import uuid

import pytest

from memadmin.audit.services import Actor
from memadmin.providers import contract as c
from memadmin.providers.mem0 import memory_for
from memadmin.providers.registry import provider_for
from memadmin.providers.services import provider_config_create
from memadmin.workspaces.services import namespace_create, resource_create

SYSTEM = Actor.system("test")
DEADLINE = 10
ALL = c.ItemFilters()


@pytest.fixture
def agent_id() -> str:
    return f"support-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def config(workspace, mem0_settings, agent_id):
    return provider_config_create(
        actor=SYSTEM, workspace=workspace, slug="mem0-support", name="Support Mem0",
        kind="mem0", probed=True,
        options={"config": mem0_settings, "scopes": {"support": {"agent_id": agent_id}}})


@pytest.fixture
def scope(workspace, config):
    resource = resource_create(actor=SYSTEM, workspace=workspace, provider=config,
                               slug="mem0-memory")
    return c.Scope.of(namespace_create(actor=SYSTEM, resource=resource,
                                       slug="support").partition_key)


@pytest.fixture
def provider(config) -> c.Provider:
    return provider_for(config)


@pytest.fixture
def memory(mem0_settings):
    return memory_for(mem0_settings)


def agent_adds(memory, agent_id: str, text: str, user_id: str | None = None) -> str:
    added = memory.add(text, user_id=user_id, agent_id=agent_id, infer=False)
    return str(added["results"][0]["id"])


def listing(provider: c.Provider, scope: c.Scope, filters: c.ItemFilters = ALL) -> list[c.Item]:
    return provider.list_items(filters, limit=100, scope=scope, deadline=DEADLINE).items


class TestMemoriesAgentsAdded:
    def test_it_lists_them_as_facts_with_the_user_as_subject(self, provider, scope, memory,
                                                             agent_id):
        memory_id = agent_adds(memory, agent_id, "Prefers email", user_id="cust-42")
        agent_adds(memory, "someone-else", "not governed here", user_id="cust-42")

        [item] = listing(provider, scope)

        assert (item.id, item.tier, item.key, item.content, item.data_subject_id) == (
            memory_id, "facts", memory_id, "Prefers email", "cust-42")

    def test_it_shows_mem0s_history_as_revisions_and_refuses_a_stale_edit(
            self, provider, scope, memory, agent_id, op):
        memory_id = agent_adds(memory, agent_id, "Prefers email", user_id="cust-42")
        assert listing(provider, scope)[0].revision == 1
        memory.update(memory_id, "Prefers chat")  # the agent, behind memadmin's back

        detail = provider.get_item(memory_id, scope=scope, deadline=DEADLINE)
        assert detail.item.revision == 2
        assert [r.content for r in detail.revisions] == ["Prefers email", "Prefers chat"]
        with pytest.raises(c.Conflict):
            provider.update_item(memory_id, "Prefers phone", "replace", expected_revision=1,
                                 operation_id=op(), scope=scope, deadline=DEADLINE)
        assert memory.get(memory_id)["memory"] == "Prefers chat"

    def test_it_erases_a_subject_including_mem0s_history(self, provider, scope, memory,
                                                         agent_id, mem0_settings, op):
        secret = f"Home address 12 Canary Wharf {uuid.uuid4().hex[:6]}"
        gone = agent_adds(memory, agent_id, secret, user_id="cust-42")
        memory.update(gone, secret + ", flat 3")
        kept = agent_adds(memory, agent_id, "Calls on Fridays", user_id="cust-7")

        result = provider.forget(data_subject_id="cust-42", operation_id=op(), scope=scope,
                                 deadline=DEADLINE)

        assert result == c.ForgetResult(removed=1, held=0)
        assert [i.id for i in listing(provider, scope)] == [kept]
        with sqlite3.connect(mem0_settings["history_db_path"]) as db:
            rows = db.execute("SELECT memory_id, old_memory, new_memory FROM history").fetchall()
        assert not any(secret in str(row) for row in rows)
        assert not any(row[0] == gone for row in rows)
        assert any(row[0] == kept for row in rows)

    def test_it_says_agents_write_it_directly_and_that_it_keeps_history(self, provider):
        capabilities = provider.capabilities(deadline=DEADLINE)

        assert c.DIRECT_WRITES in capabilities
        assert c.CURRENT_REVISION_ONLY not in capabilities


class TestFaults:
    def test_it_writes_nothing_past_the_deadline(self, provider, scope, op):
        with pytest.raises(c.Timeout):
            provider.retain("facts", "k", "late", "replace", operation_id=op(), scope=scope,
                            deadline=0)

        assert listing(provider, scope) == []

    def test_it_reports_storage_it_cannot_open_without_crashing(self, workspace, tmp_path):
        locked = tmp_path / "locked"
        locked.mkdir()
        subprocess.run(["chattr", "+i", str(locked)], check=True)  # root ignores chmod
        try:
            config = provider_config_create(
                actor=SYSTEM, workspace=workspace, slug="broken", name="Broken", kind="mem0",
                probed=True, options={"config": {
                    "vector_store": {"provider": "qdrant", "config": {
                        "path": str(locked / "qdrant"), "collection_name": "m",
                        "embedding_model_dims": 64, "on_disk": True}},
                    "embedder": {"provider": "langchain",
                                 "config": {"model": "deterministic-fake"}},
                    "history_db_path": str(locked / "history.db")}})
            resource = resource_create(actor=SYSTEM, workspace=workspace, provider=config,
                                       slug="broken")
            ns = namespace_create(actor=SYSTEM, resource=resource, slug="bot")
            provider = provider_for(config)
            status = provider.health(deadline=DEADLINE)
            with pytest.raises(c.Unavailable):
                provider.list_items(ALL, scope=c.Scope.of(ns.partition_key), deadline=DEADLINE)
        finally:
            subprocess.run(["chattr", "-i", str(locked)], check=True)
        assert status.ok is False
        assert status.message.startswith(("Mem0 could not start", "permission denied"))
        assert str(tmp_path) not in status.message

    def test_it_reports_a_missing_configuration(self, workspace):
        config = provider_config_create(actor=SYSTEM, workspace=workspace, slug="empty",
                                        name="Empty", kind="mem0", probed=True)

        status = provider_for(config).health(deadline=DEADLINE)

        assert (status.ok, status.message) == (False, "this Mem0 provider has no configuration")
