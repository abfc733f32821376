from __future__ import annotations

from django.conf import settings
from django.urls import path

from memadmin.endpoint import views

app_name = "endpoint"

urlpatterns = [
    path(f"{settings.MEMADMIN_ENDPOINT_PATH}", views.endpoint, name="endpoint"),
]
