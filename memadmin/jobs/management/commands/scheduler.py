"""Run periodic work (job reaper, heartbeats, expiry) until stopped."""

from __future__ import annotations

import signal
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from memadmin.jobs import runner, scheduler


class Command(BaseCommand):
    help = "Run memadmin's periodic work: reap jobs, heartbeats, expiry (one active at a time)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--once", action="store_true",
                            help="run every duty once and exit (cron-style)")
        parser.add_argument("--tick", type=float, default=1.0)

    def handle(self, *args: Any, **options: Any) -> None:
        duties = scheduler.default_duties()
        if options["once"]:
            runner.beat("scheduler")
            scheduler.run_due(duties, now=float("inf"))
            return
        stopping = False

        def stop(*_: object) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        self.stdout.write("scheduler: waiting for the scheduler lock")
        scheduler.run_forever(duties, tick=options["tick"], should_stop=lambda: stopping)
