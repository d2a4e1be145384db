"""The plumbing of the live feeds (server-sent events), below every app that streams: one
event (``sse``), the channel layer's sends off the caller's thread and in order
(``pusher``), and what every stream does alike (``streams``: opening in turn, 503 while the
channel layer is down, the SSE response, the connections given back).

The feeds themselves belong to their apps: an encounter's to combat (combat/live/), a
campaign's, for its checks, to checks (checks/live.py)."""
