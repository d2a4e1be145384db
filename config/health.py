"""/healthz for load balancers: is the database reachable, does the channel layer answer?"""

from __future__ import annotations

import asyncio
import logging

from asgiref.sync import async_to_sync
from channels import DEFAULT_CHANNEL_LAYER
from channels.layers import channel_layers
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache

logger = logging.getLogger(__name__)

CHANNEL_LAYER_TIMEOUT = 2.0


async def _ping_channel_layer() -> None:
    """A message's round trip through a channel layer of its own (the configured one: Redis in
    a deployment), on an event loop of its own: the worker's layer may be busy with a burst
    (a thousand pages opening), its connections all taken, its loop slow to answer, and the
    check must tell whether Redis works, not whether this worker is busy. It costs a
    connection to Redis per check."""
    if DEFAULT_CHANNEL_LAYER not in channel_layers.configs:
        raise RuntimeError("no channel layer configured")
    layer = channel_layers.make_backend(DEFAULT_CHANNEL_LAYER)
    try:
        channel = await layer.new_channel()
        await layer.send(channel, {"type": "health.ping"})
        message = await asyncio.wait_for(layer.receive(channel), CHANNEL_LAYER_TIMEOUT)
        if message.get("type") != "health.ping":
            raise RuntimeError("the channel layer returned another message")
    finally:
        close = getattr(layer, "close_pools", None)
        if close is not None:
            await close()


@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    checks: dict[str, str] = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
    except Exception as exc:  # a health check reports every failure, whatever its type
        logger.warning("healthz: database check failed: %s", exc)
        checks["database"] = "error"
    try:
        async_to_sync(_ping_channel_layer, force_new_loop=True)()
        checks["channel_layer"] = "ok"
    except Exception as exc:  # as above
        logger.warning("healthz: channel layer check failed: %s", exc)
        checks["channel_layer"] = "error"
    healthy = all(value == "ok" for value in checks.values())
    body = {"status": "ok" if healthy else "error", **checks}
    return JsonResponse(body, status=200 if healthy else 503)
