"""Files that must survive a crash whole: written to a temporary file, fsynced, then renamed over the old one, so a
reader finds either the old content or the new, never half of one."""
from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any, Dict, Iterable, List


def replace_json(path: str, value: Any) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(value, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    if sys.platform != "win32":
        # The rename itself is only durable once the directory is (POSIX); Windows offers no directory handle to sync.
        fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class EventsOnDisk:
    """Events kept in a file until the service answered for them; the subclass writes its whole file in `_save`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: List[Dict[str, Any]] = []

    def _save(self) -> None:
        raise NotImplementedError

    def unacknowledged(self) -> List[Dict[str, Any]]:
        with self._lock:
            return list(self._events)

    def acknowledge(self, event_ids: Iterable[str]) -> None:
        taken = set(event_ids)
        with self._lock:
            kept = [e for e in self._events if e.get("eventId") not in taken]
            if len(kept) != len(self._events):
                self._events = kept
                self._save()
