"""The ``langgraph`` kind beyond the parity suite, against a real PostgresStore: items agents
put themselves (subject in the namespace tuple or in the value, JSON values), discovery, and
faults (wrong connection string, missing table, permission denied, a store that hangs on a
lock), plus a kind whose library is missing."""

from __future__ import annotations

import threading
import time
from typing import cast

import psycopg
import pytest
from django import forms
from langgraph.store.postgres import PostgresStore

from memadmin.audit.services import Actor
from memadmin.providers import contract as c
from memadmin.providers import registry
from memadmin.providers.registry import provider_for
from memadmin.providers.services import provider_config_create
from memadmin.workspaces.services import namespace_create, resource_create

SYSTEM = Actor.system("test")
DEADLINE = 5
ALL = c.ItemFilters()


@pytest.fixture
def config(workspace, langgraph_store):
    return provider_config_create(
        actor=SYSTEM, workspace=workspace, slug="support", name="Support bot store",
        kind="langgraph", credential=langgraph_store, probed=True,
        options={"prefixes": {"users": ["memories"]}, "subject": {"position": 1}})


@pytest.fixture
def user_memories(workspace, config):
    resource = resource_create(actor=SYSTEM, workspace=workspace, provider=config,
                               slug="support-memory", item_max_bytes=8192)
    return namespace_create(actor=SYSTEM, resource=resource, slug="users")


@pytest.fixture
def provider(config) -> c.Provider:
    return provider_for(config)


@pytest.fixture
def scope(user_memories) -> c.Scope:
    return c.Scope.of(user_memories.partition_key)


@pytest.fixture
def store(langgraph_store):
    with PostgresStore.from_conn_string(langgraph_store) as store:
        yield store


def listing(provider: c.Provider, scope: c.Scope, filters: c.ItemFilters = ALL) -> list[c.Item]:
    return provider.list_items(filters, limit=100, scope=scope, deadline=DEADLINE).items


def settings_with(config, **changes):
    for name, value in changes.items():
        setattr(config, name, value)
    config.save()
    return provider_for(config)


class TestItemsAgentsPut:
    def test_it_lists_an_agents_items_with_the_subject_from_the_namespace(self, provider, scope,
                                                                         store):
        store.put(("memories", "user-42"), "pref-1", {"content": "Prefers email", "src": "chat"})
        store.put(("memories", "user-7"), "pref-1", {"text": "Calls on Fridays"})
        store.put(("other-bot",), "x", {"content": "not governed here"})

        items = {i.id: i for i in listing(provider, scope)}

        assert set(items) == {"memories.user-42::pref-1", "memories.user-7::pref-1"}
        first = items["memories.user-42::pref-1"]
        assert (first.tier, first.key, first.content, first.data_subject_id) == (
            "facts", "pref-1", "Prefers email", "user-42")
        assert items["memories.user-7::pref-1"].content == "Calls on Fridays"

    def test_it_edits_the_main_field_and_keeps_the_rest_of_the_value(self, provider, scope,
                                                                     store, op):
        store.put(("memories", "user-42"), "pref-1", {"content": "Prefers email", "src": "chat"})

        provider.update_item("memories.user-42::pref-1", "Prefers phone", "replace",
                             expected_revision=1, operation_id=op(), scope=scope,
                             deadline=DEADLINE)

        assert store.get(("memories", "user-42"), "pref-1", refresh_ttl=False).value == {
            "content": "Prefers phone", "src": "chat"}

    def test_it_shows_a_value_without_text_as_json_and_edits_it_as_json(self, provider, scope,
                                                                         store, op):
        store.put(("memories", "user-42"), "profile", {"tz": "CET", "vip": True})
        [item] = listing(provider, scope)
        assert item.content == '{\n  "tz": "CET",\n  "vip": true\n}'

        with pytest.raises(c.InvalidRequest, match="JSON object"):
            provider.update_item(item.id, "not json", "replace", expected_revision=1,
                                 operation_id=op(), scope=scope, deadline=DEADLINE)
        provider.update_item(item.id, '{"tz": "UTC"}', "replace", expected_revision=1,
                             operation_id=op(), scope=scope, deadline=DEADLINE)

        assert store.get(("memories", "user-42"), "profile").value == {"tz": "UTC"}

    def test_it_sees_an_agents_put_as_a_new_revision_and_refuses_a_stale_edit(
            self, provider, scope, store, op):
        store.put(("memories", "user-42"), "pref-1", {"content": "Prefers email"})
        assert listing(provider, scope)[0].revision == 1
        store.put(("memories", "user-42"), "pref-1", {"content": "Prefers chat"})  # the agent

        with pytest.raises(c.Conflict):
            provider.update_item("memories.user-42::pref-1", "Prefers phone", "replace",
                                 expected_revision=1, operation_id=op(), scope=scope,
                                 deadline=DEADLINE)
        assert store.get(("memories", "user-42"), "pref-1").value == {"content": "Prefers chat"}

    def test_it_erases_a_subject_and_leaves_no_residue(self, provider, scope, store, op):
        store.put(("memories", "user-42"), "pref-1", {"content": "Prefers email"})
        store.put(("memories", "user-42", "episodes"), "e1", {"content": "Asked for a refund"})
        store.put(("memories", "user-7"), "pref-1", {"content": "Calls on Fridays"})

        result = provider.forget(data_subject_id="user-42", operation_id=op(), scope=scope,
                                 deadline=DEADLINE)

        assert result == c.ForgetResult(removed=2, held=0)
        assert listing(provider, scope, c.ItemFilters(subject="user-42")) == []
        assert [i.key for i in store.search(("memories",), limit=10)] == ["pref-1"]

    def test_it_writes_a_subjects_item_into_their_namespace(self, provider, scope, store, op):
        provider.retain("peers", "bob", "Bob is the account manager", "replace",
                        data_subject_id="user-42", operation_id=op(), scope=scope,
                        deadline=DEADLINE)

        item = store.get(("memories", "user-42"), "peers/bob.md")
        assert item is not None
        assert item.value == {"content": "Bob is the account manager"}

    def test_it_reads_the_subject_from_a_value_key_when_configured(self, config, scope, store):
        provider = settings_with(config, options={"prefixes": {"users": ["memories"]},
                                                  "subject": {"key": "user_id"}})
        store.put(("memories",), "m1", {"content": "Prefers email", "user_id": "cust-1"})

        [item] = listing(provider, scope)

        assert item.data_subject_id == "cust-1"

    def test_it_shows_the_stores_ttl(self, provider, scope, store):
        import datetime as dt

        store.put(("memories", "user-42"), "short-lived", {"content": "Call back at 3"},
                  ttl=60)
        store.put(("memories", "user-42"), "kept", {"content": "Prefers email"})

        items = {i.key: i for i in listing(provider, scope)}

        expires_at = items["short-lived"].expires_at
        assert expires_at is not None
        left = expires_at - dt.datetime.now(dt.UTC)
        assert dt.timedelta(minutes=55) < left <= dt.timedelta(minutes=60)
        assert items["kept"].expires_at is None

    def test_it_discovers_the_stores_namespaces(self, provider, store):
        store.put(("memories", "user-42"), "a", {"content": "x"})
        store.put(("support-bot", "facts"), "b", {"content": "y"})

        found = provider.discover(deadline=DEADLINE)

        assert set(found) == {("memories", "user-42"), ("support-bot", "facts")}

    def test_it_says_agents_write_it_directly(self, provider):
        capabilities = provider.capabilities(deadline=DEADLINE)

        assert {c.DIRECT_WRITES, c.CURRENT_REVISION_ONLY} <= capabilities


class TestFaults:
    def test_it_reports_a_wrong_connection_string_without_showing_it(self, config, scope):
        provider = settings_with(
            config, credential="postgresql://memadmin:s3cret-pw@127.0.0.1:1/nowhere")

        status = provider.health(deadline=DEADLINE)
        assert status.ok is False
        assert "connection refused" in status.message
        with pytest.raises(c.Unavailable) as refused:
            provider.list_items(ALL, scope=scope, deadline=DEADLINE)
        assert "s3cret-pw" not in refused.value.message
        assert "s3cret-pw" not in status.message

    def test_it_reports_a_missing_store_table(self, config, scope, langgraph_store):
        empty = langgraph_store + "_empty"
        server, _, name = empty.rpartition("/")
        with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
            admin.execute(f'CREATE DATABASE "{name}"')
        try:
            provider = settings_with(config, credential=empty)
            status = provider.health(deadline=DEADLINE)
            with pytest.raises(c.Unavailable, match="no 'store' table"):
                provider.list_items(ALL, scope=scope, deadline=DEADLINE)
        finally:
            with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        assert (status.ok, status.message) == (
            False, "the LangGraph store has no 'store' table (run PostgresStore.setup() there "
                   "first)")

    def test_it_reports_permission_denied_and_writes_nothing(self, config, scope, store,
                                                             langgraph_store, op):
        store.put(("memories", "user-42"), "pref-1", {"content": "Prefers email"})
        # Roles are global on the server: one per LangGraph database (so per xdist worker).
        role = langgraph_store.rpartition("/")[2].split("?")[0] + "_reader"
        with psycopg.connect(langgraph_store, autocommit=True) as conn:
            conn.execute(f"DROP OWNED BY {role}") if conn.execute(
                "SELECT 1 FROM pg_roles WHERE rolname = %s", [role]).fetchone() else None
            conn.execute(f"DROP ROLE IF EXISTS {role}")
            conn.execute(f"CREATE ROLE {role} LOGIN")
            conn.execute(f"GRANT SELECT ON store TO {role}")
        try:
            server, _, name = langgraph_store.rpartition("/")
            reader = server.replace("postgres@", f"{role}@") + "/" + name
            provider = settings_with(config, credential=reader)
            assert provider.health(deadline=DEADLINE).ok is True  # it may read
            with pytest.raises(c.Unavailable, match="permission denied"):
                provider.update_item("memories.user-42::pref-1", "Prefers phone", "replace",
                                     expected_revision=1, operation_id=op(), scope=scope,
                                     deadline=DEADLINE)
            with pytest.raises(c.Unavailable, match="permission denied"):
                provider.forget(data_subject_id="user-42", operation_id=op(), scope=scope,
                                deadline=DEADLINE)
        finally:
            with psycopg.connect(langgraph_store, autocommit=True) as conn:
                conn.execute(f"DROP OWNED BY {role}")
                conn.execute(f"DROP ROLE {role}")
        assert store.get(("memories", "user-42"), "pref-1").value == {"content": "Prefers email"}

    def test_it_gives_up_at_the_deadline_when_the_store_hangs_on_a_lock(
            self, provider, scope, store, langgraph_store, op):
        store.put(("memories", "user-42"), "pref-1", {"content": "Prefers email"})
        locked, release = threading.Event(), threading.Event()

        def hold_the_table() -> None:
            with psycopg.connect(langgraph_store) as conn:
                conn.execute("LOCK TABLE store IN ACCESS EXCLUSIVE MODE")
                locked.set()
                release.wait(30)

        holder = threading.Thread(target=hold_the_table)
        holder.start()
        try:
            assert locked.wait(10)
            started = time.monotonic()
            with pytest.raises(c.Timeout):
                provider.list_items(ALL, scope=scope, deadline=0.5)
            with pytest.raises(c.Timeout):
                provider.update_item("memories.user-42::pref-1", "x", "replace",
                                     expected_revision=1, operation_id=op(), scope=scope,
                                     deadline=0.5)
            status = provider.health(deadline=0.5)
            elapsed = time.monotonic() - started
        finally:
            release.set()
            holder.join()
        assert (status.ok, status.message) == (False, "health check timeout")
        assert elapsed < 3 * 0.5 * 5  # three calls of 0.5 s each, with 5x slack
        assert store.get(("memories", "user-42"), "pref-1").value == {"content": "Prefers email"}


class TestNotInstalled:
    def test_it_shows_a_kind_without_its_library_as_not_installed(self, config, scope,
                                                                  monkeypatch):
        monkeypatch.setitem(registry.OPTIONAL_LIBRARIES, "langgraph",
                            ("no_such_library_for_memadmin", "pip install 'memadmin[langgraph]'"))
        registry.provider_class.cache_clear()
        try:
            provider = provider_for(config)
            status = provider.health(deadline=DEADLINE)
            with pytest.raises(c.Unavailable, match="not installed"):
                provider.list_items(ALL, scope=scope, deadline=DEADLINE)
        finally:
            registry.provider_class.cache_clear()

        assert (status.ok, status.message) == (
            False, "not installed: pip install 'memadmin[langgraph]'")
        monkeypatch.undo()
        assert registry.install_command("langgraph") is None  # the real library is installed

    def test_the_provider_form_labels_a_missing_kind(self, monkeypatch):
        from memadmin.providers.forms import ProviderForm

        monkeypatch.setitem(registry.OPTIONAL_LIBRARIES, "mem0",
                            ("no_such_library_for_memadmin", "pip install 'memadmin[mem0]'"))

        field = ProviderForm().fields["kind"]
        assert isinstance(field, forms.ChoiceField)
        labels = dict(cast(list[tuple[str, str]], field.choices))

        assert labels["mem0"].endswith("(not installed: pip install 'memadmin[mem0]')")
        assert "not installed" not in labels["langgraph"]


class TestAdoption:
    @pytest.fixture
    def bare(self, workspace, langgraph_store, store):
        store.put(("memories", "user-42"), "pref-1", {"content": "Prefers email"})
        store.put(("memories", "user-7"), "pref-1", {"content": "Calls on Fridays"})
        store.put(("support-bot", "facts"), "f1", {"content": "Office closes at six"})
        return provider_config_create(actor=SYSTEM, workspace=workspace, slug="found",
                                      name="Found store", kind="langgraph", probed=True,
                                      credential=langgraph_store,
                                      options={"subject": {"position": 1}})

    def url(self, config):
        from django.urls import reverse

        return reverse("providers:discover", args=["acme", config.slug])

    def test_an_admin_sees_the_stores_namespaces_and_adopts_one(self, client_for, bare,
                                                                users) -> None:
        from memadmin.workspaces.models import Namespace

        ada = client_for("ada")
        page = ada.get(self.url(bare)).content.decode()
        for prefix in ("memories", "memories.user-42", "support-bot.facts"):
            assert f"<code>{prefix}</code>" in page

        response = ada.post(self.url(bare), {"prefix": "memories", "slug": "customers"})

        assert response.status_code == 302
        namespace = Namespace.objects.get(slug="customers", resource__provider=bare)
        bare.refresh_from_db()
        assert bare.options["prefixes"] == {"customers": ["memories"]}
        items = provider_for(bare).list_items(ALL, scope=c.Scope.of(namespace.partition_key),
                                              deadline=DEADLINE).items
        assert {(i.content, i.data_subject_id) for i in items} == {
            ("Prefers email", "user-42"), ("Calls on Fridays", "user-7")}
        assert "adopted" in ada.get(self.url(bare)).content.decode()

    def test_it_refuses_bad_input_with_a_400(self, client_for, bare, users) -> None:
        ada = client_for("ada")
        for data in ({"prefix": "", "slug": "x"}, {"prefix": "memories", "slug": "no spaces"},
                     {"prefix": "memories..x", "slug": "ok"}, {}):
            assert ada.post(self.url(bare), data).status_code == 400

    def test_only_admins_adopt(self, client_for, bare, users) -> None:
        assert client_for("olga").get(self.url(bare)).status_code == 403
        assert client_for("mallory").get(self.url(bare)).status_code == 404
