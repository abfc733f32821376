"""WSGI entry point (gunicorn memadmin.wsgi)."""

from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memadmin.settings")
application = get_wsgi_application()

from django.conf import settings  # noqa: E402 - settings are configured by the line above

if settings.DEBUG:
    # `make run` serves through gunicorn; under DEBUG it serves the static files too, as
    # runserver would. Production serves them from STATIC_ROOT (docs/deploy.md).
    from django.contrib.staticfiles.handlers import StaticFilesHandler

    application = StaticFilesHandler(application)
