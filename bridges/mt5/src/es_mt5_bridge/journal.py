"""The exactly-once journal: a file of JSON lines next to the terminal, one per event of a command.

Two events per command: an `intent` (written and flushed to disk before the first trade request for it leaves) and
its `report` (written before the report is sent). On start the file is read back: a commandId with a report is never
executed again (the report is sent again); a commandId with an intent but no report may have reached the broker, so
the bridge first looks for its orders by their tag (the request comment) before it does anything else.
A lock file keeps a second bridge from using the same journal.
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from typing import IO, Any, Dict, Optional

from .protocol import Report
from .terminal import tag_of


@dataclass
class Entry:
    intent_at: Optional[str] = None
    report: Optional[Report] = None


class JournalLocked(Exception):
    pass


class Journal:
    def __init__(self, path: str, clock_iso: Any) -> None:
        self.path = path
        self._clock_iso = clock_iso
        self._entries: Dict[str, Entry] = {}
        # The request comment of each command's orders, back to the command (trade events name their command).
        self._by_tag: Dict[str, str] = {}
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        self._lock = _lock(path + ".lock")
        self._load()
        self._file: IO[str] = open(path, "a", encoding="utf-8")

    def _load(self) -> None:
        try:
            with open(self.path, encoding="utf-8") as f:
                lines = f.read().split("\n")
        except FileNotFoundError:
            return
        for line in lines:
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except ValueError:
                continue  # a line cut short by a crash: nothing after it was acknowledged
            entry = self._entry(event["commandId"])
            if event.get("event") == "intent":
                entry.intent_at = entry.intent_at or event.get("at")
            elif event.get("event") == "report" and entry.report is None:
                entry.report = Report.from_json(event["report"])

    def _entry(self, command_id: str) -> Entry:
        if command_id not in self._entries:
            self._by_tag[tag_of(command_id)] = command_id
        return self._entries.setdefault(command_id, Entry())

    def command_of_tag(self, tag: str) -> Optional[str]:
        return self._by_tag.get(tag)

    def get(self, command_id: str) -> Optional[Entry]:
        return self._entries.get(command_id)

    def _append(self, event: Dict[str, Any]) -> None:
        self._file.write(json.dumps(event, separators=(",", ":")) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def record_intent(self, command_id: str) -> None:
        entry = self._entry(command_id)
        if entry.intent_at is not None:
            return
        entry.intent_at = self._clock_iso()
        self._append({"event": "intent", "commandId": command_id, "at": entry.intent_at})

    def record_report(self, report: Report) -> Report:
        """Keeps the first report of a commandId; returns the one kept."""
        entry = self._entry(report.commandId)
        if entry.report is not None:
            return entry.report
        self._append({"event": "report", "commandId": report.commandId, "at": self._clock_iso(), "report": report.to_json()})
        entry.report = report
        return report

    def __len__(self) -> int:
        return len(self._entries)

    def close(self) -> None:
        self._file.close()
        self._lock.close()


def _lock(path: str) -> IO[str]:
    handle = open(path, "a+", encoding="utf-8")
    try:
        if sys.platform == "win32":
            import msvcrt

            handle.seek(0)
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        else:
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise JournalLocked(f"another bridge is running with the journal {path[:-5]}") from None
    return handle
