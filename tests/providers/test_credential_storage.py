"""Provider credentials are encrypted at rest (MultiFernet under MEMADMIN_ENCRYPTION_KEYS)."""

from __future__ import annotations

import pytest
from cryptography.fernet import Fernet
from django.core.management import call_command
from django.db import connection

from memadmin.audit.services import Actor
from memadmin.lib import crypto
from memadmin.providers.models import ProviderConfig
from memadmin.providers.services import provider_config_create, provider_config_update

pytestmark = pytest.mark.django_db
SECRET = "clear-credential-0123456789-never-stored"


def _column(config: ProviderConfig) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT credential FROM providers_providerconfig WHERE id = %s",
                       [config.pk])
        return str(cursor.fetchone()[0])


@pytest.fixture
def remote(workspace):
    return provider_config_create(actor=Actor.system("t"), workspace=workspace, slug="remote",
                                  name="Remote", kind="http", credential=SECRET,
                                  url="https://memory.example.com/oc-memory")


def test_it_never_stores_the_clear_credential(remote) -> None:
    stored = _column(remote)

    assert SECRET not in stored and stored.startswith(crypto.TOKEN_PREFIX)
    assert ProviderConfig.objects.get(pk=remote.pk).credential == SECRET


def test_it_encrypts_a_changed_credential_too(remote) -> None:
    provider_config_update(actor=Actor.system("t"), config=remote, credential="other-" + SECRET)

    assert "other-" not in _column(remote)
    assert ProviderConfig.objects.get(pk=remote.pk).credential == "other-" + SECRET


def test_it_keeps_no_credential_as_an_empty_column(workspace) -> None:
    config = provider_config_create(actor=Actor.system("t"), workspace=workspace, slug="bare",
                                    name="Bare", kind="http", credential="",
                                    url="https://memory.example.com/oc-memory")

    assert _column(config) == ""


def test_it_reencrypts_every_secret_under_the_newest_key(remote, settings) -> None:
    old_token = _column(remote)
    new_key = Fernet.generate_key().decode()
    settings.MEMADMIN_ENCRYPTION_KEYS = {"new": new_key, **settings.MEMADMIN_ENCRYPTION_KEYS}

    call_command("reencrypt_secrets", verbosity=0)

    token = _column(remote)
    assert token != old_token and SECRET not in token
    assert Fernet(new_key.encode()).decrypt(token.encode()).decode() == SECRET
    settings.MEMADMIN_ENCRYPTION_KEYS = {"new": new_key}  # the old key can now go
    assert ProviderConfig.objects.get(pk=remote.pk).credential == SECRET


def test_a_token_under_an_unknown_key_is_refused_not_passed_on(remote, settings) -> None:
    settings.MEMADMIN_ENCRYPTION_KEYS = {"other": Fernet.generate_key().decode()}

    with pytest.raises(crypto.DecryptionFailed):
        ProviderConfig.objects.get(pk=remote.pk)


def test_the_functions_round_trip_and_never_repeat_a_token() -> None:
    first, second = crypto.encrypt("connection string"), crypto.encrypt("connection string")

    assert first != second
    assert crypto.decrypt(first) == crypto.decrypt(second) == "connection string"


def test_the_data_migration_encrypts_clear_values(remote) -> None:
    import importlib

    from django.apps import apps

    migration = importlib.import_module(
        "memadmin.providers.migrations.0003_creds_encrypt_credential")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE providers_providerconfig SET credential = %s WHERE id = %s",
                       [SECRET, remote.pk])

    migration.encrypt_clear_credentials(apps, connection.schema_editor())

    assert SECRET not in _column(remote)
    assert ProviderConfig.objects.get(pk=remote.pk).credential == SECRET
