"""Alert targets are credentials (a webhook or Apprise URL carries the channel's token): the
column now holds a Fernet token, pages show a masked form, uniqueness goes by a digest."""

from typing import Any

from django.db import migrations, models

import memadmin.lib.crypto


def encrypt_targets(apps: Any, schema_editor: Any) -> None:
    from memadmin.lib.crypto import encrypt, is_token
    from memadmin.workspaces.models import alert_target_digest, alert_target_display

    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT id, kind, target FROM workspaces_alerttarget")
        for row_id, kind, target in cursor.fetchall():
            if is_token(target):
                continue
            cursor.execute(
                "UPDATE workspaces_alerttarget SET target = %s, target_digest = %s, "
                "target_display = %s WHERE id = %s",
                [encrypt(target), alert_target_digest(kind, target),
                 alert_target_display(kind, target)[:1000], row_id])


def decrypt_targets(apps: Any, schema_editor: Any) -> None:
    from memadmin.lib.crypto import decrypt, is_token

    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT id, target FROM workspaces_alerttarget")
        for row_id, target in cursor.fetchall():
            if is_token(target):
                cursor.execute("UPDATE workspaces_alerttarget SET target = %s WHERE id = %s",
                               [decrypt(target)[:1000], row_id])


class Migration(migrations.Migration):

    dependencies = [
        ("workspaces", "0005_resource_personal_data_policy"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="alerttarget", name="alert_target_unique"),
        migrations.AddField(
            model_name="alerttarget", name="target_digest",
            field=models.CharField(default="", editable=False, max_length=64),
            preserve_default=False),
        migrations.AddField(
            model_name="alerttarget", name="target_display",
            field=models.CharField(default="", editable=False, max_length=1000),
            preserve_default=False),
        migrations.AlterField(
            model_name="alerttarget", name="target",
            field=memadmin.lib.crypto.EncryptedTextField(
                help_text="An Apprise URL (slack://, msteams://, discord://, pagerduty://, "
                          "opsgenie://, ntfy://, tgram://, mailto://, json:// …), a webhook "
                          "URL or an email address.")),
        migrations.RunPython(encrypt_targets, decrypt_targets),
        migrations.AddConstraint(
            model_name="alerttarget",
            constraint=models.UniqueConstraint(
                fields=("workspace", "kind", "target_digest"), name="alert_target_unique_digest",
                violation_error_message="This alert target already exists in the workspace.")),
    ]
