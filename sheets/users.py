"""Who uses the app, typed once for every app.

``User`` is the account: Django's own ``auth.User`` (config/settings.py sets no other
``AUTH_USER_MODEL``). ``AnyUser`` is whoever a request comes from: an account, or
``AnonymousUser`` before signing in (the table display's viewer is one too). Import them for
annotations, under ``TYPE_CHECKING``: at import time the auth models may not be loaded yet.
"""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User

type AnyUser = User | AnonymousUser

__all__ = ["AnyUser", "User"]
