"""Seeding the demo: the demo users, the two workspaces and their memory (``material.py``).

Objects are created through the services and items through the built-in provider's
``retain``, so counters, revisions and the audit chains are what real use would leave behind.
(The bulk loader for benchmarks, which writes a million rows with ``COPY``, is
``benchmarks/bulk_load.py``.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction

from memadmin.audit.services import Actor
from memadmin.demo.material import (
    DEMO_NAMESPACE_OWNER,
    DEMO_ROLES,
    DEMO_USERS,
    EDITS,
    SEED_ACTOR,
    SUBJECT_REQUESTS,
    WORKSPACES,
    DemoItem,
    WorkspaceSpec,
    _tools,
    demo_items,
)
from memadmin.providers import contract as c
from memadmin.providers.models import ProviderConfig
from memadmin.providers.registry import namespace_scope, provider_for
from memadmin.providers.services import provider_config_create
from memadmin.workspaces.models import Namespace, Resource, Workspace
from memadmin.workspaces.services import namespace_create, resource_create, workspace_create

DEADLINE = 30.0
PROVIDER_SLUG = "builtin"
PROVIDER_NAME = "Built-in store"


# -- seeding -----------------------------------------------------------------------------------


@dataclasses.dataclass
class SeedResult:
    workspaces: list[Workspace] = dataclasses.field(default_factory=list)
    created: list[str] = dataclasses.field(default_factory=list)  # "workspace acme", ...
    written: int = 0
    skipped: int = 0
    #: Absent but not written: deleted, frozen or erased since an earlier run.
    not_restored: int = 0


def ensure_users(password: str) -> list[Any]:
    """The demo users, created when missing; their password is (re)set to ``password``."""
    user_model = get_user_model()
    users = []
    for name in DEMO_USERS:
        user = user_model.objects.filter(username=name).first()
        if user is None:
            user = user_model(username=name, email=f"{name}@example.com")
        # Only superuser-ness is set here; roles are object permissions (see the command).
        changed = user.pk is None
        if name == "admin" and not (user.is_superuser and user.is_staff):
            user.is_superuser = user.is_staff = True
            changed = True
        if not user.is_active:
            user.is_active, changed = True, True
        # check_password first: an unchanged password means no write on a second run.
        if changed or not user.check_password(password):
            user.set_password(password)
            user.save()
        users.append(user)
    return users


def _ensure_workspace(spec: WorkspaceSpec, actor: Actor, result: SeedResult) -> Workspace:
    workspace = Workspace.objects.filter(slug=spec.slug).first()
    if workspace is None:
        workspace = workspace_create(actor=actor, slug=spec.slug, name=spec.name)
        result.created.append(f"workspace {spec.slug}")
    return workspace


def _ensure_provider(workspace: Workspace, actor: Actor, result: SeedResult) -> ProviderConfig:
    config = ProviderConfig.objects.filter(workspace=workspace, slug=PROVIDER_SLUG).first()
    if config is None:
        config = provider_config_create(actor=actor, workspace=workspace, slug=PROVIDER_SLUG,
                                        name=PROVIDER_NAME, kind="local", probed=True)
        result.created.append(f"provider {workspace.slug}/{PROVIDER_SLUG}")
    return config


def _ensure_resource(workspace: Workspace, config: ProviderConfig, slug: str, actor: Actor,
                     result: SeedResult, **options: Any) -> Resource:
    resource = Resource.objects.filter(workspace=workspace, slug=slug).first()
    if resource is None:
        resource = resource_create(actor=actor, workspace=workspace, provider=config, slug=slug,
                                   **options)
        result.created.append(f"resource {workspace.slug}/{slug}")
    return resource


def _ensure_namespace(resource: Resource, slug: str, actor: Actor, result: SeedResult,
                      **options: Any) -> Namespace:
    namespace = Namespace.objects.filter(resource=resource, slug=slug).first()
    if namespace is None:
        namespace = namespace_create(actor=actor, resource=resource, slug=slug, **options)
        result.created.append(f"namespace {resource.workspace.slug}/{resource.slug}/{slug}")
    return namespace


def seed(*, actor: Actor | None = None) -> SeedResult:
    """Create what is missing of the demo workspaces and write the missing items."""
    actor = actor or Actor.system(SEED_ACTOR)
    result = SeedResult()
    items: dict[tuple[str, str, str], list[DemoItem]] = {}
    for item in demo_items():
        items.setdefault((item.workspace, item.resource, item.namespace), []).append(item)

    for ws_spec in WORKSPACES:
        workspace = _ensure_workspace(ws_spec, actor, result)
        result.workspaces.append(workspace)
        config = _ensure_provider(workspace, actor, result)
        for res_spec in ws_spec.resources:
            resource = _ensure_resource(workspace, config, res_spec.slug, actor, result,
                                        description=res_spec.description,
                                        max_bytes=res_spec.max_bytes,
                                        tools=_tools(res_spec.noun))
            # The resource's own provider: one found from an earlier run may use another.
            provider = provider_for(resource.provider)
            for ns_spec in res_spec.namespaces:
                namespace = _ensure_namespace(resource, ns_spec.slug, actor, result,
                                              description=ns_spec.description)
                wanted = items.get((ws_spec.slug, res_spec.slug, ns_spec.slug), [])
                _write_items(provider, namespace, wanted, result)
                _edit_items(provider, namespace, (ws_spec.slug, res_spec.slug, ns_spec.slug))
    return result


def _edit_items(provider: c.Provider, namespace: Namespace, where: tuple[str, str, str]) -> None:
    """Apply ``EDITS`` through the store's ``update_item`` (each edit a revision, by its
    author), to items still at revision 1."""
    edits = {(tier, key): changes for *place, tier, key, changes in EDITS
             if tuple(place) == where}
    if not edits:
        return
    scope = namespace_scope(namespace)
    with transaction.atomic():
        present = list(provider.export(c.ItemFilters(), scope=scope, deadline=DEADLINE))
        for item in present:
            changes = edits.get((item.tier, item.key))
            if changes is None or item.revision != 1 or item.quarantine != "clear":
                continue
            content, revision = item.content, item.revision
            for number, (author, line) in enumerate(changes, start=2):
                content = f"{content}\n{line}"
                result = provider.update_item(
                    item.id, content, "replace", expected_revision=revision,
                    operation_id=f"{SEED_ACTOR}:edit:{item.id}:{number}", actor=author,
                    scope=scope, deadline=DEADLINE)
                revision = result.revision


def _write_items(provider: c.Provider, namespace: Namespace, wanted: Sequence[DemoItem],
                 result: SeedResult) -> None:
    scope = namespace_scope(namespace)

    def present() -> set[tuple[str, str]]:
        return {(item.tier, item.key)
                for item in provider.export(c.ItemFilters(), scope=scope, deadline=DEADLINE)}

    with transaction.atomic():
        # Present already (from an earlier run, or edited by someone since): left alone, so a
        # second run bumps no revision.
        before = present()
        attempted = []
        for item in wanted:
            if (item.tier, item.key) in before:
                result.skipped += 1
                continue
            try:
                provider.retain(item.tier, item.key, item.content, "replace",
                                data_subject_id=item.subject, operation_id=item.operation_id,
                                actor=SEED_ACTOR, scope=scope, deadline=DEADLINE)
            except (c.Frozen, c.ErasedSubject):
                # Frozen or erased since an earlier run: the demo must not undo that.
                # retain's savepoint has rolled back; carry on.
                result.not_restored += 1
                continue
            attempted.append(item)
        if attempted:
            # An item deleted less than 24 h after an earlier run wrote it is not written again:
            # retain answers the stored result of that run's operation id. Count what is there.
            after = present()
            for item in attempted:
                if (item.tier, item.key) in after:
                    result.written += 1
                else:
                    result.not_restored += 1


def grant_demo_roles(workspaces: Sequence[Workspace], users: Sequence[Any],
                     actor: Actor | None = None) -> int:
    """Grant the demo roles that are missing (audited); returns how many were granted."""
    from memadmin.workspaces import access
    from memadmin.workspaces.services import role_grant

    actor = actor or Actor.system(SEED_ACTOR)
    by_name = {user.get_username(): user for user in users}
    granted = 0
    for workspace in workspaces:
        wanted = [(by_name[name], role) for name, role in DEMO_ROLES.items() if name in by_name]
        if workspace.slug != DEMO_NAMESPACE_OWNER[0] and "owner" in by_name:
            wanted.append((by_name["owner"], "owner"))
        for user, role in wanted:
            if role not in access.workspace_roles(user, workspace):
                role_grant(actor=actor, workspace=workspace, user=user, role=role)
                granted += 1
        if workspace.slug == DEMO_NAMESPACE_OWNER[0] and "owner" in by_name:
            namespace = (Namespace.objects.filter(resource__workspace=workspace,
                                                  resource__slug=DEMO_NAMESPACE_OWNER[1])
                         .order_by("slug").first())
            if namespace is not None and not access.owns_namespace(by_name["owner"], namespace):
                role_grant(actor=actor, workspace=workspace, user=by_name["owner"],
                           role="owner", namespace=namespace)
                granted += 1
    return granted


def seed_subject_requests(users: Sequence[Any]) -> int:
    """Create the demo's subject requests that are missing (``SUBJECT_REQUESTS``), through the
    request services as ``compliance`` (and ``compliance2`` for the denial), so that their
    audit events are what real use leaves; returns how many were created. Needs the roles."""
    from memadmin.gdpr.models import SubjectRequest
    from memadmin.gdpr.transitions import (
        subject_request_cancel,
        subject_request_create,
        subject_request_deny,
        subject_request_submit,
    )

    by_name = {user.get_username(): user for user in users}
    if not {"compliance", "compliance2"} <= set(by_name):
        return 0
    requester, second = Actor.of(by_name["compliance"]), Actor.of(by_name["compliance2"])
    created = 0
    for slug, kind, subject, reason, outcome in SUBJECT_REQUESTS:
        workspace = Workspace.objects.filter(slug=slug).first()
        if workspace is None or SubjectRequest.objects.filter(workspace=workspace,
                                                              reason=reason).exists():
            continue
        request = subject_request_create(actor=requester, workspace=workspace, kind=kind,
                                         subject_id=subject, reason=reason)
        if outcome in ("submit", "deny"):
            request = subject_request_submit(actor=requester, subject_request=request)
        if outcome == "deny":
            subject_request_deny(actor=second, subject_request=request,
                                 reason="Demo: the request could not be verified.")
        elif outcome == "cancel":
            subject_request_cancel(actor=requester, subject_request=request)
        created += 1
    return created
