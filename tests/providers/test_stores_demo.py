"""The demo's governed stores (make run): a Markdown folder and a LangGraph store in a
database of its own, beside the built-in store, read back through the contract."""

from __future__ import annotations

import os

import psycopg
import pytest

from memadmin.audit.services import Actor
from memadmin.demo.stores import seed_stores
from memadmin.providers import contract as c
from memadmin.providers.models import ProviderConfig
from memadmin.providers.registry import namespace_scope, provider_for
from memadmin.workspaces.models import Namespace
from tests.isolation import worker_suffix

DEADLINE = 5


@pytest.fixture
def demo_database():
    server, _, name = os.environ.get(
        "DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/memadmin").rpartition("/")
    database = f"test_{name.split('?')[0]}{worker_suffix()}_demo_langgraph"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
    yield database
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


def items_of(slug: str) -> list[c.Item]:
    namespace = Namespace.objects.select_related("resource__provider").get(slug=slug)
    return list(provider_for(namespace.resource.provider).export(
        c.ItemFilters(), scope=namespace_scope(namespace), deadline=DEADLINE))


def test_it_seeds_a_markdown_folder_and_a_langgraph_store_idempotently(
        workspace, settings, tmp_path, demo_database):
    settings.MEMADMIN_STORES_DIR = tmp_path
    created: list[str] = []

    seed_stores(workspace, Actor.system("test"), created, langgraph_database=demo_database)

    assert set(ProviderConfig.objects.values_list("kind", flat=True)) == {
        "markdown", "langgraph"}
    billing = items_of("billing-bot")
    assert {i.source for i in billing} >= {"AGENT.md", "pins.md", "peers/maria-lopez.md",
                                           "daily/2026-11-30.md"}
    assert {i.id for i in billing if i.data_subject_id == "cust-1042"} == {
        "billing-bot:peers:maria-lopez.md", "billing-bot:daily:2026-11-30.md"}
    customers = items_of("customers")
    assert len(customers) == 5
    assert sum(1 for i in customers if i.data_subject_id == "cust-1042") == 2
    assert (tmp_path / "demo-agents" / "ops-crew" / "CREW.md").is_file()

    again: list[str] = []
    seed_stores(workspace, Actor.system("test"), again, langgraph_database=demo_database)
    assert again == []
    assert len(items_of("customers")) == 5
