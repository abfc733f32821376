"""Indexes for the audit pages' keyset reads: (created_at, id) order under each filter."""

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0003_append_only'),
        ('workspaces', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='auditevent',
            name='audit_recent',
        ),
        migrations.RemoveIndex(
            model_name='auditevent',
            name='audit_by_action',
        ),
        migrations.AddIndex(
            model_name='auditevent',
            index=models.Index(fields=['workspace', '-created_at', '-id'], name='audit_recent'),
        ),
        migrations.AddIndex(
            model_name='auditevent',
            index=models.Index(fields=['workspace', 'action', '-created_at', '-id'], name='audit_by_action'),
        ),
        migrations.AddIndex(
            model_name='auditevent',
            index=models.Index(fields=['workspace', 'actor_label', '-created_at', '-id'], name='audit_by_actor'),
        ),
    ]
