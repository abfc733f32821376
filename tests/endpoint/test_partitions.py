"""The namespaces a request names, looked up by one statement built once a process: the same
rows, values and order as the ORM's ``select_related`` query it replaces."""

from __future__ import annotations

from typing import Any

import pytest

from memadmin.endpoint import partitions
from memadmin.endpoint.partitions import PREFETCH_MAX, local_namespaces, prefetchable
from memadmin.providers.models import ProviderConfig
from memadmin.providers.services import provider_config_create, provider_config_update
from memadmin.workspaces.models import Namespace
from memadmin.workspaces.services import namespace_create, resource_create
from tests.endpoint.conftest import SYSTEM, Api

pytestmark = pytest.mark.django_db


def orm_namespaces(partitions: list[str], workspace: Any) -> list[Namespace]:
    return list(Namespace.objects.filter(
        partition_key__in=set(partitions), resource__workspace=workspace,
        resource__provider__kind="local", resource__provider__enabled=True,
    ).select_related("resource__provider"))


def values(instance: Any) -> dict[str, Any]:
    return {f.attname: getattr(instance, f.attname) for f in type(instance)._meta.concrete_fields}


def test_it_loads_every_field_as_the_orm_does(tokens, tool_resource, namespace,
                                              other_namespace, local_config,
                                              workspace) -> None:
    # Columns that need converters: JSON (tools, options) and the encrypted credential.
    ProviderConfig.objects.filter(pk=local_config.pk).update(
        credential="s3cret-value", options={"nested": {"list": [1, 2.5, None]}})
    partitions = [other_namespace.partition_key, namespace.partition_key]
    mine, orm = local_namespaces(partitions, workspace.pk), orm_namespaces(partitions, workspace)
    assert [ns.slug for ns in mine] == [ns.slug for ns in orm] == ["alice", "bob"]
    for got, expected in zip(mine, orm, strict=True):
        assert values(got) == values(expected)
        assert values(got.resource) == values(expected.resource)
        assert values(got.resource.provider) == values(expected.resource.provider)
    first = mine[0]
    assert first.resource.tools == tool_resource.tools and first.resource.tools
    assert first.resource.provider.credential == "s3cret-value"
    assert first.resource.provider.options == {"nested": {"list": [1, 2.5, None]}}
    # Loaded, not fetched again, and saved like any loaded instance.
    assert not first._state.adding and not first.resource._state.adding
    assert Namespace.resource.is_cached(first)


def test_it_leaves_out_other_workspaces_disabled_and_remote_providers(
        tokens, namespace, workspace, other_workspace) -> None:
    theirs_config = provider_config_create(actor=SYSTEM, workspace=other_workspace,
                                           slug="builtin", name="Built-in", kind="local",
                                           probed=True)
    theirs = namespace_create(actor=SYSTEM, resource=resource_create(
        actor=SYSTEM, workspace=other_workspace, provider=theirs_config, slug="kb"), slug="x")
    disabled_config = provider_config_create(actor=SYSTEM, workspace=workspace, slug="old",
                                             name="Old", kind="local", probed=True)
    disabled = namespace_create(actor=SYSTEM, resource=resource_create(
        actor=SYSTEM, workspace=workspace, provider=disabled_config, slug="old"), slug="old")
    provider_config_update(actor=SYSTEM, config=disabled_config, enabled=False)
    remote_config = provider_config_create(actor=SYSTEM, workspace=workspace, slug="remote",
                                           name="Remote", kind="http",
                                           url="https://memory.example.com/oc-memory")
    remote = namespace_create(actor=SYSTEM, resource=resource_create(
        actor=SYSTEM, workspace=workspace, provider=remote_config, slug="remote"), slug="r")
    partitions = [namespace.partition_key, theirs.partition_key, disabled.partition_key,
                  remote.partition_key, "ocmem_v1_" + "0" * 40]
    assert [ns.pk for ns in local_namespaces(partitions, workspace.pk)] == [namespace.pk]
    assert [ns.pk for ns in orm_namespaces(partitions, workspace)] == [namespace.pk]
    assert [ns.pk for ns in local_namespaces(partitions, other_workspace.pk)] == [theirs.pk]
    assert local_namespaces([], workspace.pk) == []


def test_a_disabled_built_in_store_is_not_reached_over_the_wire(api: Api, local_config) -> None:
    api.retain("The refund limit is 50 EUR.")
    provider_config_update(actor=SYSTEM, config=local_config, enabled=False)
    with api.unchanged():
        api.admin("recall", 404, "not_found", input={"text": "refund"})
        api.agent("recall", 403, "forbidden", input={"text": "refund"})


def test_it_prefetches_only_what_looks_like_partition_keys() -> None:
    key = "ocmem_v1_" + "a" * 40
    assert prefetchable({"partition": key}) == {key}
    assert prefetchable({"scope": {"partitions": [key, "b:c.d-e_f"]}}) == {key, "b:c.d-e_f"}
    # Not yet checked: anything that cannot be a key (a lone surrogate, NUL, spaces, too long,
    # not a string) is left out, and so is a body that is not an object.
    assert prefetchable({"partition": "x\ud800", "scope": {"partitions": [
        "a\x00", "a b", "k" * 201, 7, None, ["nested"]]}}) == frozenset()
    assert prefetchable(["partition"]) == prefetchable("x") == prefetchable(None) == frozenset()
    assert prefetchable({"scope": {"partitions": "not-a-list"}}) == frozenset()
    many = [f"p{n}" for n in range(PREFETCH_MAX + 1)]
    assert prefetchable({"scope": {"partitions": many}}) == frozenset()
    assert len(prefetchable({"scope": {"partitions": many[:PREFETCH_MAX]}})) == PREFETCH_MAX


def test_a_scope_too_large_to_prefetch_answers_the_same(api: Api, tokens, monkeypatch) -> None:
    api.retain("The refund limit is 50 EUR.")
    api.retain("Escalate refunds over the limit.", key="escalation")
    both = [tokens.partition, tokens.other_partition]
    answer = api.admin("count", partitions=both, filters={"q": "refund"})
    assert answer == {"count": 2}
    monkeypatch.setattr(partitions, "PREFETCH_MAX", 1)  # now looked up after the checks
    assert prefetchable({"scope": {"partitions": both}}) == frozenset()
    assert api.admin("count", partitions=both, filters={"q": "refund"}) == answer
    assert api.admin("count", partitions=[*both, "ocmem_v1_" + "0" * 40],
                     filters={"q": "refund"}, status=404, code="not_found")
