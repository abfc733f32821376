"""Seed the demo: users, two workspaces of agent memory, and optionally a bulk load.

Idempotent: a second run creates nothing and bumps no revision (it only resets the demo users'
passwords to ``MEMADMIN_DEMO_PASSWORD``). ``--items N`` appends N synthetic items to
acme / bulk / load for benchmarks, with COPY.
"""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memadmin.demo import seed as demo


class Command(BaseCommand):
    help = "Create the demo users and workspaces (idempotent); --items N bulk-loads N items."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--items", type=int, default=0, metavar="N",
            help="also append N synthetic items to acme/bulk/load (for benchmarks)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        password = settings.MEMADMIN_DEMO_PASSWORD
        if not password:
            raise CommandError("set MEMADMIN_DEMO_PASSWORD to seed demo users")
        count = options["items"]
        if count < 0:
            raise CommandError("--items must be zero or more")

        users = demo.ensure_users(password)
        result = demo.seed()
        granted = demo.grant_demo_roles(result.workspaces, users)

        self.stdout.write("Workspaces: " + ", ".join(
            f"{w.slug} ({w.name})" for w in result.workspaces))
        if result.created:
            self.stdout.write(f"Created {len(result.created)} objects: "
                              + ", ".join(result.created))
        not_restored = (f", {result.not_restored} not restored (deleted, frozen or erased "
                        "since an earlier run)" if result.not_restored else "")
        if granted:
            self.stdout.write(f"Granted {granted} demo roles (operator, owner, compliance, "
                              "compliance2, viewer)")
        self.stdout.write(f"Items: {result.written} written, {result.skipped} skipped "
                          f"(already present){not_restored}")

        if count:
            self.stdout.write(f"Bulk-loading {count:,} items into "
                              f"{demo.BULK_WORKSPACE}/{demo.BULK_RESOURCE}/{demo.BULK_NAMESPACE}")
            bulk = demo.bulk_load(count, progress=self.stdout.write)
            self.stdout.write(
                f"Loaded {bulk.rows:,} items ({bulk.first_key} .. {bulk.last_key}) in "
                f"{bulk.load_seconds:.1f} s: {bulk.rows_per_second:,.0f} rows/s"
            )
            if bulk.vacuum_seconds is None:
                self.stdout.write("VACUUM skipped: running inside a transaction; run "
                                  "VACUUM (ANALYZE) memory_memoryitem before benchmarking")
            else:
                self.stdout.write(f"VACUUM (ANALYZE) took {bulk.vacuum_seconds:.1f} s")

        self.stdout.write(self.style.SUCCESS(
            f"Log in at http://{os.environ.get('RUN_ADDR') or '127.0.0.1:8000'}/ as admin / "
            f"{password}"))
        self.stdout.write("Demo users (same password): "
                          + ", ".join(user.get_username() for user in users))
