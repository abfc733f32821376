"""Environment helpers for settings: plain stdlib, and loud when a value is wrong.

Every helper also reads ``NAME_FILE`` (a path whose contents are the value), so secrets can come
from a mounted file instead of the process environment.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit


class ImproperlyConfiguredEnv(RuntimeError):
    """An environment variable holds a value memadmin cannot use."""


def _raw(name: str) -> str | None:
    file_path = os.environ.get(f"{name}_FILE")
    if file_path:
        try:
            return Path(file_path).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ImproperlyConfiguredEnv(f"{name}_FILE cannot be read: {exc.strerror}") from exc
    return os.environ.get(name)


def envstr(name: str, default: str = "") -> str:
    value = _raw(name)
    return default if value is None else value


def envbool(name: str, default: bool = False) -> bool:
    value = _raw(name)
    if value is None or value == "":
        return default
    lowered = value.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfiguredEnv(f"{name} must be true or false, not {value!r}")


def envint(name: str, default: int, *, minimum: int | None = None) -> int:
    value = _raw(name)
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfiguredEnv(f"{name} must be a whole number, not {value!r}") from None
    if minimum is not None and number < minimum:
        raise ImproperlyConfiguredEnv(f"{name} must be at least {minimum}")
    return number


def envlist(name: str, default: list[str] | None = None) -> list[str]:
    value = _raw(name)
    if value is None or value.strip() == "":
        return list(default or [])
    return [part.strip() for part in value.split(",") if part.strip()]


def envkeys(name: str) -> dict[str, str]:
    """Parse ``kid1:secret1,kid2:secret2`` into an ordered dict; the first key is the active one."""
    keys: dict[str, str] = {}
    for part in envlist(name):
        kid, sep, secret = part.partition(":")
        if not sep or not kid or len(secret) < 32:
            raise ImproperlyConfiguredEnv(
                f"{name} must look like 'keyid:secret,...' with secrets of at least 32 characters"
            )
        if kid in keys:
            raise ImproperlyConfiguredEnv(f"{name} names key id {kid!r} twice")
        keys[kid] = secret
    return keys


def database_from_url(url: str) -> dict[str, object]:
    """Turn ``postgresql://user:pass@host:port/name?host=/socket`` into a DATABASES entry."""
    parts = urlsplit(url)
    if parts.scheme not in {"postgres", "postgresql"}:
        raise ImproperlyConfiguredEnv(
            "DATABASE_URL must be a postgresql:// URL (memadmin runs on PostgreSQL only)"
        )
    query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    host = query.pop("host", None) or (unquote(parts.hostname) if parts.hostname else "")
    name = unquote(parts.path.lstrip("/")) or "postgres"
    options: dict[str, object] = {}
    if "sslmode" in query:
        options["sslmode"] = query.pop("sslmode")
    pool_size = envint("DATABASE_POOL_SIZE", 0, minimum=0)
    if pool_size:
        # psycopg's pool (Django's native "pool" option): connections are reused across
        # requests and threads instead of opened per request; CONN_MAX_AGE must then stay 0.
        options["pool"] = {"min_size": 1, "max_size": pool_size, "timeout": 10}
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": name,
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": host,
        "PORT": str(parts.port or ""),
        "CONN_MAX_AGE": 0 if pool_size else envint("CONN_MAX_AGE", 0, minimum=0),
        "CONN_HEALTH_CHECKS": True,
        "OPTIONS": options,
        "TEST": {"NAME": f"test_{name}"},
    }
