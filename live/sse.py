"""One server-sent event as the live feed writes it, and the feed's own events."""

from __future__ import annotations

from dataclasses import dataclass

GONE = "gone"  # SSE event: the viewer lost access; the page stops following
HEARTBEAT = ": heartbeat\n\n"  # an SSE comment: keeps proxies from closing an idle stream


@dataclass(frozen=True)
class Message:
    """One server-sent event."""

    event: str
    data: str
    id: int | None = None

    def encode(self) -> str:
        lines = [f"event: {self.event}"]
        if self.id is not None:
            lines.append(f"id: {self.id}")
        # SSE data may span lines: each line gets its own "data:" prefix.
        lines += [f"data: {line}" for line in (self.data.splitlines() or [""])]
        return "\n".join(lines) + "\n\n"
