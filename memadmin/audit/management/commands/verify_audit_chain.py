"""Verify the audit hash chains; exits non-zero and names the first broken link."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memadmin.audit.models import GLOBAL_CHAIN, AuditChainHead
from memadmin.audit.services import verify_chain
from memadmin.workspaces.models import Workspace


class Command(BaseCommand):
    help = "Verify every audit chain (or one workspace's) and report the first broken link."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", help="slug of one workspace to check")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["workspace"]:
            workspace = Workspace.objects.filter(slug=options["workspace"]).first()
            if workspace is None:
                raise CommandError(f"no workspace {options['workspace']!r}")
            chains = [str(workspace.pk)]
        else:
            chains = list(AuditChainHead.objects.values_list("chain", flat=True).order_by("chain"))
        names = {str(pk): slug for pk, slug in Workspace.objects.values_list("pk", "slug")}
        names[GLOBAL_CHAIN] = "(global)"
        broken = 0
        for chain in chains:
            report = verify_chain(chain)
            label = names.get(chain, chain)
            if report.ok:
                self.stdout.write(f"{label}: ok, {report.checked} events")
            else:
                broken += 1
                self.stdout.write(f"{label}: BROKEN at event {report.broken_at}: {report.problem}")
        if broken:
            raise CommandError(f"{broken} audit chain(s) broken")
