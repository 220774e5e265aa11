"""The bridge's managed positions (protocol 1.6; docs/trade-management.md), as src/bridge/managed-trades.ts keeps
them for the TypeScript bridges: the engine's state (management.py) of every open position that asked for
management, in `<journal>.managed.json`, written whole and fsynced before each broker call, so that a restart finds
what was in flight and squares it with the broker (`resume`).

Beside the positions, the pending entries that asked for management (`awaiting`: order ticket → what they asked):
their position is managed from the moment the order fills, even if that happened while the bridge was down.
"""
from __future__ import annotations

import json
import os
from typing import Any, Callable, Dict, List, Optional

from . import management
from .durable import replace_json

VERSION = 1

# What the bridge's broker side does for management; each call answers "done" or "failed".
MoveStop = Callable[[Dict[str, Any], Dict[str, Any]], str]
CloseLevel = Callable[[Dict[str, Any], Dict[str, Any]], str]


class ManagedTrades:
    def __init__(self, path: str, move_stop: MoveStop, close_level: CloseLevel, now_ms: Callable[[], float],
                 log: Callable[..., None]) -> None:
        self.path = path
        self._move_stop = move_stop
        self._close_level = close_level
        self._now_ms = now_ms
        self._log = log
        self.positions: Dict[str, Dict[str, Any]] = {}
        self.awaiting: Dict[str, Dict[str, Any]] = {}
        if os.path.exists(path):
            # A file of another version or an unreadable one stops the bridge: it must not manage on a wrong state.
            with open(path, encoding="utf-8") as f:
                saved = json.load(f)
            if not isinstance(saved, dict) or saved.get("version") != VERSION or not isinstance(saved.get("positions"), list):
                raise ValueError(f"unreadable management state in {path}")
            self.positions = {str(p["ticket"]): p for p in saved["positions"]}
            self.awaiting = dict(saved.get("awaiting") or {})

    def _write(self) -> None:
        replace_json(self.path, {"version": VERSION, "positions": list(self.positions.values()), "awaiting": self.awaiting})

    def symbols(self) -> List[str]:
        return sorted({p["symbol"] for p in self.positions.values()} | {a["symbol"] for a in self.awaiting.values()})

    def get(self, ticket: str) -> Optional[Dict[str, Any]]:
        return self.positions.get(ticket)

    def add(self, position: Dict[str, Any]) -> None:
        """A position that just filled, written down before the fill's report leaves."""
        self.positions[str(position["ticket"])] = position
        self.awaiting.pop(str(position["ticket"]), None)
        self._write()

    def await_fill(self, order_ticket: str, symbol: str, asked: Dict[str, Any]) -> None:
        """A pending entry that asked for management: its position is managed once it fills."""
        self.awaiting[order_ticket] = {"symbol": symbol, "asked": asked}
        self._write()

    def drop_awaiting(self, order_ticket: str) -> None:
        if self.awaiting.pop(order_ticket, None) is not None:
            self._write()

    def forget(self, ticket: str) -> None:
        """The position is gone (its stop, its target, a command, by hand): its management ends."""
        if self.positions.pop(ticket, None) is not None:
            self._write()

    def resume(self, ticket: str, held: Optional[Dict[str, Any]]) -> None:
        """One saved position squared with what the broker holds now (None: gone); makes no broker call."""
        saved = self.positions.get(ticket)
        if saved is None:
            return
        now = management.resume(saved, held)
        if now is None:
            self.positions.pop(ticket)
        else:
            self.positions[ticket] = now
        self._write()

    def step(self, ticket: str, quote: Dict[str, float]) -> Optional[Dict[str, Any]]:
        """One quote for one position: the engine's step, and the broker call it asks for, carried out. Returns the
        intent that was carried out (or None)."""
        current = self.positions.get(ticket)
        if current is None or current.get("pending"):
            return None
        position, intent = management.on_quote(current, quote, self._now_ms())
        self.positions[ticket] = position
        if intent is None:
            return None
        # Written before the call: a restart must know a call may have been made.
        self._write()
        result = self._move_stop(position, intent) if intent["kind"] == "modify" else self._close_level(position, intent)
        if result == "failed":
            self._log(event="management_call_refused", ticket=ticket, kind=intent["kind"])
        after = management.settle(self.positions[ticket], result, self._now_ms())
        if after is None:
            self.positions.pop(ticket)
        else:
            self.positions[ticket] = after
        self._write()
        return intent
