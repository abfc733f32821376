"""Fixtures for the provider-parity suite (the workspace, resource and two namespaces come from
tests/conftest.py: a 1,024-byte recall cap and a 4,096-byte item cap).

``provider`` is parametrised over provider kinds. The parity tests talk to it through the contract
only (never the ORM), so the same cases hold for every kind. ``http`` is the remote client talking
to this very project's wire endpoint, served by ``live_server`` over the same database: those
cases run as transactional tests (the server's threads must see what the test wrote).
"""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator

import pytest
from django.core.servers.basehttp import ThreadedWSGIServer
from django.test.testcases import LiveServerThread

from memadmin.audit.services import Actor
from memadmin.gdpr.models import Tombstone
from memadmin.lib.keys import subject_hash
from memadmin.providers import contract as c
from memadmin.providers.models import ProviderConfig
from memadmin.providers.registry import provider_for
from memadmin.providers.services import provider_config_create
from memadmin.workspaces.models import Namespace, Resource, Workspace
from memadmin.workspaces.services import admin_credential_mint
from tests.isolation import worker_suffix

PROVIDER_KINDS = ["local", "http", "markdown", "langgraph", "mem0"]
#: Marks per kind: ``http`` needs committed data, so its cases are transactional.
KIND_MARKS = {"http": [pytest.mark.django_db(transaction=True)]}
ITEM_MAX_BYTES = 4096
RECALL_MAX_BYTES = 1024


class _NoDelayWSGIServer(ThreadedWSGIServer):
    """Django's test server with TCP_NODELAY: it writes headers and body separately, so on a
    kept-alive connection every answer otherwise waits ~40 ms for the client's delayed ACK
    (gunicorn sets TCP_NODELAY itself). Only makes the http cases faster."""

    def get_request(self):
        sock, address = super().get_request()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock, address


def self_over_http(request: pytest.FixtureRequest, workspace: Workspace, *, slug: str,
                   name: str) -> ProviderConfig:
    """An ``http`` provider config of ``workspace`` talking to this project's own endpoint,
    served by ``live_server`` over the same database, with an admin credential of it."""
    from memadmin.providers.http import clear_capabilities_cache

    if LiveServerThread.server_class is ThreadedWSGIServer:
        LiveServerThread.server_class = _NoDelayWSGIServer  # before the session's server
    live_server = request.getfixturevalue("live_server")
    actor = Actor.system("test")
    # memadmin governing itself over the wire carries compliance decisions (legal holds,
    # overrides, quarantined content): the workspace enables that explicitly.
    if not workspace.wire_compliance:
        workspace.wire_compliance = True
        workspace.save(update_fields=["wire_compliance"])
    _, secret = admin_credential_mint(actor=actor, workspace=workspace, name=f"{slug} tests")
    config = provider_config_create(actor=actor, workspace=workspace, slug=slug, name=name,
                                    kind="http", url=live_server.url + "/oc-memory",
                                    credential=secret, probed=True)
    clear_capabilities_cache()
    return config


@pytest.fixture(params=[pytest.param(kind, marks=KIND_MARKS.get(kind, []))
                        for kind in PROVIDER_KINDS])
def provider_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def provider(request: pytest.FixtureRequest, provider_kind: str, workspace: Workspace,
             local_config, namespace: Namespace,
             other_namespace: Namespace) -> c.Provider:
    if provider_kind == "local":
        return provider_for(local_config)
    if provider_kind == "http":
        return provider_for(self_over_http(request, workspace, slug="remote", name="Remote"))
    if provider_kind in GOVERNED_FIXTURES:
        config = request.getfixturevalue(GOVERNED_FIXTURES[provider_kind])
        # The parity resource (and its two namespaces) moves onto the governed store.
        Resource.objects.filter(pk=namespace.resource_id).update(provider=config)
        return provider_for(config)
    raise AssertionError(f"no parity fixture for kind {provider_kind}")


@pytest.fixture
def scope(namespace: Namespace) -> c.Scope:
    return c.Scope.of(namespace.partition_key)


@pytest.fixture
def other_scope(other_namespace: Namespace) -> c.Scope:
    return c.Scope.of(other_namespace.partition_key)


@pytest.fixture
def resource_scope(namespace: Namespace, other_namespace: Namespace) -> c.Scope:
    return c.Scope.of(namespace.partition_key, other_namespace.partition_key)


@pytest.fixture
def erase_subject(workspace: Workspace):
    """Write a tombstone for a subject id, as a completed erasure would."""

    def erase(subject_id: str) -> None:
        kid, digest = subject_hash(workspace.pk, subject_id)
        Tombstone.objects.create(workspace=workspace, key_id=kid, subject_hash=digest)

    return erase


# -- helpers for the parity suite (contract calls only) -----------------------------------------

DEADLINE = 5


@pytest.fixture
def op():
    """Fresh operation ids, unique across runs (a remote store may outlive the test)."""
    return lambda: f"op-{uuid.uuid4().hex}"


@pytest.fixture(scope="session")
def _scanner_loaded() -> None:
    """The injection scanner compiles its rules on first use (seconds on a busy machine): paid
    once here, not inside the first fixture write's deadline (a write that runs late is a
    Timeout on every kind)."""
    from memadmin.quarantine.scanner import scan

    scan("warming the scanner up")


@pytest.fixture
def put(provider: c.Provider, scope: c.Scope, op,
        _scanner_loaded: None):
    """Retain through the contract with defaults: ``put("text")`` adds a new ``facts`` item."""

    def put(content: str = "a note", tier: str = "facts", key: str = "", *,
            mode: str = "replace", subject: str | None = None,
            into: c.Scope | None = None) -> c.RetainResult:
        return provider.retain(tier, key, content, mode, data_subject_id=subject,
                               operation_id=op(), scope=into or scope, deadline=DEADLINE)

    return put


# -- governed stores (markdown, langgraph, mem0): real storage, capabilities honoured -----------

#: Kind -> the fixture building its ProviderConfig over real storage.
GOVERNED_FIXTURES = {"markdown": "markdown_config", "langgraph": "langgraph_config",
                     "mem0": "mem0_config"}

#: Parity classes -> the operations their cases need. A kind that does not declare one skips
#: them (it answers Unsupported there, and every page shows the operation as unavailable).
PARITY_NEEDS: dict[str, set[str]] = {
    "TestRetain": {"retain"}, "TestListItems": {"list"}, "TestCount": {"count"},
    "TestGetItem": {"get"}, "TestExport": {"export"}, "TestUpdateItem": {"update"},
    "TestDeleteItems": {"delete"}, "TestForget": {"forget"}, "TestFreeze": {"freeze"},
    "TestSetQuarantine": {"quarantine"}, "TestRecall": {"recall"},
}
#: Cases that read earlier revisions' content: skipped for kinds that keep no history
#: (``CURRENT_REVISION_ONLY``; their revision numbers are still checked everywhere else).
HISTORY_CASES = {
    "test_it_returns_the_item_with_its_revisions_oldest_first",
    "test_it_changes_an_item_at_the_expected_revision",
    "test_it_refuses_a_stale_revision_and_leaves_the_item_alone",
}


@pytest.fixture(autouse=True)
def _declared_capabilities(request: pytest.FixtureRequest) -> None:
    """Skip parity cases a governed kind does not declare (only for governed kinds: the
    built-in and http providers run every case)."""
    if "provider_kind" not in request.fixturenames:
        return
    if request.getfixturevalue("provider_kind") not in GOVERNED_FIXTURES:
        return
    provider = request.getfixturevalue("provider")
    capabilities = provider.capabilities(deadline=DEADLINE)
    needed = PARITY_NEEDS.get(request.cls.__name__ if request.cls else "", set())
    uses_put = "put" in request.fixturenames
    missing = sorted((needed | ({"retain"} if uses_put else set())) - capabilities)
    if missing:
        pytest.skip(f"{provider.kind} does not declare {', '.join(missing)}")
    if request.function.__name__ in HISTORY_CASES and c.CURRENT_REVISION_ONLY in capabilities:
        pytest.skip(f"{provider.kind} keeps no revision history")


@pytest.fixture
def markdown_config(workspace: Workspace, tmp_path) -> ProviderConfig:
    root = tmp_path / "memory"
    root.mkdir()
    return provider_config_create(actor=Actor.system("test"), workspace=workspace,
                                  slug="notes", name="Markdown notes", kind="markdown",
                                  options={"root": str(root)}, probed=True)


@pytest.fixture(scope="session")
def langgraph_url() -> Iterator[str]:
    """A database of its own on the test PostgreSQL holding a real LangGraph ``store`` table
    (``PostgresStore.setup()``), dropped at the end of the session."""
    import os

    import psycopg
    from langgraph.store.postgres import PostgresStore

    base = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/memadmin")
    server, _, name = base.rpartition("/")
    # Per xdist worker (tests/isolation.py): databases are global on the server.
    database = f"test_{name.split('?')[0]}{worker_suffix()}_langgraph"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{database}"')
    url = f"{server}/{database}"
    with PostgresStore.from_conn_string(url) as store:
        store.setup()
    yield url
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


@pytest.fixture
def langgraph_store(langgraph_url: str) -> Iterator[str]:
    """The LangGraph database, emptied before each test (it is outside the test transaction)."""
    import psycopg

    with psycopg.connect(langgraph_url, autocommit=True) as conn:
        conn.execute("TRUNCATE store")
    yield langgraph_url


@pytest.fixture
def langgraph_config(workspace: Workspace, langgraph_store: str) -> ProviderConfig:
    return provider_config_create(actor=Actor.system("test"), workspace=workspace,
                                  slug="lg", name="LangGraph store", kind="langgraph",
                                  credential=langgraph_store, probed=True)


@pytest.fixture(scope="session")
def mem0_settings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    """Mem0's configuration for tests: a local Qdrant path, its SQLite history and LangChain's
    deterministic fake embedder (nothing downloaded, nothing sent; telemetry off). One
    ``Memory`` serves the session: each test gets agent ids of its own."""
    from memadmin.providers.mem0 import close_all, memory_for

    folder = tmp_path_factory.mktemp("mem0")
    settings: dict[str, object] = {
        "vector_store": {"provider": "qdrant", "config": {
            "path": str(folder / "qdrant"), "collection_name": "memories",
            "embedding_model_dims": 64, "on_disk": True}},
        "embedder": {"provider": "langchain", "config": {"model": "deterministic-fake"}},
        "history_db_path": str(folder / "history.db"),
    }
    # Building the Memory (Qdrant, SQLite, the embedder) takes seconds on a busy machine: paid
    # once here rather than inside the first call's deadline.
    memory_for(settings)
    yield settings

    close_all()


@pytest.fixture
def mem0_config(workspace: Workspace, mem0_settings: dict[str, object]) -> ProviderConfig:
    run = uuid.uuid4().hex[:12]
    return provider_config_create(
        actor=Actor.system("test"), workspace=workspace, slug="mem0", name="Mem0",
        kind="mem0", probed=True,
        options={"config": mem0_settings,
                 "scopes": {"alice": {"agent_id": f"alice-{run}"},
                            "bob": {"agent_id": f"bob-{run}"}}})
