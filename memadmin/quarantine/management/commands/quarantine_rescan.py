"""Rescan a workspace's memory after a rule change: ``quarantine_rescan acme [--wait]``."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memadmin.audit.services import Actor
from memadmin.jobs import runner
from memadmin.jobs.models import Job
from memadmin.quarantine.scanner import RULESET_VERSION
from memadmin.quarantine.services import quarantine_rescan_start
from memadmin.workspaces.models import Workspace


class Command(BaseCommand):
    help = ("Rescan every item of a workspace's built-in stores with the current scanner rules, "
            "as a job; prints how many verdicts changed when run with --wait.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("workspace", help="workspace slug")
        parser.add_argument("--wait", action="store_true",
                            help="run the job in this process and print its result")

    def handle(self, *args: Any, **options: Any) -> None:
        workspace = Workspace.objects.filter(slug=options["workspace"]).first()
        if workspace is None:
            raise CommandError(f"no workspace {options['workspace']!r}")
        job = quarantine_rescan_start(actor=Actor.system("quarantine_rescan command"),
                                      workspace=workspace)
        self.stdout.write(f"rescan job {job.pk} with rule set {RULESET_VERSION}")
        if not options["wait"]:
            return
        outcome = runner.run_job(str(job.pk))
        job = Job.objects.get(pk=job.pk)
        if job.state != "succeeded":
            raise CommandError(f"the rescan job is {job.state} ({outcome}): {job.error}")
        self.stdout.write(json.dumps(job.result, sort_keys=True))
