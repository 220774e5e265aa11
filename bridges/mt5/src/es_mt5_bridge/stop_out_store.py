"""What the stop-out keeps on disk beside the journal, in `<journal>.stop-out.json`:

- the mark of the last stop-out, written before anything is closed, so that it happens once per drawdown reset and a
  bridge that crashed in the middle finishes exactly the tickets it had listed (`state: closing`) and nothing else;
- the stop-out events the service has not acknowledged yet, resent until it does (a crash loses none).

One file for both: the mark turns `done` and its event joins the unacknowledged in the same rename.
"""
from __future__ import annotations

import json
import os
from typing import Any, Dict, Optional

from .durable import EventsOnDisk, replace_json


class StopOutStore(EventsOnDisk):
    def __init__(self, path: str) -> None:
        # The watch writes the mark under the executor's lock; the events go out from the same thread, but a
        # shutdown may read them from another: the store's lock keeps each change and its write together.
        super().__init__()
        self.path = path
        self.mark: Optional[Dict[str, Any]] = None
        if os.path.exists(path):
            # An unreadable file stops the bridge (json raises): it must not guess whether a stop-out is under way.
            with open(path, encoding="utf-8") as f:
                saved = json.load(f)
            self.mark = saved.get("mark")
            self._events = list(saved.get("unacknowledged") or [])

    def _save(self) -> None:
        replace_json(self.path, {"mark": self.mark, "unacknowledged": self._events})

    def begin(self, mark: Dict[str, Any]) -> None:
        """The mark, durably, before the first close: `state` is `closing`, the tickets to close are listed."""
        with self._lock:
            self.mark = mark
            self._save()

    def record(self, kind: str, result: Dict[str, Any]) -> None:
        """One ticket's result (`closed` or `cancelled`), so a resumed stop-out neither repeats nor forgets it."""
        with self._lock:
            assert self.mark is not None
            self.mark[kind].append(result)
            self._save()

    def finish(self, event: Dict[str, Any]) -> None:
        with self._lock:
            assert self.mark is not None
            self.mark["state"] = "done"
            self._events.append(event)
            self._save()
