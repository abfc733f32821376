"""The access module: every role and a stranger, per capability."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.http import Http404

from memadmin.audit.services import Actor
from memadmin.workspaces import access
from memadmin.workspaces.models import Workspace
from memadmin.workspaces.services import namespace_create, role_grant, role_revoke

pytestmark = pytest.mark.django_db

# capability -> users who have it workspace-wide in "acme"
EXPECTED = {
    "view_content": {"ada", "olga", "alice", "carl", "vic", "root"},
    "manage_providers": {"ada", "olga", "root"},
    "run_health_checks": {"ada", "olga", "root"},
    "edit_memory": {"ada", "alice", "root"},
    "review_quarantine": {"ada", "carl", "root"},
    "legal_hold": {"ada", "carl", "root"},
    "subject_requests": {"ada", "carl", "root"},
    "view_audit": {"ada", "carl", "root"},
    "manage_members": {"ada", "root"},
    "manage_workspace": {"ada", "root"},
}
EVERYONE = {"ada", "olga", "alice", "nora", "carl", "vic", "mallory", "root"}


@pytest.mark.parametrize("capability", sorted(EXPECTED))
def test_it_grants_each_capability_to_exactly_the_roles_in_the_design(
        users, workspace, capability: str) -> None:
    holders = {name for name, user in users.items() if access.can(user, capability, workspace)}
    assert holders == EXPECTED[capability]


def test_everyone_but_the_stranger_sees_the_workspace(users, workspace) -> None:
    seeing = {name for name, user in users.items() if access.can(user, "view", workspace)}
    assert seeing == EVERYONE - {"mallory"}
    assert {name for name, user in users.items()
            if workspace in access.visible_workspaces(user)} == EVERYONE - {"mallory"}


def test_a_namespace_owner_reads_and_edits_only_that_namespace(users, workspace, namespace,
                                                               other_namespace) -> None:
    nora = users["nora"]
    assert access.can(nora, "view_content", workspace, namespace)
    assert access.can(nora, "edit_memory", workspace, namespace)
    assert not access.can(nora, "view_content", workspace, other_namespace)
    assert not access.can(nora, "edit_memory", workspace, other_namespace)
    assert list(access.content_namespaces(nora, workspace)) == [namespace]


def test_viewers_read_content_but_do_not_edit(users, workspace, namespace) -> None:
    assert access.can(users["vic"], "view_content", workspace, namespace)
    assert not access.can(users["vic"], "edit_memory", workspace, namespace)


def test_roles_do_not_leak_to_another_workspace(users, other_workspace) -> None:
    for name in EVERYONE - {"root"}:
        assert not access.can(users[name], "view", other_workspace)
        assert other_workspace not in access.visible_workspaces(users[name])


def test_get_workspace_answers_404_to_strangers_and_403_for_a_missing_role(users,
                                                                          workspace) -> None:
    with pytest.raises(Http404):
        access.get_workspace(users["mallory"], "acme")
    with pytest.raises(Http404):
        access.get_workspace(users["ada"], "no-such-workspace")
    with pytest.raises(PermissionDenied):
        access.get_workspace(users["vic"], "acme", "manage_members")
    assert access.get_workspace(users["ada"], "acme", "manage_members") == workspace


def test_get_namespace_hides_other_namespaces_from_a_namespace_owner(
        users, workspace, resource, namespace, other_namespace) -> None:
    nora = users["nora"]
    assert access.get_namespace(nora, resource, "alice", "edit_memory") == namespace
    with pytest.raises(PermissionDenied):
        access.get_namespace(nora, resource, "bob", "edit_memory")


def test_revoking_takes_effect_immediately(users, workspace) -> None:
    vic = users["vic"]
    role_revoke(actor=Actor.system("t"), workspace=workspace, user=vic, role="viewer")
    assert not access.can(vic, "view", workspace)


def test_inactive_users_have_no_access(users, workspace) -> None:
    ada = users["ada"]
    ada.is_active = False
    assert not access.can(ada, "view", workspace)


def test_lists_are_filtered_with_a_bounded_number_of_queries(
        users, resource, django_assert_max_num_queries) -> None:
    for n in range(20):
        Workspace.objects.create(slug=f"w{n}", name=f"W{n}")
        namespace_create(actor=Actor.system("t"), resource=resource, slug=f"n{n}")
    with django_assert_max_num_queries(1):
        assert len(list(access.visible_workspaces(users["nora"]))) == 1


def test_it_refuses_unknown_roles(users, workspace, namespace) -> None:
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError):
        role_grant(actor=Actor.system("t"), workspace=workspace, user=users["vic"],
                   role="god")
    with pytest.raises(ValidationError):
        role_grant(actor=Actor.system("t"), workspace=workspace, user=users["vic"],
                   role="viewer", namespace=namespace)
