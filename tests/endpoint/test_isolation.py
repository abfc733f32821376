"""A credential reaches only its own partitions; cookies and CSRF play no part."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client

from memadmin.memory.models import MemoryItem
from memadmin.memory.services import agent_token_mint
from memadmin.providers.services import provider_config_create
from memadmin.workspaces.services import (
    admin_credential_mint,
    namespace_create,
    resource_create,
)
from tests.endpoint.conftest import ENDPOINT, SYSTEM, Api, envelope

#: What an admin scope naming a partition outside the credential's workspace (or an unknown
#: one: the two look alike) answers. The endpoint answers not_found, as the built-in store does
#: for an unknown partition, so remote and built-in providers behave alike; DESIGN's error table
#: lists "wrong partition" under forbidden (403). Agent tokens get forbidden.
ADMIN_FOREIGN = (404, "not_found")


@pytest.fixture
def foreign(other_workspace):
    """Another workspace's namespace, with its own agent token and admin credential."""
    config = provider_config_create(actor=SYSTEM, workspace=other_workspace, slug="builtin",
                                    name="Built-in", kind="local", probed=True)
    resource = resource_create(actor=SYSTEM, workspace=other_workspace, provider=config,
                               slug="knowledge")
    namespace = namespace_create(actor=SYSTEM, resource=resource, slug="alice")
    _, agent = agent_token_mint(actor=SYSTEM, workspace=other_workspace, namespaces=[namespace],
                                access="read-write", name="theirs")
    _, admin = admin_credential_mint(actor=SYSTEM, workspace=other_workspace, name="theirs")
    return {"partition": namespace.partition_key, "agent": agent, "admin": admin}


def test_it_refuses_an_agent_token_another_namespaces_partition(api: Api) -> None:
    with api.unchanged():
        api.agent("recall", 403, "forbidden", partition=api.tokens.other_partition)
        api.agent("tool", 403, "forbidden", partition=api.tokens.other_partition,
                  tool="remember", arguments={"fact": "x"})


def test_it_refuses_an_agent_token_another_workspaces_partition(api: Api, foreign) -> None:
    with api.unchanged():
        api.agent("recall", 403, "forbidden", partition=foreign["partition"])
        api.agent("tool", 403, "forbidden", partition=foreign["partition"], tool="remember",
                  arguments={"fact": "x"})
        # ... and the other workspace's token cannot reach ours.
        api.agent("recall", 403, "forbidden", token=foreign["agent"])


def test_it_refuses_an_unknown_partition_like_a_foreign_one(api: Api, foreign) -> None:
    unknown = "ocmem_v1_" + "0" * 40
    for partition in (unknown, foreign["partition"]):
        assert api.agent("recall", 403, "forbidden", partition=partition) == api.agent(
            "recall", 403, "forbidden", partition=unknown)
        assert api.admin("list", *ADMIN_FOREIGN, partitions=[partition]) == api.admin(
            "list", *ADMIN_FOREIGN, partitions=[unknown])


def test_it_refuses_an_admin_credential_of_another_workspace(api: Api, foreign) -> None:
    api.retain("ours")
    with api.unchanged():
        api.admin("list", *ADMIN_FOREIGN, token=foreign["admin"])
        api.admin("retain", *ADMIN_FOREIGN, token=foreign["admin"], tier="facts",
                  content="x", mode="replace")
        api.admin("forget", *ADMIN_FOREIGN, token=foreign["admin"], dataSubjectId="anyone")
        # A scope mixing our partition with theirs is refused as a whole.
        api.admin("delete", *ADMIN_FOREIGN,
                  partitions=[api.tokens.partition, foreign["partition"]], filters={})
    assert api.admin("count", token=foreign["admin"], partitions=[foreign["partition"]]) == {
        "count": 0}


def test_it_does_not_read_another_namespaces_item_through_a_tool(api: Api) -> None:
    theirs = api.admin("retain", partitions=[api.tokens.other_partition], tier="facts",
                       content="Bob's private note", mode="replace")

    api.agent("tool", 404, "not_found", tool="read", arguments={"id": theirs["id"]})
    listed = api.agent("tool", tool="list", arguments={})["result"]["items"]
    assert listed == []
    assert "private" not in api.agent("recall", input={"text": "private note"})["text"]


def test_it_ignores_the_session_cookie_of_a_logged_in_superuser(api: Api) -> None:
    root = User.objects.create_superuser("root", "root@example.com", "x" * 20)
    client = Client()
    client.force_login(root)
    body = envelope("count", partitions=[api.tokens.partition], filters={})

    with api.unchanged():
        answer = api.wire.post(body, None, client=client)
        assert (answer.status, answer.code) == (401, "unauthorized")
        answer = api.wire.post(body, "mat_wrong", client=client)
        assert (answer.status, answer.code) == (401, "unauthorized")
    assert api.wire.post(body, api.tokens.admin, client=client).status == 200


def test_it_needs_no_csrf_token(api: Api) -> None:
    client = Client(enforce_csrf_checks=True)
    body = envelope("tool", partition=api.tokens.partition, tool="remember",
                    arguments={"fact": "written without CSRF"})

    answer = api.wire.post(body, api.tokens.rw, client=client)

    assert answer.status == 200
    assert MemoryItem.objects.get().content == "written without CSRF"
    raw = client.post(ENDPOINT, data=json.dumps(envelope("capabilities")),
                      content_type="application/json",
                      HTTP_AUTHORIZATION=f"Bearer {api.tokens.admin}")
    assert raw.status_code == 200 and "csrftoken" not in raw.cookies
