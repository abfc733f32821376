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
from memadmin.workspaces.models import Namespace, Workspace
from memadmin.workspaces.services import admin_credential_mint

PROVIDER_KINDS = ["local", "http"]
#: Marks per kind: ``http`` needs committed data, so its cases are transactional.
KIND_MARKS = {"http": [pytest.mark.django_db(transaction=True)]}
ITEM_MAX_BYTES = 4096
RECALL_MAX_BYTES = 1024


class _NoDelayWSGIServer(ThreadedWSGIServer):
    """Django's test server with TCP_NODELAY: it writes headers and body separately, so on a
    kept-alive connection every answer otherwise waits ~40 ms for the client's delayed ACK
    (gunicorn sets TCP_NODELAY itself). Only makes the http cases faster."""

    def get_request(self):  # type: ignore[no-untyped-def]
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
             local_config, namespace: Namespace,  # type: ignore[no-untyped-def]
             other_namespace: Namespace) -> c.Provider:
    if provider_kind == "local":
        return provider_for(local_config)
    if provider_kind == "http":
        return provider_for(self_over_http(request, workspace, slug="remote", name="Remote"))
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
