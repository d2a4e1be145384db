from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from config import export, health
from sheets.views import accounts

# An exhausted database pool met before the view is a 503 too (config/db_pool.py).
handler500 = "config.db_pool.server_error"
# JSON under /api/ for a body Django refuses before any view (config/api_errors.py).
handler400 = "config.api_errors.bad_request"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path(
        "accounts/password/",
        accounts.PasswordChangeView.as_view(),
        name="password_change",
    ),
    path(
        "accounts/password/done/",
        auth_views.PasswordChangeDoneView.as_view(),
        name="password_change_done",
    ),
    path("accounts/password/reset/", accounts.PasswordResetView.as_view(), name="password_reset"),
    path(
        "accounts/password/reset/sent/",
        auth_views.PasswordResetDoneView.as_view(
            extra_context={"timeout_minutes": settings.PASSWORD_RESET_TIMEOUT // 60}
        ),
        name="password_reset_done",
    ),
    path(
        "accounts/password/reset/<uidb64>/<token>/",
        accounts.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "accounts/password/reset/done/",
        auth_views.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
    path("account/export/", export.account_export, name="account_export"),
    path("api/", include(("config.api_urls", "api"))),
    path("healthz", health.healthz, name="healthz"),
    path("dice/", include("rules.urls")),
    path("", include("combat.urls")),
    path("", include("combat.live_urls")),
    path("", include("combat.display_urls")),
    path("", include("prep.urls")),
    path("", include("checks.urls")),
    path("", include("sheets.urls")),
    path("", include("integrations.urls")),
]
