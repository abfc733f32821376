"""Who is calling the endpoint: an agent token or a workspace admin credential (bearer only)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
from collections.abc import Collection
from typing import Any

from django.contrib.postgres.expressions import ArraySubquery
from django.contrib.postgres.fields import ArrayField
from django.db import DatabaseError, connection
from django.db.models import CharField, OuterRef, Value
from django.utils import timezone

from memadmin.endpoint.partitions import select as namespace_select
from memadmin.lib.bounded import OutOfTime, statements_within
from memadmin.lib.keys import secret_digest
from memadmin.memory.models import AgentToken
from memadmin.providers import contract as c
from memadmin.workspaces.models import AdminCredential, Namespace, Workspace, usable_secrets

LAST_USED_RESOLUTION = dt.timedelta(seconds=60)
MAX_TOKEN_CHARS = 200


@dataclasses.dataclass(frozen=True)
class Caller:
    kind: str  # "agent" or "admin"
    workspace: Workspace
    label: str
    access: str  # "read", "read-write" (agents) or "admin"
    partitions: frozenset[str] = frozenset()
    #: The credential's pk when this request updated its "last used" time, else None.
    touched: Any = None
    #: The partitions looked up with the credential (``authenticate(prefetch=...)``), and the
    #: enabled built-in namespaces of the workspace among them (resource and provider loaded).
    looked_up: frozenset[str] = frozenset()
    namespaces: tuple[Any, ...] = ()

    def known_namespaces(self, partitions: Collection[str]) -> list[Any] | None:
        """The namespaces of ``partitions`` found with the credential, in their order; None
        when some of them were not looked up then."""
        wanted = set(partitions)
        if not wanted <= self.looked_up:
            return None
        return [ns for ns in self.namespaces if ns.partition_key in wanted]

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


def _touch(model: type[Any], pk: Any, last_used: dt.datetime | None) -> bool:
    now = timezone.now()
    if last_used is None or now - last_used > LAST_USED_RESOLUTION:
        model.objects.filter(pk=pk).update(last_used_at=now)
        return True
    return False


def touch_after_failure(caller: Caller) -> None:
    """Record the use of a credential whose request failed (its transaction, which held the
    "last used" update, was rolled back), at most once per LAST_USED_RESOLUTION as always."""
    if caller.touched is None:
        return
    model = AgentToken if caller.is_agent else AdminCredential
    try:
        with statements_within(lambda: 1.0):
            model.objects.filter(pk=caller.touched).update(last_used_at=timezone.now())
    except (OutOfTime, DatabaseError):
        pass  # only a "last used" time: the answer (an error already) must not change


_DIGEST = "\x00digest"  # placeholders of the compiled lookup, replaced on every call
_NOW = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_WORKSPACE_FIELDS = [f.attname for f in Workspace._meta.concrete_fields]


def _lookup_queryset(digest: str, now: dt.datetime) -> Any:
    usable = usable_secrets(now)
    workspace = [f"workspace__{name}" for name in _WORKSPACE_FIELDS]
    partitions = ArraySubquery(Namespace.objects.filter(agent_tokens=OuterRef("pk"))
                               .values("partition_key"))
    agent = (AgentToken.objects.filter(usable, secret_hash=digest)
             .annotate(kind=Value("agent"), parts=partitions)
             .values_list("kind", "pk", "prefix", "access", "last_used_at", "parts",
                          *workspace))
    admin = (AdminCredential.objects.filter(usable, secret_hash=digest)
             .annotate(kind=Value("admin"), grant=Value("admin"),
                       parts=Value(None, output_field=ArrayField(CharField())))
             .values_list("kind", "pk", "prefix", "grant", "last_used_at", "parts",
                          *workspace))
    return agent.union(admin, all=True)


@functools.cache
def _lookup_sql() -> tuple[str, tuple[Any, ...]]:
    """The lookup's statement, compiled by the ORM once a process (its rules stay those of
    ``usable_secrets``); the digest and the time are bound on every call."""
    sql, params = _lookup_queryset(_DIGEST, _NOW).query.sql_with_params()
    if _DIGEST not in params or _NOW not in params:  # pragma: no cover - a changed rule
        raise RuntimeError("the credential lookup no longer takes the digest and the time")
    return sql, tuple(params)


#: The columns of the credential lookup, named for the statement that joins it.
_CALLER = ["kind", "pk", "prefix", "access", "last_used", "parts",
           *(f"w{n}" for n in range(len(_WORKSPACE_FIELDS)))]


@functools.cache
def _lookup_with_namespaces_sql() -> str:
    """The credential lookup, and for the caller found, the enabled built-in namespaces of its
    workspace among some partitions (one more parameter, after the lookup's): each row is the
    credential's columns then one namespace's (NULLs when none matched)."""
    sql, _ = _lookup_sql()
    shape = namespace_select()
    workspace = f"caller.w{_WORKSPACE_FIELDS.index('id')}"
    # Only our own compiled lookup and names from the models' metadata are joined into the text.
    return (f"WITH caller({', '.join(_CALLER)}) AS ({sql}) "  # noqa: S608
            f"SELECT caller.*, ns.* FROM caller "
            f"LEFT JOIN LATERAL ({shape.sql(workspace)}) ns ON true "
            f"ORDER BY {', '.join(f'ns.{column}' for column in shape.order)}")


def _lookup(digest: str, prefetch: frozenset[str] = frozenset()
            ) -> tuple[tuple[Any, ...] | None, list[Any]]:
    """The usable agent token or admin credential with this digest, in one statement (both
    tables and, for a token, its partitions): kind, pk, prefix, access, last used, partitions,
    then the workspace's columns. An agent token wins should both ever match. With
    ``prefetch``, the same statement also finds the enabled built-in namespaces of the
    caller's workspace among those partitions (the second item)."""
    sql, template = _lookup_sql()
    now = timezone.now()
    params: list[Any] = [digest if p == _DIGEST else now if p == _NOW else p
                         for p in template]
    if prefetch:
        sql = _lookup_with_namespaces_sql()
        params.append(list(prefetch))
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if not rows:
        return None, []
    rows.sort(key=lambda row: row[0] != "agent")  # stable: the namespaces keep their order
    width = len(_CALLER)
    caller = tuple(rows[0][:width])
    if not prefetch:
        return caller, []
    shape = namespace_select()
    namespaces = [shape.namespace_of(row[width:]) for row in rows
                  if tuple(row[:2]) == caller[:2] and row[width] is not None]
    return caller, namespaces


def authenticate(header: str | None, *, prefetch: frozenset[str] = frozenset()) -> Caller:
    """The caller behind an ``Authorization: Bearer`` header; AuthFailed for anything else.
    Looked up exactly on every request (a revoked token is refused at once). ``prefetch``:
    partitions whose namespaces to look up in the same statement (``Caller.namespaces``)."""
    digest = secret_digest(_bearer(header))
    # Revoked, expired and suspended tokens all answer the same: unknown.
    row, namespaces = _lookup(digest, prefetch)
    if row is None:
        raise c.AuthFailed("unknown, revoked, expired or suspended token")
    kind, pk, prefix, access, last_used, parts, *columns = row
    workspace = Workspace.from_db("default", _WORKSPACE_FIELDS, columns)
    if kind == "agent":
        touched = pk if _touch(AgentToken, pk, last_used) else None
        return Caller(kind="agent", workspace=workspace, label=f"agent:{prefix}",
                      access=access, partitions=frozenset(parts or ()), touched=touched,
                      looked_up=prefetch, namespaces=tuple(namespaces))
    touched = pk if _touch(AdminCredential, pk, last_used) else None
    return Caller(kind="admin", workspace=workspace, label=f"admin-credential:{prefix}",
                  access="admin", touched=touched, looked_up=prefetch,
                  namespaces=tuple(namespaces))
