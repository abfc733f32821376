"""Figures for the governed stores (markdown, langgraph, mem0): list page and export speed.

For each kind this fills the real store with N items the way agents write them (files on disk,
``PostgresStore.put``, ``Memory.add(infer=False)``), points a provider at it, and measures
through the contract: the first list page (50 items) when memadmin has never seen the store
(it records every item and scans it), the median of later first pages, and export items per
second. memadmin's own rows live in a throwaway database next to the configured one; the
LangGraph store gets a throwaway database of its own; both are dropped afterwards.

    DEBUG=true DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python benchmarks/governed_stores.py [N]
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    server, _, _ = os.environ["DATABASE_URL"].rpartition("/")
    run = uuid.uuid4().hex[:8]
    meta_db, store_db = f"bench_governed_{run}", f"bench_governed_lg_{run}"
    import psycopg

    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{meta_db}"')
        admin.execute(f'CREATE DATABASE "{store_db}"')
    os.environ["DATABASE_URL"] = f"{server}/{meta_db}"
    try:
        with tempfile.TemporaryDirectory() as folder:
            measure(count, Path(folder), f"{server}/{store_db}")
    finally:
        from django.db import connections

        connections.close_all()
        with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{meta_db}" WITH (FORCE)')
            admin.execute(f'DROP DATABASE IF EXISTS "{store_db}" WITH (FORCE)')


def measure(count: int, folder: Path, store_url: str) -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memadmin.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from langgraph.store.base import PutOp
    from langgraph.store.postgres import PostgresStore

    from memadmin.audit.services import Actor
    from memadmin.providers import contract as c
    from memadmin.providers.mem0 import memory_for
    from memadmin.providers.registry import namespace_scope, provider_for
    from memadmin.providers.services import provider_config_create
    from memadmin.workspaces.services import namespace_create, resource_create, workspace_create

    actor = Actor.system("bench")
    workspace = workspace_create(actor=actor, slug="bench", name="Bench")

    def governed(kind: str, ns_slug: str, **config: object) -> tuple[c.Provider, c.Scope]:
        provider = provider_config_create(actor=actor, workspace=workspace, slug=kind,
                                          name=kind, kind=kind, probed=True, **config)
        resource = resource_create(actor=actor, workspace=workspace, provider=provider,
                                   slug=f"{kind}-memory")
        namespace = namespace_create(actor=actor, resource=resource, slug=ns_slug)
        return provider_for(provider), namespace_scope(namespace)

    text = "Customer {n} prefers email; last order {n} shipped on time, no refund asked."
    stores: dict[str, tuple[c.Provider, c.Scope]] = {}

    root = folder / "md"
    for n in range(count):
        path = root / "bot" / "peers" / f"customer-{n:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\ndata_subject_id: cust-{n % 97}\n---\n" + text.format(n=n))
    stores["markdown"] = governed("markdown", "bot", options={"root": str(root)})

    with PostgresStore.from_conn_string(store_url) as store:
        store.setup()
        store.batch([PutOp(("memories", f"cust-{n % 97}"), f"m-{n}",
                           {"content": text.format(n=n)}, index=False)
                     for n in range(count)])
    stores["langgraph"] = governed(
        "langgraph", "customers", credential=store_url,
        options={"prefixes": {"customers": ["memories"]}, "subject": {"position": 1}})

    mem0_config = {
        "vector_store": {"provider": "qdrant", "config": {
            "path": str(folder / "qdrant"), "collection_name": "bench",
            "embedding_model_dims": 64, "on_disk": True}},
        "embedder": {"provider": "langchain", "config": {"model": "deterministic-fake"}},
        "history_db_path": str(folder / "history.db"),
    }
    memory = memory_for(mem0_config)
    started = time.perf_counter()
    for n in range(count):
        memory.add(text.format(n=n), user_id=f"cust-{n % 97}", agent_id="support",
                   infer=False)
    print(f"mem0: {count} Memory.add(infer=False) at "
          f"{count / (time.perf_counter() - started):.0f}/s (the agents' side)")
    stores["mem0"] = governed("mem0", "support", options={
        "config": mem0_config, "scopes": {"support": {"agent_id": "support"}}})

    for kind, (provider, scope) in stores.items():
        def page(provider: c.Provider = provider, scope: c.Scope = scope) -> float:
            started = time.perf_counter()
            result = provider.list_items(c.ItemFilters(), limit=50, scope=scope, deadline=60)
            assert len(result.items) == 50
            return (time.perf_counter() - started) * 1000

        first = page()
        warm = statistics.median(page() for _ in range(5))
        started = time.perf_counter()
        exported = sum(1 for _ in provider.export(c.ItemFilters(), scope=scope, deadline=60))
        rate = exported / (time.perf_counter() - started)
        assert exported == count
        print(f"{kind}: {count} items; first list page (never seen: record and scan all) "
              f"{first:.0f} ms, later first pages median {warm:.0f} ms, export "
              f"{rate:.0f} items/s")


if __name__ == "__main__":
    main()
