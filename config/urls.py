from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from config import health

# An exhausted database pool met before the view is a 503 too (config/db_pool.py).
handler500 = "config.db_pool.server_error"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path(
        "accounts/password/",
        auth_views.PasswordChangeView.as_view(),
        name="password_change",
    ),
    path(
        "accounts/password/done/",
        auth_views.PasswordChangeDoneView.as_view(),
        name="password_change_done",
    ),
    path("api/", include(("config.api_urls", "api"))),
    path("healthz", health.healthz, name="healthz"),
    path("dice/", include("rules.urls")),
    path("", include("combat.urls")),
    path("", include("combat.live_urls")),
    path("", include("combat.display_urls")),
    path("", include("prep.urls")),
    path("", include("sheets.urls")),
    path("", include("integrations.urls")),
]
