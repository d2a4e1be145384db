"""The rules API's throttles: per address for anonymous callers (the address as every rate
limit finds it: config.throttling.client_ident), per account for the others; both let
requests through while the cache is down (config/throttling.py).
"""

from __future__ import annotations

from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle
from rest_framework.views import APIView

from config.throttling import ClientAddressMixin, FailOpenThrottleMixin

# ---------------------------------------------------------------------------------------------
# Shared view behaviour


class RulesAnonThrottle(ClientAddressMixin, FailOpenThrottleMixin, AnonRateThrottle):
    scope = "rules_anon"

    def get_rate(self) -> str | None:
        # Read at request time so a changed setting (tests, a reload) takes effect.
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)  # type: ignore[return-value]  # a "n/period" string


class RulesUserThrottle(ClientAddressMixin, FailOpenThrottleMixin, UserRateThrottle):
    scope = "rules_user"

    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)  # type: ignore[return-value]  # a "n/period" string

    def get_cache_key(self, request: Request, view: APIView) -> str | None:
        # Anonymous callers are counted by RulesAnonThrottle only.
        if not request.user or not request.user.is_authenticated:
            return None
        return super().get_cache_key(request, view)
