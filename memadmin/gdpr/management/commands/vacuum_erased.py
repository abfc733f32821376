"""``manage.py vacuum_erased [--force]``: VACUUM (ANALYZE) the tables erasures touch.

The scheduler runs this hourly when an erasure completed since the last vacuum; run it by hand
after a large erasure, or with ``--force`` at any time. See docs/deploy.md ("Erased data,
VACUUM, WAL and backups").
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from memadmin.gdpr.services import vacuum_after_erasures


class Command(BaseCommand):
    help = "VACUUM (ANALYZE) the tables a completed erasure touched."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--force", action="store_true",
                            help="vacuum even if no erasure completed since the last vacuum")

    def handle(self, *args: Any, **options: Any) -> None:
        result = vacuum_after_erasures(force=options["force"])
        if "skipped" in result:
            self.stdout.write(f"skipped: {result['skipped']}")
        else:
            self.stdout.write("vacuumed: " + (", ".join(result["vacuumed"]) or "none"))
        if result.get("not_permitted"):
            raise CommandError("not vacuumed (this database role does not own them): "
                               + ", ".join(result["not_permitted"]))
