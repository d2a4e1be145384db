"""Live encounters: every committed combat log entry reaches every open screen.

- ``push.py``: after a commit, the entry's id goes to the encounter's group on the channel
  layer, off the request's thread and in order (live.pusher.Pusher).
- ``broadcast.py``: the ``Broadcaster``, one per encounter and process, and its pass
  (``fan_out``): what each open stream is sent, the tracker drawn by combat/render.py.
- ``stream.py``: the SSE response of one viewer, opening it, refusing it while the channel layer
  is down, and announcing viewers coming and going (``PresenceNews``).
- ``presence.py``: who is connected, in the cache.
- the plumbing every stream shares (one server-sent event, the Pusher, opening in turn, 503
  while the channel layer is down) is in the ``live`` package, below combat and checks; the
  campaign's stream for checks outside combat is checks' own (checks/live.py).
- ``wakes.py``: a player removed, a campaign, an account or an encounter deleted wakes, after
  the commit, the feeds concerned, which check access again: their streams end at once.

The path of an event:

1. A service writes a :class:`~combat.models.CombatLogEntry` and calls ``events.publish``;
   once the transaction commits, ``push.push`` hands ``{"id": entry.pk}`` for the encounter's
   group on the channel layer (in memory on a laptop, Redis across processes) to the
   ``live.pusher.Pusher``, which sends it off the request's thread, in order.
2. Each open page holds a server-sent-events stream (``stream.encounter_stream``, htmx's SSE
   extension on the page). The streams of one encounter in one process share one
   ``broadcast.Broadcaster``: it alone listens to the group, and on a message it reads the new
   entries once, checks once who may still see the encounter, draws the entries and the
   tracker once per audience (the GM; the players, hidden NPCs masked; a player who may see
   more than the others, on their own: combat.render.LiveTracker) and hands the same text to
   every stream of that audience. Its database work runs on one thread of its own, and the
   connection goes back (to the pool) after each pass: a stream holds none.
3. A browser that reconnects sends ``Last-Event-ID`` (the last entry id it saw): the
   broadcaster replays the entries after it, or tells the page to reload its panels when the
   gap is larger than ``broadcast.REPLAY_LIMIT``. Each stream remembers the last entry it was
   sent, and every pass re-reads the database from the oldest of them: nothing is lost when a
   message is dropped, and nothing is sent twice.

Every ``broadcast.HEARTBEAT_SECONDS`` the broadcaster checks access again, sends each stream a
comment line (proxies keep an idle stream open), refreshes its viewers' presence, which the GM's
page shows, and subscribes to its groups again (a Redis that restarted has forgotten them).

When the channel layer fails under it (Redis down), the broadcaster ends all its streams rather
than leave them silent: each browser reconnects on its own and catches up from the last entry it
saw. A stream that opens while the layer cannot be reached is answered 503 with Retry-After
(htmx's SSE extension tries again, backing off), and works again as soon as Redis is back.
Viewers coming and going are announced once per encounter and per
``stream.PRESENCE_DEBOUNCE_SECONDS`` in each process (``stream.PresenceNews``), not once per
stream: a thousand pages closing at once cost a few channel-layer messages, not a thousand.
"""
