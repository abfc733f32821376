import memadmin.lib.crypto
from django.db import migrations


def encrypt_clear_credentials(apps, schema_editor):
    # Raw SQL: the historical model's field would try to decrypt the clear values it reads.
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT id, credential FROM providers_providerconfig "
                       "WHERE credential <> ''")
        rows = cursor.fetchall()
        for pk, value in rows:
            if memadmin.lib.crypto.is_token(value):
                continue
            cursor.execute("UPDATE providers_providerconfig SET credential = %s WHERE id = %s",
                           [memadmin.lib.crypto.encrypt(value), pk])


class Migration(migrations.Migration):

    dependencies = [
        ('providers', '0002_initial'),
    ]

    operations = [
        migrations.AlterField(
            model_name='providerconfig',
            name='credential',
            field=memadmin.lib.crypto.EncryptedTextField(blank=True),
        ),
        migrations.RunPython(encrypt_clear_credentials, migrations.RunPython.noop),
    ]
