"""API token authentication: ``Authorization: Bearer <key>`` or ``Authorization: Token <key>``
(the same keys: generated clients send ``Bearer``, older scripts ``Token``)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.http import HttpRequest
from django.utils import timezone
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from sheets.models import ApiToken, hash_token

# Touch last_used_at at most this often, so a busy integration does not write on every request
# (the tokens page shows it to the minute).
LAST_USED_RESOLUTION = timedelta(minutes=1)


KEYWORDS = (b"bearer", b"token")
# Where a request keeps the token it was looked up with (see token_for_key).
_MEMO = "_omg_api_token"


def token_for_key(request: HttpRequest | Request, key: str) -> ApiToken | None:
    """The token whose key this is (with its user), or None. Looked up once per request: the
    idempotency middleware needs the caller before the view runs, and DRF's authentication
    asks again inside it (DRF's request reads the memo from the Django request it wraps)."""
    memo: tuple[str, ApiToken | None] | None = getattr(request, _MEMO, None)
    if memo is not None and memo[0] == key:
        return memo[1]
    token = ApiToken.objects.select_related("user").filter(key_hash=hash_token(key)).first()
    setattr(request, _MEMO, (key, token))
    return token


class ApiTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[Any, ApiToken] | None:
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() not in KEYWORDS:
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Send the header as 'Bearer <key>'.")
        try:
            key = header[1].decode()
        except UnicodeError as exc:
            raise exceptions.AuthenticationFailed("The token contains invalid characters.") from exc
        token = token_for_key(request, key)
        if token is None or not token.user.is_active:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        now = timezone.now()
        if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return self.keyword
