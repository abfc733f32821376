"""Add the demo's operations picture to workspace acme: remote providers (one this memadmin's
own endpoint, one unreachable, one in maintenance) and a week of health history. Run after
``seed_demo``; idempotent."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from memadmin.audit.services import Actor
from memadmin.demo.health import seed_health
from memadmin.workspaces.models import Workspace


class Command(BaseCommand):
    help = "Add remote providers and a week of health history to the demo (idempotent)."

    def handle(self, *args: Any, **options: Any) -> None:
        workspace = Workspace.objects.filter(slug="acme").first()
        if workspace is None:
            raise CommandError("run seed_demo first: workspace acme does not exist")
        created: list[str] = []
        written = seed_health(workspace, Actor.system("seed_demo"), created)
        self.stdout.write(f"Health demo: {', '.join(created) or 'providers present'}; "
                          f"{written} checks of history written")
