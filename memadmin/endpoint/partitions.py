"""The namespaces a wire request names, with their resource and provider, by a statement built
once a process.

The ORM spent ~1 ms a request compiling the same ``select_related`` query (more than the
statement itself); the text below is the same join, written from the models' own field lists,
and the rows become model instances the way the ORM makes them (``from_db``, each column's
converters: JSON fields decoded, encrypted fields decrypted). The credential lookup
(``endpoint.auth``) joins the same select, so most requests find their namespaces in the
statement that authenticates them.
"""

from __future__ import annotations

import functools
import re
import uuid
from collections.abc import Callable, Collection, Sequence
from typing import Any

from django.db import connection
from django.db.models import Model

from memadmin.providers.models import ProviderConfig
from memadmin.workspaces.models import Namespace, Resource

Converter = Callable[[Any, Any, Any], Any]

#: At most this many partitions are looked up with the credential (a larger scope is looked
#: up on its own, once the request is checked).
PREFETCH_MAX = 64
#: What a partition key can be (the namespace table's check constraint): anything else is not
#: sent with the credential lookup (it cannot match, and it is not checked yet).
_KEY = re.compile(r"[A-Za-z0-9_.:-]{1,200}")


class _Reader:
    """One model's columns in a joined row: where they start, their attnames, and the
    converters (by position) the ORM would apply to them."""

    def __init__(self, model: type[Model], alias: str, start: int) -> None:
        fields = model._meta.concrete_fields
        self.model, self.start, self.stop = model, start, start + len(fields)
        self.attnames = [f.attname for f in fields]
        quote = connection.ops.quote_name
        # Each column named after its position: the select can sit inside another one.
        self.columns = [f"{alias}.{quote(str(f.column))} AS ns_{start + index}"
                        for index, f in enumerate(fields)]
        self.converters: list[tuple[int, Any, list[Converter]]] = []
        for index, field in enumerate(fields):
            column = field.get_col(alias)
            found = (connection.ops.get_db_converters(column)
                     + column.get_db_converters(connection))
            if found:
                self.converters.append((index, column, found))

    def instance(self, row: Sequence[Any]) -> Any:
        values = list(row[self.start:self.stop])
        for index, column, converters in self.converters:
            for convert in converters:
                values[index] = convert(values[index], column, connection)
        return self.model.from_db(connection.alias, self.attnames, values)


class _Select:
    """``SELECT <namespace, resource, provider columns> FROM ... WHERE`` the partitions (a
    parameter) in a workspace (an SQL expression), enabled built-in stores only; ``order``
    orders by Namespace's ordering (slug), with the id to break ties."""

    def __init__(self) -> None:
        self.namespace = _Reader(Namespace, "n", 0)
        self.resource = _Reader(Resource, "r", self.namespace.stop)
        self.provider = _Reader(ProviderConfig, "p", self.resource.stop)
        self.width = self.provider.stop
        quote = connection.ops.quote_name

        def column(model: type[Model], name: str) -> str:
            field = next(f for f in model._meta.concrete_fields if f.name == name)
            return quote(str(field.column))

        # Only names from the models' own metadata are joined into the text.
        self._text = (
            f"SELECT {', '.join(self.namespace.columns + self.resource.columns)}, "  # noqa: S608
            f"{', '.join(self.provider.columns)} "
            f"FROM {quote(Namespace._meta.db_table)} n "
            f"JOIN {quote(Resource._meta.db_table)} r "
            f"ON r.{column(Resource, 'id')} = n.{column(Namespace, 'resource')} "
            f"JOIN {quote(ProviderConfig._meta.db_table)} p "
            f"ON p.{column(ProviderConfig, 'id')} = r.{column(Resource, 'provider')} "
            f"WHERE n.{column(Namespace, 'partition_key')} = ANY(%s) "
            f"AND r.{column(Resource, 'workspace')} = {{workspace}} "
            f"AND p.{column(ProviderConfig, 'kind')} = 'local' "
            f"AND p.{column(ProviderConfig, 'enabled')}"
        )
        fields = [f.attname for f in Namespace._meta.concrete_fields]
        self.order = (f"ns_{fields.index('slug')}", f"ns_{fields.index('id')}")

    def sql(self, workspace: str) -> str:
        """The select, its workspace given by the SQL expression ``workspace`` (a fixed text
        of ours: ``%s``, or a column of an enclosing query)."""
        return self._text.replace("{workspace}", workspace)

    def namespace_of(self, row: Sequence[Any]) -> Namespace:
        """The namespace of one row (the select's columns, from the first), with its resource
        and the resource's provider loaded, as ``select_related`` loads them."""
        ns = self.namespace.instance(row)
        resource = self.resource.instance(row)
        resource.provider = self.provider.instance(row)
        ns.resource = resource
        return ns


@functools.cache
def select() -> _Select:
    return _Select()


@functools.cache
def _statement() -> str:
    shape = select()
    # Only names from the models' own metadata are joined into the text; the partitions and
    # the workspace are parameters.
    return f"{shape.sql('%s')} ORDER BY {', '.join(shape.order)}"


def prefetchable(body: object) -> frozenset[str]:
    """The partitions an unchecked request body names (``partition`` and
    ``scope.partitions``), to look up with its credential; empty when there are none or they
    are too many (each in the form of a partition key, or left out)."""
    if not isinstance(body, dict):
        return frozenset()
    names: list[object] = [body.get("partition")]
    scope = body.get("scope")
    if isinstance(scope, dict) and isinstance(scope.get("partitions"), list):
        names += scope["partitions"][:PREFETCH_MAX + 1]
    found = frozenset(n for n in names if isinstance(n, str) and _KEY.fullmatch(n))
    return found if len(found) <= PREFETCH_MAX else frozenset()


def local_namespaces(partitions: Collection[str], workspace_id: uuid.UUID) -> list[Namespace]:
    """The namespaces of these partitions in this workspace whose provider is an enabled
    built-in store, ordered by slug, each with ``resource`` and ``resource.provider`` loaded
    (what ``Namespace.objects.filter(partition_key__in=..., resource__workspace=...,
    resource__provider__kind="local", resource__provider__enabled=True)
    .select_related("resource__provider")`` gives). Partitions that match nothing are
    simply absent."""
    shape = select()
    with connection.cursor() as cursor:
        cursor.execute(_statement(), [list(partitions), workspace_id])
        rows = cursor.fetchall()
    return [shape.namespace_of(row) for row in rows]
