"""The endpoint's namespace lookup, compiled once a process, finds exactly what its queryset
finds: the workspace's namespaces of enabled built-in stores, with their resources and
providers as the ORM loads them (JSON and encrypted columns included)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memadmin.endpoint.operations import _reachable, _reachable_queryset
from memadmin.providers.services import provider_config_create
from memadmin.workspaces.services import namespace_create, resource_create
from tests.conftest import SYSTEM

pytestmark = pytest.mark.django_db
TOOLS = [{"name": "remember", "description": "Save a fact.", "access": "write",
          "idempotent": False,
          "input": {"type": "object", "properties": {"fact": {"type": "string"}},
                    "required": ["fact"]}}]


def fields(obj: Any) -> dict[str, Any]:
    return {f.attname: getattr(obj, f.attname) for f in obj._meta.concrete_fields}


def loaded(namespaces: list[Any]) -> list[tuple[dict[str, Any], ...]]:
    return sorted(((fields(ns), fields(ns.resource), fields(ns.resource.provider))
                   for ns in namespaces), key=lambda row: row[0]["partition_key"])


def test_it_finds_what_the_queryset_finds(workspace, other_workspace, local_config,
                                          namespace, other_namespace) -> None:
    tooled = resource_create(actor=SYSTEM, workspace=workspace, provider=local_config,
                             slug="tools", tools=TOOLS)
    third = namespace_create(actor=SYSTEM, resource=tooled, slug="carol")
    off = provider_config_create(actor=SYSTEM, workspace=workspace, slug="off", name="Off",
                                 kind="local", probed=True)
    off.enabled = False
    off.save(update_fields=["enabled"])
    disabled = namespace_create(actor=SYSTEM, resource=resource_create(
        actor=SYSTEM, workspace=workspace, provider=off, slug="off"), slug="dora")
    elsewhere_config = provider_config_create(actor=SYSTEM, workspace=other_workspace,
                                              slug="builtin", name="Built-in", kind="local",
                                              probed=True)
    elsewhere = namespace_create(actor=SYSTEM, resource=resource_create(
        actor=SYSTEM, workspace=other_workspace, provider=elsewhere_config, slug="kb"),
        slug="eve")
    asked = [[namespace.partition_key],
             [namespace.partition_key, other_namespace.partition_key, third.partition_key],
             [namespace.partition_key, disabled.partition_key, elsewhere.partition_key],
             [elsewhere.partition_key], ["no-such-partition"]]
    for partitions in asked:
        expected = list(_reachable_queryset(partitions, workspace.pk))
        with CaptureQueriesContext(connection) as queries:
            found = _reachable(sorted(partitions), workspace.pk)
        assert len(queries.captured_queries) == 1
        assert loaded(found) == loaded(expected), partitions
        # The resource and the provider came with the row: nothing more is read.
        with CaptureQueriesContext(connection) as more:
            assert [ns.resource.provider.kind for ns in found] == ["local"] * len(found)
        assert not more.captured_queries
    found = _reachable([third.partition_key], workspace.pk)
    assert found[0].resource.tools == TOOLS
    assert _reachable([namespace.partition_key], other_workspace.pk) == []
