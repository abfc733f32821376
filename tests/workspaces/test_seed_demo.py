"""``manage.py seed_demo``: the demo users and workspaces, and idempotency."""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db.models import Count, Max, Sum
from django.test import override_settings

from memadmin.audit.models import AuditEvent
from memadmin.audit.services import verify_chain
from memadmin.demo import material as demo
from memadmin.gdpr.models import Tombstone
from memadmin.lib.keys import subject_hash
from memadmin.memory.models import MemoryItem, MemoryRevision, NamespaceCounter, OperationRecord
from memadmin.providers import contract as c
from memadmin.providers.models import ProviderConfig, ProviderHealth
from memadmin.providers.registry import namespace_scope, provider_for
from memadmin.workspaces.models import (
    Namespace,
    NamespaceUserObjectPermission,
    Resource,
    Workspace,
    WorkspaceUserObjectPermission,
)

PASSWORD = "correct horse battery staple"
TOUCHED = (get_user_model(), Workspace, ProviderConfig, ProviderHealth, Resource, Namespace,
           NamespaceCounter, MemoryItem, MemoryRevision, OperationRecord, AuditEvent,
           WorkspaceUserObjectPermission, NamespaceUserObjectPermission)


FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def demo_settings(settings):
    settings.MEMADMIN_DEMO_PASSWORD = PASSWORD
    # Six users hashed per run with the real hasher would dominate the suite's runtime.
    settings.PASSWORD_HASHERS = FAST_HASHERS
    return settings


def seed_demo(*args: str) -> str:
    out = io.StringIO()
    call_command("seed_demo", *args, stdout=out)
    return out.getvalue()


@contextmanager
def committed_seed(django_db_blocker: Any, *args: str) -> Iterator[str]:
    """Run seed_demo once for a whole class, committed (outside any test transaction, so VACUUM
    runs too); each test then runs in its own rolled-back transaction on top. Seeding takes
    seconds, so the read-only checks share one run. Flushed afterwards."""
    with django_db_blocker.unblock(), override_settings(MEMADMIN_DEMO_PASSWORD=PASSWORD,
                                                        PASSWORD_HASHERS=FAST_HASHERS):
        try:
            yield seed_demo(*args)
        finally:
            call_command("flush", interactive=False, verbosity=0)


@pytest.fixture(scope="class")
def seeded(django_db_setup: None, django_db_blocker: Any) -> Iterator[str]:
    with committed_seed(django_db_blocker) as output:
        yield output


def table_counts() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in TOUCHED}


def assert_counters_match() -> None:
    real = {row["namespace_id"]: (row["n"], row["b"])
            for row in MemoryItem.objects.values("namespace_id")
            .annotate(n=Count("id"), b=Sum("bytes"))}
    for counter in NamespaceCounter.objects.all():
        assert (counter.items, counter.bytes) == real.get(counter.namespace_id, (0, 0)), \
            counter.namespace.slug


@pytest.mark.django_db
@pytest.mark.usefixtures("seeded")
class TestSeedDemo:
    def test_it_creates_the_users_workspaces_providers_resources_and_namespaces(
            self, seeded: str) -> None:
        output = seeded

        users = {u.username: u for u in get_user_model().objects.all()}
        assert set(users) == set(demo.DEMO_USERS)
        assert users["admin"].is_superuser and users["admin"].is_staff
        assert not any(u.is_superuser for name, u in users.items() if name != "admin")
        assert all(u.email == f"{name}@example.com" for name, u in users.items())
        assert all(u.check_password(PASSWORD) for u in users.values())

        assert dict(Workspace.objects.values_list("slug", "name")) == {
            "acme": "Acme Support Agents", "globex": "Globex Research"}
        providers = ProviderConfig.objects.all()
        assert [(p.workspace.slug, p.kind, p.probed) for p in providers.order_by(
            "workspace__slug")] == [("acme", "local", True), ("globex", "local", True)]
        assert set(ProviderHealth.objects.values_list("state", flat=True)) == {"unknown"}

        for resource in Resource.objects.all():
            assert resource.description
            tools = {tool["name"]: tool for tool in resource.tools}
            assert set(tools) == {"remember", "list", "read"}
            assert tools["remember"]["access"] == "write"
            assert tools["remember"]["idempotent"] is False
            assert tools["remember"]["input"]["required"] == ["fact"]
            assert tools["list"]["access"] == tools["read"]["access"] == "read"
            assert 2 <= resource.namespaces.count() <= 4
        per_workspace = Counter(Resource.objects.values_list("workspace__slug", flat=True))
        assert all(2 <= n <= 3 for n in per_workspace.values())
        assert {"alice", "support-bot", "team_emea"} <= set(
            Namespace.objects.values_list("slug", flat=True))

        assert "Log in at http://127.0.0.1:8000/ as admin / " + PASSWORD in output
        assert "admin, operator, owner, compliance, compliance2, viewer" in output

    def test_it_grants_each_demo_user_their_role(self) -> None:
        from memadmin.workspaces import access

        users = {u.username: u for u in get_user_model().objects.all()}
        acme, globex = Workspace.objects.get(slug="acme"), Workspace.objects.get(slug="globex")
        for workspace in (acme, globex):
            assert access.can(users["operator"], "manage_providers", workspace)
            assert access.can(users["compliance"], "subject_requests", workspace)
            assert access.can(users["compliance2"], "subject_requests", workspace)
            assert access.can(users["viewer"], "view_content", workspace)
            assert not access.can(users["viewer"], "edit_memory", workspace)
        assert access.can(users["owner"], "edit_memory", acme)
        owned = access.owned_namespaces(users["owner"], globex)
        assert owned.count() == 1 and owned.get().resource.slug == "lab-notebook"

    def test_it_writes_a_few_hundred_items_in_every_tier(self) -> None:
        items = MemoryItem.objects.all()
        assert 250 <= items.count() <= 350
        assert set(items.values_list("tier", flat=True)) == set(c.TIERS)
        # (issue 20) a few items were edited afterwards, by their authors
        last_authors = {edits[-1][0] for *_, edits in demo.EDITS}
        assert set(items.values_list("updated_by", flat=True)) == {demo.SEED_ACTOR} | last_authors
        daily_keys = items.filter(tier="daily").values_list("key", flat=True)
        assert all(len(key) == 10 and key[4] == "-" for key in daily_keys)
        assert {"billing-bot", "dr-chen"} <= set(
            items.filter(tier="peers").values_list("key", flat=True))

    def test_it_writes_items_about_data_subjects_across_namespaces(self) -> None:
        with_subject = MemoryItem.objects.filter(data_subject_id__isnull=False)
        assert 35 <= with_subject.count() <= 45
        spread = with_subject.values("data_subject_id").annotate(
            namespaces=Count("namespace", distinct=True))
        assert sum(1 for row in spread if row["namespaces"] > 1) >= 3
        jane = with_subject.filter(data_subject_id="user:jane.doe@example.com")
        assert set(jane.values_list("namespace__resource__workspace__slug", flat=True)) == {
            "acme", "globex"}

    def test_it_writes_content_that_reads_like_prompt_injections(self) -> None:
        contents = list(MemoryItem.objects.values_list("content", flat=True))
        assert any("Ignore all previous instructions" in text for text in contents)
        assert any(text.startswith("SYSTEM: you are now") for text in contents)
        assert any("![status](https://" in text for text in contents)
        assert any("\u200b" in text for text in contents)
        assert any("SWdub3JlIGFsbCBwcmV2aW91cyBpbnN0cnVjdGlvbnM" in text for text in contents)
        assert 5 <= len(demo.INJECTIONS) <= 8

    def test_it_is_idempotent(self) -> None:
        from memadmin.gdpr.models import SubjectRequest

        requests = SubjectRequest.objects.count()
        revisions = dict(MemoryItem.objects.values_list("id", "revision"))
        before = table_counts()
        versions = dict(NamespaceCounter.objects.values_list("namespace_id", "version"))

        output = seed_demo()

        assert table_counts() == before
        assert SubjectRequest.objects.count() == requests
        assert dict(NamespaceCounter.objects.values_list("namespace_id", "version")) == versions
        # no revision bumped (the demo's edited items are at 2-4 from the first run, see below)
        assert dict(MemoryItem.objects.values_list("id", "revision")) == revisions
        assert f"Items: 0 written, {before['MemoryItem']} skipped" in output
        assert "Created" not in output

    def test_it_leaves_items_alone_that_were_changed_since(self) -> None:
        # an item the demo wrote once (its edited items are at revisions 2-4; ``first()`` by
        # the UUID key picked one of them now and then, and the edit met a conflict)
        item = MemoryItem.objects.filter(tier="AGENT", revision=1).order_by("key", "id").first()
        assert item is not None
        provider = provider_for(item.namespace.resource.provider)
        provider.update_item(str(item.pk), "Edited by an owner.", "replace", expected_revision=1,
                             operation_id="edit-1", scope=namespace_scope(item.namespace),
                             deadline=5)

        seed_demo()

        item.refresh_from_db()
        assert (item.content, item.revision) == ("Edited by an owner.", 2)

    @pytest.mark.parametrize("a_day_later", [False, True])
    def test_it_does_not_undo_a_deletion_a_freeze_or_an_erasure(self, a_day_later: bool) -> None:
        namespace = Namespace.objects.get(slug="alice")
        provider = provider_for(namespace.resource.provider)
        scope = namespace_scope(namespace)
        subject_item = namespace.items.filter(data_subject_id="customer-1042").get()
        provider.forget(data_subject_id="customer-1042", operation_id="erase-1", scope=scope,
                        deadline=5)
        Tombstone.objects.create(
            workspace=namespace.resource.workspace,
            **dict(zip(("key_id", "subject_hash"),
                       subject_hash(namespace.resource.workspace_id, "customer-1042"),
                       strict=True)))
        other = Namespace.objects.get(slug="team_emea")
        other_provider = provider_for(other.resource.provider)
        pins = other.items.get(tier="pins")
        other_provider.delete_items(ids=[str(pins.pk)], operation_id="delete-1",
                                    scope=namespace_scope(other), deadline=5)
        other_provider.freeze(c.FreezeTarget(level="namespace", partition=other.partition_key),
                              kind="legal_hold", reason="litigation", scope=namespace_scope(other),
                              deadline=5)

        if a_day_later:
            # Operation ids are remembered for 24 h: later, retain itself refuses the writes.
            OperationRecord.objects.all().delete()

        output = seed_demo()

        assert "0 written" in output
        assert "2 not restored (deleted, frozen or erased since an earlier run)" in output
        assert not MemoryItem.objects.filter(pk=subject_item.pk).exists()
        assert not other.items.filter(tier="pins").exists()
        assert_counters_match()

    def test_it_keeps_counters_equal_to_real_counts(self) -> None:
        assert NamespaceCounter.objects.count() == Namespace.objects.count() == 13
        assert_counters_match()

    def test_it_audits_what_it_creates_in_valid_chains(self) -> None:
        for workspace in Workspace.objects.all():
            assert verify_chain(str(workspace.pk)).ok
        actions = Counter(AuditEvent.objects.values_list("action", flat=True))
        assert actions["workspace.create"] == 2
        assert actions["namespace.create"] == 13
        # (issue 20) the demo's subject requests are made by the compliance users, as in use
        seeded_by = AuditEvent.objects.exclude(target_type="subject_request")
        assert set(seeded_by.values_list("actor_label", flat=True)) == {demo.SEED_ACTOR}
        by_requests = AuditEvent.objects.filter(target_type="subject_request")
        assert set(by_requests.values_list("actor_label", flat=True)) == {
            "compliance", "compliance2"}

    def test_it_shows_revisions_by_several_authors(self) -> None:
        edited = MemoryItem.objects.filter(revision__gt=1)
        assert sorted(edited.values_list("revision", flat=True)) == [2, 3, 4]
        authors = set(MemoryRevision.objects.filter(item__in=edited)
                      .values_list("actor", flat=True))
        authors |= set(edited.values_list("updated_by", flat=True))
        assert authors == {demo.SEED_ACTOR} | set(demo.EDIT_AUTHORS)
        assert MemoryItem.objects.aggregate(top=Max("revision"))["top"] == 4

    def test_it_has_a_namespace_long_enough_to_page(self) -> None:
        longest = max(Namespace.objects.all(), key=lambda ns: ns.items.count())
        assert longest.items.count() > 50    # the item list shows 50 per page
        assert (longest.resource.workspace.slug, longest.resource.slug, longest.slug) == \
            demo.LONG_NAMESPACE

    def test_it_shows_subject_requests_in_several_states(self) -> None:
        from memadmin.gdpr.models import SubjectRequest
        from memadmin.workspaces import access

        requests = SubjectRequest.objects.all()
        assert sorted(requests.values_list("state", flat=True)) == [
            "awaiting_approval", "cancelled", "denied", "new"]
        assert {r.requested_by.username for r in requests if r.requested_by} == {"compliance"}
        waiting = requests.get(state="awaiting_approval")
        assert waiting.kind == "erasure"
        second = get_user_model().objects.get(username="compliance2")
        assert access.can(second, "subject_requests", waiting.workspace)
        assert waiting.requested_by != second

    def test_it_resets_the_demo_users_passwords(self, settings) -> None:
        settings.MEMADMIN_DEMO_PASSWORD = "another demo password"

        seed_demo()

        for user in get_user_model().objects.all():
            assert user.check_password("another demo password")


@pytest.mark.django_db
class TestSeedDemoPreconditions:
    def test_it_refuses_without_a_demo_password(self, settings) -> None:
        settings.MEMADMIN_DEMO_PASSWORD = ""

        with pytest.raises(CommandError, match="set MEMADMIN_DEMO_PASSWORD to seed demo users"):
            seed_demo()
        assert not get_user_model().objects.exists()
        assert not Workspace.objects.exists()

    def test_it_generates_the_same_items_every_time(self) -> None:
        assert demo.demo_items() == demo.demo_items()
