"""Fight forecasts per user: each one may hold a worker for up to a second or two, so the four
forecast routes (the prepared encounter's and the running fight's, page and API) share one
allowance per user, the ``forecast`` rate (``THROTTLE_FORECAST``, 20/min). Over it the API
answers DRF's 429 and the pages a 429 saying how long to wait, both with ``Retry-After``; like
every throttle here, a request is let through while the cache is down."""

from __future__ import annotations

import math

from django.http import HttpRequest, HttpResponse
from rest_framework.settings import api_settings
from rest_framework.throttling import UserRateThrottle

from config.throttling import FailOpenThrottleMixin


class ForecastThrottle(FailOpenThrottleMixin, UserRateThrottle):
    scope = "forecast"

    def get_rate(self) -> str | None:
        # Read at request time so a changed setting (tests, a reload) takes effect.
        rate = api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)
        return None if rate is None else str(rate)


def page_throttled(request: HttpRequest) -> HttpResponse | None:
    """For the forecast pages: a 429 once the user is over the forecast rate (counting this
    request), else None. The counter is the API's: the pages and the API share the rate."""
    throttle = ForecastThrottle()
    if throttle.allow_request(request, None):
        return None
    seconds = max(1, math.ceil(throttle.wait() or 1))
    response = HttpResponse(
        f"Too many forecasts in a short time: try again in {seconds} s.",
        status=429,
        content_type="text/plain; charset=utf-8",
    )
    response["Retry-After"] = str(seconds)
    return response
