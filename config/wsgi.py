"""WSGI entry point (plain HTTP only; live updates need the ASGI application, config/asgi.py).

A WSGI server cannot hold a live stream open: Django would read the stream's events into memory
until it ends, which it never does, and the worker would never answer anyone again. So every
stream this server is asked for is answered 501 at once (the pages it serves do not open one:
they say that live updates are off). OMG Table is served over ASGI; this entry point is for
tools that only speak WSGI."""

from __future__ import annotations

import os

import django
from django.core.handlers.wsgi import WSGIHandler
from django.http import HttpRequest, HttpResponse, HttpResponseBase

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

STREAM_REFUSED = (
    "Live updates need the ASGI server (config.asgi:application); this server speaks WSGI "
    "and cannot keep a stream open."
)


class StreamlessWSGIHandler(WSGIHandler):
    """Django's WSGI handler, answering 501 where a view returns a live (asynchronous) stream."""

    def get_response(self, request: HttpRequest) -> HttpResponseBase:
        response = super().get_response(request)
        if response.streaming and getattr(response, "is_async", False):
            # The stream's generator never started: it holds nothing to give back.
            return HttpResponse(STREAM_REFUSED, status=501, content_type="text/plain")
        return response


django.setup(set_prefix=False)
application = StreamlessWSGIHandler()
