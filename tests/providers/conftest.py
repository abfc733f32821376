"""Fixtures for the provider-parity suite (the workspace, resource and two namespaces come from
tests/conftest.py: a 1,024-byte recall cap and a 4,096-byte item cap).

``provider`` is parametrised over provider kinds. The parity tests talk to it through the contract
only (never the ORM), so the same cases hold for every kind; the HTTP issue adds ``http`` here.
"""

from __future__ import annotations

import uuid

import pytest

from memadmin.gdpr.models import Tombstone
from memadmin.lib.keys import subject_hash
from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for
from memadmin.workspaces.models import Namespace, Workspace

PROVIDER_KINDS = ["local"]
ITEM_MAX_BYTES = 4096
RECALL_MAX_BYTES = 1024


@pytest.fixture(params=PROVIDER_KINDS)
def provider_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def provider(provider_kind: str, local_config, namespace: Namespace,  # type: ignore[no-untyped-def]
             other_namespace: Namespace) -> c.Provider:
    if provider_kind == "local":
        return provider_for(local_config)
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
def erase_subject(workspace: Workspace):  # type: ignore[no-untyped-def]
    """Write a tombstone for a subject id, as a completed erasure would."""

    def erase(subject_id: str) -> None:
        kid, digest = subject_hash(workspace.pk, subject_id)
        Tombstone.objects.create(workspace=workspace, key_id=kid, subject_hash=digest)

    return erase


# -- helpers for the parity suite (contract calls only) -----------------------------------------

DEADLINE = 5


@pytest.fixture
def op():  # type: ignore[no-untyped-def]
    """Fresh operation ids, unique across runs (a remote store may outlive the test)."""
    return lambda: f"op-{uuid.uuid4().hex}"


@pytest.fixture
def put(provider: c.Provider, scope: c.Scope, op):  # type: ignore[no-untyped-def]
    """Retain through the contract with defaults: ``put("text")`` adds a new ``facts`` item."""

    def put(content: str = "a note", tier: str = "facts", key: str = "", *,
            mode: str = "replace", subject: str | None = None,
            into: c.Scope | None = None) -> c.RetainResult:
        return provider.retain(tier, key, content, mode, data_subject_id=subject,
                               operation_id=op(), scope=into or scope, deadline=DEADLINE)

    return put
