"""The quarantine state per revision (issue 14 finding 2).

Existing revisions get ``clear``, except those whose content is a version the scanner flagged
(the content hash of a review entry that was never released): those become ``pending``, so a
version withheld before this migration stays withheld.
"""

import hashlib

from django.db import migrations, models


def mark_flagged_revisions(apps, schema_editor):
    revision_model = apps.get_model("memory", "MemoryRevision")
    entry_model = apps.get_model("quarantine", "QuarantineEntry")
    flagged: dict[object, set[str]] = {}
    entries = (entry_model.objects.filter(item__isnull=False)
               .exclude(state="released").exclude(content_hash="")
               .values_list("item_id", "content_hash"))
    for item_id, digest in entries.iterator():
        flagged.setdefault(item_id, set()).add(digest)
    for item_id, digests in flagged.items():
        for pk, content in (revision_model.objects.filter(item_id=item_id)
                            .values_list("pk", "content")):
            if hashlib.sha256(content.encode("utf-8")).hexdigest() in digests:
                revision_model.objects.filter(pk=pk).update(quarantine_state="pending")


class Migration(migrations.Migration):

    dependencies = [
        ("memory", "0002_initial"),
        ("quarantine", "0003_review_states"),
    ]

    operations = [
        migrations.AddField(
            model_name="memoryrevision",
            name="quarantine_state",
            field=models.CharField(choices=[("clear", "clear"), ("pending", "pending"),
                                            ("released", "released")],
                                   default="clear", max_length=10),
        ),
        migrations.AddConstraint(
            model_name="memoryrevision",
            constraint=models.CheckConstraint(
                condition=models.Q(("quarantine_state__in", ("clear", "pending", "released"))),
                name="memoryrevision_quarantine_state"),
        ),
        migrations.RunPython(mark_flagged_revisions, migrations.RunPython.noop),
    ]
