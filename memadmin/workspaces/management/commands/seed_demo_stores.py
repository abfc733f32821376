"""Add the demo's governed stores to workspace acme: a Markdown memory folder under
``var/stores`` and a LangGraph store in a database of its own on the same PostgreSQL (skipped
when the ``langgraph`` extra is not installed). Run after ``seed_demo``; idempotent."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from memadmin.audit.services import Actor
from memadmin.demo.stores import seed_stores
from memadmin.workspaces.models import Workspace


class Command(BaseCommand):
    help = "Add a Markdown folder and a LangGraph store to the demo workspace (idempotent)."

    def handle(self, *args: Any, **options: Any) -> None:
        workspace = Workspace.objects.filter(slug="acme").first()
        if workspace is None:
            raise CommandError("run seed_demo first: workspace acme does not exist")
        created: list[str] = []
        seed_stores(workspace, Actor.system("seed_demo"), created)
        self.stdout.write("Governed stores: " + (", ".join(created) if created
                                                 else "already present"))
