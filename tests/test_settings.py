"""Settings come from the environment, fail loudly, and pass Django's deployment checks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, cast
from urllib.parse import quote, urlencode

import pytest
from django.conf import settings
from django.core.management.utils import get_random_secret_key

from memadmin.lib.env import (
    ImproperlyConfiguredEnv,
    database_from_url,
    envbool,
    envint,
    envkeys,
    envlist,
    envstr,
)

BASE_DIR = Path(__file__).resolve().parent.parent
SECRET_32 = "s" * 32
FERNET_KEY = "mKb6yq3YhW1L8eB0n9m4kJ0fX4b2cR9sV7tQ1uZ5aE8="


def database_url() -> str:
    """The test database as a DATABASE_URL (a socket directory goes in ``?host=``)."""
    db = settings.DATABASES["default"]
    auth = quote(str(db["USER"]), safe="")
    if db["PASSWORD"]:
        auth += ":" + quote(str(db["PASSWORD"]), safe="")
    host, port = str(db["HOST"]), str(db["PORT"])
    options = cast(dict[str, Any], db.get("OPTIONS", {}))
    query = {key: str(value) for key, value in options.items() if key == "sslmode"}
    if host.startswith("/"):
        query["host"] = host
        host = ""
    netloc = (f"{auth}@" if auth else "") + host + (f":{port}" if port else "")
    url = f"postgresql://{netloc}/{quote(str(db['NAME']), safe='')}"
    return f"{url}?{urlencode(query)}" if query else url


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run manage.py in a process that sees only ``env`` plus PATH and HOME."""
    clean_env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/"), **env}
    return subprocess.run(
        [sys.executable, str(BASE_DIR / "manage.py"), *args],
        cwd=BASE_DIR,
        env=clean_env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


# --- the settings module, started the way production starts it ------------------------------


def test_it_builds_a_database_url_that_round_trips() -> None:
    db = settings.DATABASES["default"]
    parsed = database_from_url(database_url())

    for key in ("NAME", "USER", "PASSWORD", "HOST", "PORT"):
        assert parsed[key] == db[key], key


def test_it_passes_the_deployment_checks_without_warnings() -> None:
    result = manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        env={
            "DEBUG": "false",
            "SECRET_KEY": get_random_secret_key(),
            "ALLOWED_HOSTS": "memadmin.example.com",
            "DATABASE_URL": database_url(),
            "MEMADMIN_SIGNING_KEYS": "s1:" + "a" * 40,
            "MEMADMIN_HASHING_KEYS": "h1:" + "b" * 40,
            "MEMADMIN_ENCRYPTION_KEYS": f"k1:{FERNET_KEY}",
            "MEMADMIN_AUDIT_KEYS": "a1:" + "c" * 40,
        },
    )
    output = result.stdout + result.stderr

    assert result.returncode == 0, output
    assert "WARNING" not in output.upper(), output
    assert "System check identified no issues" in output, output


@pytest.mark.parametrize("debug", [{"DEBUG": "false"}, {}], ids=["debug-false", "debug-unset"])
def test_it_refuses_to_start_without_a_secret_key_when_debug_is_off(
    debug: dict[str, str],
) -> None:
    result = manage("check", env={**debug, "DATABASE_URL": database_url()})

    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr, result.stderr


@pytest.mark.parametrize("missing", ["MEMADMIN_SIGNING_KEYS", "MEMADMIN_HASHING_KEYS"])
def test_it_refuses_to_start_without_signing_and_hashing_keys_when_debug_is_off(
    missing: str,
) -> None:
    keys = {"MEMADMIN_SIGNING_KEYS": "s1:" + "a" * 40, "MEMADMIN_HASHING_KEYS": "h1:" + "b" * 40}
    del keys[missing]
    result = manage("check", env={"DEBUG": "false", "SECRET_KEY": get_random_secret_key(),
                                  "ALLOWED_HOSTS": "memadmin.example.com",
                                  "DATABASE_URL": database_url(), **keys})

    assert result.returncode != 0
    assert f"{missing} is required when DEBUG is off" in result.stderr, result.stderr
#: The keys production needs besides the one a test leaves out.
OTHER_KEYS = {"MEMADMIN_SIGNING_KEYS": "s1:" + "a" * 40, "MEMADMIN_HASHING_KEYS": "h1:" + "b" * 40,
              "MEMADMIN_AUDIT_KEYS": "a1:" + "c" * 40}


def test_it_refuses_to_start_without_encryption_keys_when_debug_is_off() -> None:
    result = manage("check", env={"DEBUG": "false", "SECRET_KEY": get_random_secret_key(),
                                  "ALLOWED_HOSTS": "memadmin.example.com",
                                  "DATABASE_URL": database_url(), **OTHER_KEYS})

    assert result.returncode != 0
    assert "MEMADMIN_ENCRYPTION_KEYS is required" in result.stderr, result.stderr


def test_it_reads_the_encryption_keys_from_a_file_and_refuses_a_bad_key(tmp_path: Path) -> None:
    key_file = tmp_path / "keys"
    key_file.write_text(f"k2:{FERNET_KEY}\n", encoding="utf-8")
    base = {"DEBUG": "false", "SECRET_KEY": get_random_secret_key(),
            "ALLOWED_HOSTS": "memadmin.example.com", "DATABASE_URL": database_url(),
            **OTHER_KEYS}

    good = manage("check", env={**base, "MEMADMIN_ENCRYPTION_KEYS_FILE": str(key_file)})
    bad = manage("check", env={**base, "MEMADMIN_ENCRYPTION_KEYS": "k1:" + "x" * 40})

    assert good.returncode == 0, good.stderr
    assert bad.returncode != 0 and "not a Fernet key" in bad.stderr, bad.stderr
    assert "x" * 40 not in bad.stderr
def test_it_refuses_to_start_without_audit_keys_when_debug_is_off() -> None:
    keys = {k: v for k, v in OTHER_KEYS.items() if k != "MEMADMIN_AUDIT_KEYS"}
    result = manage("check", env={"DEBUG": "false", "SECRET_KEY": get_random_secret_key(),
                                  "ALLOWED_HOSTS": "memadmin.example.com",
                                  "DATABASE_URL": database_url(), **keys})

    assert result.returncode != 0
    assert "MEMADMIN_AUDIT_KEYS is required" in result.stderr, result.stderr


def test_it_reads_the_audit_keys_from_a_file(tmp_path: Path) -> None:
    keys = tmp_path / "audit-keys"
    keys.write_text("new:" + "n" * 40 + ",old:" + "o" * 40 + "\n")
    result = manage("shell", "-c", "from django.conf import settings as s; "
                    "print(list(s.MEMADMIN_AUDIT_KEYS))",
                    env={"DEBUG": "false", "SECRET_KEY": get_random_secret_key(),
                         "ALLOWED_HOSTS": "memadmin.example.com", "DATABASE_URL": database_url(),
                         "MEMADMIN_SIGNING_KEYS": OTHER_KEYS["MEMADMIN_SIGNING_KEYS"],
                         "MEMADMIN_HASHING_KEYS": OTHER_KEYS["MEMADMIN_HASHING_KEYS"],
                         "MEMADMIN_ENCRYPTION_KEYS": f"k1:{FERNET_KEY}",
                         "MEMADMIN_AUDIT_KEYS_FILE": str(keys)})

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "['new', 'old']"


def test_debug_derives_a_demo_audit_key_from_the_secret_key() -> None:
    assert list(settings.MEMADMIN_AUDIT_KEYS) == ["demo"]


# --- memadmin.lib.env ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("1", True), ("true", True), ("Yes", True), (" on ", True),
     ("0", False), ("FALSE", False), ("no", False), ("off", False)],
)
def test_it_reads_booleans(monkeypatch: pytest.MonkeyPatch, raw: str, expected: bool) -> None:
    monkeypatch.setenv("MEMADMIN_TEST_FLAG", raw)

    assert envbool("MEMADMIN_TEST_FLAG", not expected) is expected


@pytest.mark.parametrize("raw", [None, ""])
def test_it_uses_the_boolean_default_when_unset_or_empty(
    monkeypatch: pytest.MonkeyPatch, raw: str | None
) -> None:
    monkeypatch.delenv("MEMADMIN_TEST_FLAG", raising=False)
    if raw is not None:
        monkeypatch.setenv("MEMADMIN_TEST_FLAG", raw)

    assert envbool("MEMADMIN_TEST_FLAG", True) is True


def test_it_rejects_a_boolean_it_cannot_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMADMIN_TEST_FLAG", "maybe")

    with pytest.raises(ImproperlyConfiguredEnv, match="MEMADMIN_TEST_FLAG must be true or false"):
        envbool("MEMADMIN_TEST_FLAG")


def test_it_reads_an_integer_at_its_minimum(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMADMIN_TEST_INT", "60")

    assert envint("MEMADMIN_TEST_INT", 5, minimum=60) == 60


def test_it_rejects_an_integer_below_its_minimum(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMADMIN_TEST_INT", "59")

    with pytest.raises(ImproperlyConfiguredEnv, match="MEMADMIN_TEST_INT must be at least 60"):
        envint("MEMADMIN_TEST_INT", 3600, minimum=60)


def test_it_rejects_an_integer_that_is_not_a_whole_number(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMADMIN_TEST_INT", "1.5")

    with pytest.raises(ImproperlyConfiguredEnv, match="whole number"):
        envint("MEMADMIN_TEST_INT", 1)


def test_it_splits_lists_and_drops_empty_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMADMIN_TEST_LIST", " a.example.com, ,b.example.com ,")

    assert envlist("MEMADMIN_TEST_LIST") == ["a.example.com", "b.example.com"]


def test_it_parses_keys_in_order_with_the_first_active(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMADMIN_TEST_KEYS", f"k2:{'b' * 32},k1:{'a' * 40}")

    keys = envkeys("MEMADMIN_TEST_KEYS")

    assert list(keys) == ["k2", "k1"]
    assert keys == {"k2": "b" * 32, "k1": "a" * 40}


def test_it_reads_no_keys_when_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMADMIN_TEST_KEYS", raising=False)

    assert envkeys("MEMADMIN_TEST_KEYS") == {}


@pytest.mark.parametrize(
    "raw",
    [SECRET_32, f":{SECRET_32}", "k1:short", f"k1:{SECRET_32},k1:{SECRET_32}"],
    ids=["no-key-id", "empty-key-id", "short-secret", "duplicate-key-id"],
)
def test_it_rejects_malformed_keys(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("MEMADMIN_TEST_KEYS", raw)

    with pytest.raises(ImproperlyConfiguredEnv, match="MEMADMIN_TEST_KEYS") as caught:
        envkeys("MEMADMIN_TEST_KEYS")

    assert SECRET_32 not in str(caught.value)


def test_it_reads_a_value_from_a_file_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    secret_file = tmp_path / "secret_key"
    secret_file.write_text("from-the-file\n", encoding="utf-8")
    monkeypatch.setenv("MEMADMIN_TEST_SECRET", "from-the-environment")
    monkeypatch.setenv("MEMADMIN_TEST_SECRET_FILE", str(secret_file))

    assert envstr("MEMADMIN_TEST_SECRET") == "from-the-file"


def test_it_reads_every_kind_of_value_from_a_file_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "flag").write_text("true", encoding="utf-8")
    (tmp_path / "keys").write_text(f"k1:{SECRET_32}\n", encoding="utf-8")
    monkeypatch.setenv("MEMADMIN_TEST_FLAG_FILE", str(tmp_path / "flag"))
    monkeypatch.setenv("MEMADMIN_TEST_KEYS_FILE", str(tmp_path / "keys"))

    assert envbool("MEMADMIN_TEST_FLAG") is True
    assert envkeys("MEMADMIN_TEST_KEYS") == {"k1": SECRET_32}


def test_it_fails_loudly_on_an_unreadable_file_without_showing_its_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    missing = tmp_path / "nowhere"
    monkeypatch.setenv("MEMADMIN_TEST_SECRET_FILE", str(missing))

    with pytest.raises(ImproperlyConfiguredEnv, match="MEMADMIN_TEST_SECRET_FILE") as caught:
        envstr("MEMADMIN_TEST_SECRET")

    assert str(missing) not in str(caught.value)


def test_it_reads_a_tcp_database_url() -> None:
    db = database_from_url(
        "postgresql://mem%40admin:p%2Fss@db.example.com:6543/memadmin?sslmode=require"
    )

    assert db["ENGINE"] == "django.db.backends.postgresql"
    assert (db["NAME"], db["USER"], db["PASSWORD"]) == ("memadmin", "mem@admin", "p/ss")
    assert (db["HOST"], db["PORT"]) == ("db.example.com", "6543")
    assert db["OPTIONS"] == {"sslmode": "require"}
    assert db["TEST"] == {"NAME": "test_memadmin"}


def test_it_reads_a_socket_database_url() -> None:
    db = database_from_url("postgres://postgres@/memadmin?host=%2Fvar%2Frun%2Fpostgresql")

    assert (db["HOST"], db["PORT"]) == ("/var/run/postgresql", "")
    assert (db["NAME"], db["USER"], db["PASSWORD"]) == ("memadmin", "postgres", "")


def test_it_defaults_the_database_name_to_postgres() -> None:
    assert database_from_url("postgresql://postgres@127.0.0.1:5432")["NAME"] == "postgres"


@pytest.mark.parametrize(
    "url", ["sqlite:///var/db.sqlite3", "sqlite://", "mysql://root@localhost/memadmin"]
)
def test_it_rejects_database_urls_that_are_not_postgresql(url: str) -> None:
    with pytest.raises(ImproperlyConfiguredEnv, match="postgresql://"):
        database_from_url(url)
