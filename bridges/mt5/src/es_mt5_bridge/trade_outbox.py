"""What the trade events keep on disk beside the journal, in `<journal>.trades.json` (protocol 1.5,
docs/mt5-bridge.md "Trade events"):

- the events the service has not answered yet (`recorded`, `duplicate` or `refused`), in the order they happened;
- what the detector has already turned into events (`seen`: eventId → its time) and what it last saw of each open
  position's SL/TP and each pending order, so that a restart neither doubles nor forgets an event;
- the tickets the bridge itself asked to modify or delete, with the request's comment (`requests`), so the event can
  say who did it: MT5's history does not keep who deleted an order or moved a stop.

One file, replaced whole (temporary file, fsync, rename): new events and the detector's state move together.
"""
from __future__ import annotations

import json
import os
from typing import Any, Callable, Dict, List, Optional

from .durable import EventsOnDisk, replace_json

# Bounds: an outbox the service does not drain keeps the newest events (the book reconciles what was dropped);
# the detector's memory holds a day of history, at most this many entries.
MAX_EVENTS = 5000
MAX_SEEN = 20_000
MAX_REQUESTS = 1000


def fresh_state(started_at: int) -> Dict[str, Any]:
    return {"startedAt": started_at, "seen": {}, "positions": {}, "orders": {}, "requests": {}}


class TradeOutbox(EventsOnDisk):
    def __init__(self, path: str, log: Callable[..., None]) -> None:
        # The detector writes under the executor's lock on the watch thread; the sender acknowledges from the same
        # thread, and a request note comes from a command: the store's lock keeps each change and its write together.
        super().__init__()
        self.path = path
        self._log = log
        self.state: Optional[Dict[str, Any]] = None
        if os.path.exists(path):
            # An unreadable file stops the bridge (json raises): starting afresh could forget unsent events.
            with open(path, encoding="utf-8") as f:
                saved = json.load(f)
            self.state = saved.get("state")
            self._events = list(saved.get("unacknowledged") or [])

    def _save(self) -> None:
        replace_json(self.path, {"state": self.state, "unacknowledged": self._events})

    def snapshot(self) -> Optional[Dict[str, Any]]:
        """A copy of the detector's state to work on (committed whole with the events it produced)."""
        with self._lock:
            return None if self.state is None else json.loads(json.dumps(self.state))

    def commit(self, events: List[Dict[str, Any]], state: Dict[str, Any]) -> None:
        with self._lock:
            # Notes written while the detector worked on its copy are kept.
            notes = {**state.get("requests", {}), **((self.state or {}).get("requests") or {})}
            for key in state.get("consumed", []):
                notes.pop(key, None)
            state.pop("consumed", None)
            state["requests"] = dict(list(notes.items())[-MAX_REQUESTS:])
            if len(state["seen"]) > MAX_SEEN:
                state["seen"] = dict(sorted(state["seen"].items(), key=lambda kv: kv[1])[-MAX_SEEN:])
            self._events.extend(events)
            dropped = len(self._events) - MAX_EVENTS
            if dropped > 0:
                self._log(event="trade_events_dropped", count=dropped,
                          hint="the service has not taken trade events for a long time; the next book reconciles")
                self._events = self._events[dropped:]
            changed = bool(events) or state != self.state
            self.state = state
            if changed:
                self._save()

    def note_request(self, key: str, comment: str, at_ms: int, fields: Optional[Dict[str, Any]] = None) -> None:
        """Before a request that modifies or deletes `key` ("position:<ticket>" or "order:<ticket>") leaves; `fields`:
        what the change's event carries besides (a trailing stop's trailActiveAt)."""
        with self._lock:
            if self.state is None:
                return
            self.state.setdefault("requests", {})[key] = {"comment": comment, "at": at_ms, **({"fields": fields} if fields else {})}
            self._save()
