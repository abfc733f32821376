"""Key the audit chain: each event records the key id of its HMAC (memadmin/audit/services.py).

Existing events keep their plain SHA-256 (``key_id`` empty) and verify as such; they are not
re-chained, since rewriting the evidence would also erase any tampering done before. Instead
each chain that has events gets one keyed ``audit.keyed`` event, whose HMAC covers the last
unkeyed hash: the unkeyed prefix can no longer be rewritten without breaking that link.

Also: the chain head may only advance by one (so a role that may UPDATE it, to append, cannot
move it back), and neither the events nor the heads may be deleted row by row.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations, models
from django.utils import timezone

HEAD_SQL = """
CREATE OR REPLACE FUNCTION audit_auditchainhead_advance_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' OR NEW.chain <> OLD.chain OR NEW.seq <> OLD.seq + 1 THEN
        RAISE EXCEPTION 'an audit chain head only advances by one (% refused)', TG_OP
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER audit_auditchainhead_advance_only
    BEFORE UPDATE OR DELETE ON audit_auditchainhead
    FOR EACH ROW EXECUTE FUNCTION audit_auditchainhead_advance_only();
"""

HEAD_REVERSE = """
DROP TRIGGER IF EXISTS audit_auditchainhead_advance_only ON audit_auditchainhead;
DROP FUNCTION IF EXISTS audit_auditchainhead_advance_only();
"""


def seal_unkeyed_chains(apps: Any, schema_editor: Any) -> None:
    from memadmin.audit.services import active_audit_key_id, event_hash

    AuditEvent = apps.get_model("audit", "AuditEvent")
    AuditChainHead = apps.get_model("audit", "AuditChainHead")
    key_id = active_audit_key_id()
    for head in AuditChainHead.objects.select_for_update().order_by("chain"):
        last = AuditEvent.objects.filter(chain=head.chain).order_by("-seq").first()
        if last is None or last.key_id:
            continue
        event = AuditEvent(
            chain=head.chain, seq=head.seq + 1, workspace_id=last.workspace_id, actor_id=None,
            actor_label="memadmin migration", action="audit.keyed", target_type="", target_id="",
            data={"unkeyed_events": head.seq}, created_at=timezone.now(), prev_hash=head.hash,
            key_id=key_id)
        event.hash = event_hash(event)
        event.save(force_insert=True)
        head.seq, head.hash = event.seq, event.hash
        head.save(update_fields=["seq", "hash"])


class Migration(migrations.Migration):
    dependencies = [("audit", "0004_audit_page_indexes")]
    operations = [
        migrations.AddField(
            model_name="auditevent",
            name="key_id",
            field=models.CharField(blank=True, default="", max_length=40),
        ),
        migrations.RunSQL(HEAD_SQL, HEAD_REVERSE),
        migrations.RunPython(seal_unkeyed_chains, migrations.RunPython.noop),
    ]
