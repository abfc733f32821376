"""Who is calling the endpoint: an agent token or a workspace admin credential (bearer only)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from django.utils import timezone

from memadmin.lib.keys import secret_digest
from memadmin.memory.models import AgentToken
from memadmin.providers import contract as c
from memadmin.workspaces.models import AdminCredential, Workspace, usable_secrets

LAST_USED_RESOLUTION = dt.timedelta(seconds=60)
MAX_TOKEN_CHARS = 200


@dataclasses.dataclass(frozen=True)
class Caller:
    kind: str  # "agent" or "admin"
    workspace: Workspace
    label: str
    access: str  # "read", "read-write" (agents) or "admin"
    partitions: frozenset[str] = frozenset()

    @property
    def is_agent(self) -> bool:
        return self.kind == "agent"

    @property
    def may_write(self) -> bool:
        return self.access in ("read-write", "admin")


def _bearer(header: str | None) -> str:
    if not header:
        raise c.AuthFailed("a bearer token is required")
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > MAX_TOKEN_CHARS:
        raise c.AuthFailed("a bearer token is required")
    return token


def _touch(model: type[Any], pk: Any, last_used: dt.datetime | None) -> None:
    now = timezone.now()
    if last_used is None or now - last_used > LAST_USED_RESOLUTION:
        model.objects.filter(pk=pk).update(last_used_at=now)


def authenticate(header: str | None) -> Caller:
    """The caller behind an ``Authorization: Bearer`` header; AuthFailed for anything else."""
    digest = secret_digest(_bearer(header))
    # Revoked, expired and suspended tokens all answer the same: unknown.
    usable = usable_secrets()
    token = (AgentToken.objects.filter(usable, secret_hash=digest)
             .select_related("workspace").first())
    if token is not None:
        _touch(AgentToken, token.pk, token.last_used_at)
        partitions = frozenset(token.namespaces.values_list("partition_key", flat=True))
        return Caller(kind="agent", workspace=token.workspace, label=f"agent:{token.prefix}",
                      access=token.access, partitions=partitions)
    credential = (AdminCredential.objects.filter(usable, secret_hash=digest)
                  .select_related("workspace").first())
    if credential is not None:
        _touch(AdminCredential, credential.pk, credential.last_used_at)
        return Caller(kind="admin", workspace=credential.workspace,
                      label=f"admin-credential:{credential.prefix}", access="admin")
    raise c.AuthFailed("unknown, revoked, expired or suspended token")
