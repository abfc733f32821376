"""Verify the audit hash chains; exits non-zero and names the first broken link of each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memadmin.audit.anchors import (
    BadCheckpoint,
    anchored_chains,
    latest_checkpoint,
    read_checkpoint_file,
)
from memadmin.audit.models import GLOBAL_CHAIN
from memadmin.audit.services import known_chains, verify_chain
from memadmin.workspaces.models import Workspace


class Command(BaseCommand):
    help = ("Verify every audit chain (every workspace's, the global one, any other chain found "
            "on events, and any chain with checkpoints in storage), or one workspace's, against "
            "the last signed checkpoint; report the first missing, altered, reordered or "
            "foreign event.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", help="slug of one workspace to check")
        parser.add_argument(
            "--checkpoint", type=Path,
            help="a file of signed checkpoints (JSON or JSON Lines, as the anchor job writes "
                 "them) to compare with, instead of the last ones in storage")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["workspace"]:
            workspace = Workspace.objects.filter(slug=options["workspace"]).first()
            if workspace is None:
                raise CommandError(f"no workspace {options['workspace']!r}")
            chains = [str(workspace.pk)]
        else:
            chains = sorted(set(known_chains()) | set(anchored_chains()))
        given: dict[str, Any] | None = None
        if options["checkpoint"] is not None:
            try:
                given = read_checkpoint_file(options["checkpoint"])
            except OSError as exc:
                raise CommandError(f"cannot read the checkpoint file: {exc.strerror}") from None
            except BadCheckpoint as exc:
                raise CommandError(str(exc)) from None
            chains = sorted(set(chains) | (set(given) if not options["workspace"] else set()))
        names = {str(pk): slug for pk, slug in Workspace.objects.values_list("pk", "slug")}
        names[GLOBAL_CHAIN] = "(global)"
        broken = 0
        for chain in chains:
            label = names.get(chain, f"chain {chain}")
            try:
                anchor = given.get(chain) if given is not None else latest_checkpoint(chain)
            except BadCheckpoint as exc:
                broken += 1
                self.stdout.write(f"{label}: BROKEN: {exc}")
                continue
            report = verify_chain(chain, anchor=anchor)
            if report.ok:
                anchored = f", checkpoint of {anchor.at} holds" if anchor else ""
                self.stdout.write(f"{label}: ok, {report.checked} events{anchored}")
            else:
                broken += 1
                event = f" (event id {report.event_id})" if report.event_id else ""
                self.stdout.write(f"{label}: BROKEN at event {report.broken_at}{event}: "
                                  f"{report.problem}")
        if broken:
            raise CommandError(f"{broken} audit chain(s) broken")
