"""Trade management as this bridge runs it (protocol 1.6; docs/mt5-bridge.md "Trade management"): its own thread
polls `symbol_info_tick` every 200 ms for the symbols of managed positions, feeds the engine (management.py) and
carries out what it asks, always under the lock the executor takes for a command (the MetaTrader5 package is not
documented as safe to call from two threads at once, and a step must not interleave with a command's requests).

A stop moves with TRADE_ACTION_SLTP (the take profit kept); a take-profit level closes with a TRADE_ACTION_DEAL of
the opposite type on the position's ticket. Each request's comment names the cause (MANAGEMENT_TAGS), which is how
the trade events tell a trailing or breakeven move and a level's close from a command's or the trader's own.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable, Dict, Optional

from . import management
from .managed_trades import ManagedTrades
from .protocol import Command
from .terminal import MAGIC, Refusal, pip_size
from .trading import Trader

# How often the managed symbols' quotes are read (the contract asks at most 250 ms).
MANAGE_S = 0.2
# The request comment of each management call (MT5 keeps 31 characters; a command's tag is "es:" and 24 hex digits,
# so these never collide with one).
MANAGEMENT_TAGS = {"trailing_stop": "es:trailing_stop", "breakeven_trigger": "es:breakeven_trigger",
                   "take_profit_level": "es:take_profit_level"}
CAUSE_OF_MANAGEMENT_TAG = {tag: cause for cause, tag in MANAGEMENT_TAGS.items()}
# What the engine runs; the other management fields (closeOpposite, maxSpreadPips) act before the entry.
ENGINE_FIELDS = ("trailDistancePips", "trailTriggerPips", "trailStepPips", "breakevenTriggerPips",
                 "breakevenOffsetPips", "takeProfits")


def _level(value: float) -> Optional[float]:
    return float(value) if value else None


class Manager:
    def __init__(self, lock: "threading.RLock", trader: Trader, log: Callable[..., None]) -> None:
        self.lock = lock
        self.trader = trader
        self._log = log
        # Set once the terminal said which account it is logged into (the file is named after its journal).
        self.trades: Optional[ManagedTrades] = None
        self._squared = False
        self._failing = False
        self.running = True
        self._wake = threading.Event()
        # Told of each stop moved (the trade events report it at once): position, intent, the move's number.
        self.on_moved: Optional[Callable[[Dict[str, Any], Dict[str, Any], int], None]] = None

    def open(self, path: str) -> None:
        self.trades = ManagedTrades(path, self._move_stop, self._close_level, lambda: time.monotonic() * 1000, self._log)
        # The state read back is squared with the broker on the first look, before any quote is fed.
        self._squared = False

    # ---- after an entry --------------------------------------------------------------------------------------------

    def after_entry(self, cmd: Command, ticket: Optional[str]) -> None:
        """An entry filled (or its pending order was placed): its position is managed from now on, written down
        before the report leaves. Caller holds the lock."""
        asked = {k: v for k, v in cmd.management.items() if k in ENGINE_FIELDS}
        if self.trades is None or not asked or ticket is None:
            return
        if cmd.action not in ("buy", "sell"):
            if ticket not in self.trades.awaiting:
                self.trades.await_fill(ticket, self.trader.symbol(cmd.symbol).name, asked)
            return
        if self.trades.get(ticket) is not None:
            return
        found = self.trader.positions_by_ticket(ticket)
        if found is not None:
            self._start(found, asked)

    def _start(self, pos: Any, asked: Dict[str, Any]) -> None:
        assert self.trades is not None
        info = self.trader.symbol(pos.symbol)
        fill = {"ticket": str(pos.ticket), "symbol": pos.symbol,
                "side": "buy" if pos.type == self.trader.mt5.POSITION_TYPE_BUY else "sell",
                "openPrice": float(pos.price_open), "volume": float(pos.volume), "sl": _level(pos.sl), "tp": _level(pos.tp)}
        rules = {"pip": pip_size(info.digits, info.point, info.name), "digits": int(info.digits),
                 "volumeStep": float(info.volume_step), "volumeMin": float(info.volume_min)}
        managed = management.start_managing(asked, fill, rules)
        if managed is not None:
            self.trades.add(managed)
            self._log(event="managing", ticket=fill["ticket"], symbol=fill["symbol"])
        else:
            self.trades.drop_awaiting(fill["ticket"])

    # ---- the loop --------------------------------------------------------------------------------------------------

    def look(self) -> None:
        """One look: square, start what filled, feed each managed symbol's quote. Failures are logged once."""
        if self.trades is None:
            return
        with self.lock:
            try:
                self._look()
                self._failing = False
            except Exception as err:  # the loop must outlive anything one look meets; the state file is whole
                if not self._failing:
                    self._log(event="management_failed", error=f"{type(err).__name__}: {err}")
                self._failing = True

    def _look(self) -> None:
        trades = self.trades
        assert trades is not None
        if not trades.positions and not trades.awaiting:
            self._squared = True
            return
        held = {str(p.ticket): p for p in self.trader.positions()}
        for order_ticket, awaiting in list(trades.awaiting.items()):
            # A hedging account's position has its opening order's ticket.
            if order_ticket in held:
                self._start(held[order_ticket], awaiting["asked"])
            elif not self.trader.order_pending(order_ticket):
                trades.drop_awaiting(order_ticket)
        for ticket in list(trades.positions):
            pos = held.get(ticket)
            saved = trades.positions[ticket]
            if not self._squared or saved.get("pending") or pos is None:
                # After a restart, or a call whose outcome the terminal did not say: the broker tells what happened.
                intent, moves = saved.get("pending"), int(saved.get("stopMoves") or 0)
                trades.resume(ticket, None if pos is None else {"sl": _level(pos.sl), "tp": _level(pos.tp), "volume": float(pos.volume)})
                after = trades.positions.get(ticket)
                # A move the broker made before a restart cut off its event: the event now, under the id the live path
                # gives it (position:<ticket>:managed:<move>), so it is sent once whichever path gets there.
                if intent and intent.get("kind") == "modify" and after is not None and int(after.get("stopMoves") or 0) > moves \
                        and self.on_moved is not None:
                    self.on_moved(after, intent, int(after["stopMoves"]))
            else:
                # What changed outside management (a command, the trader's own hand) is the position now.
                saved.update(sl=_level(pos.sl), tp=_level(pos.tp), volume=float(pos.volume))
        self._squared = True
        for symbol in sorted({p["symbol"] for p in trades.positions.values()}):
            try:
                tick = self.trader.tick(symbol)
            except Refusal:
                continue  # no quote now: nothing to decide on
            quote = {"bid": float(tick.bid), "ask": float(tick.ask)}
            for ticket in [t for t, p in trades.positions.items() if p["symbol"] == symbol]:
                trades.step(ticket, quote)

    def run(self) -> None:
        while self.running:
            started = time.monotonic()
            self.look()
            self._wake.wait(max(0.0, MANAGE_S - (time.monotonic() - started)))

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self.run, name="trade-management", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        self.running = False
        self._wake.set()

    # ---- the broker calls ------------------------------------------------------------------------------------------

    def _move_stop(self, position: Dict[str, Any], intent: Dict[str, Any]) -> str:
        mt5 = self.trader.mt5
        note = {"trailActiveAt": intent["trailActiveAt"]} if intent.get("trailActiveAt") is not None else None
        try:
            result = self.trader.send({"action": mt5.TRADE_ACTION_SLTP, "symbol": position["symbol"],
                                       "position": int(position["ticket"]), "sl": intent["sl"], "tp": intent["tp"] or 0.0,
                                       "magic": MAGIC, "comment": MANAGEMENT_TAGS[intent["cause"]]}, note)
        except Refusal as refusal:
            self._log(event="management_move_refused", ticket=position["ticket"], message=refusal.outcome.message)
            return "failed"
        if int(result.retcode) in (mt5.TRADE_RETCODE_DONE, mt5.TRADE_RETCODE_NO_CHANGES):
            self._log(event="stop_moved", ticket=position["ticket"], sl=intent["sl"], cause=intent["cause"])
            if self.on_moved is not None:
                self.on_moved(position, intent, int(position["stopMoves"]) + 1)
            return "done"
        self._log(event="management_move_refused", ticket=position["ticket"], retcode=int(result.retcode),
                  message=str(result.comment))
        return "failed"

    def _close_level(self, position: Dict[str, Any], intent: Dict[str, Any]) -> str:
        mt5 = self.trader.mt5
        try:
            pos = self.trader.position(str(position["ticket"]))
            request = self.trader.close_request(MANAGEMENT_TAGS["take_profit_level"], pos, intent["volume"],
                                                self.trader.symbol(pos.symbol))
            result = self.trader.send(request)
        except Refusal as refusal:
            self._log(event="management_close_refused", ticket=position["ticket"], message=refusal.outcome.message)
            return "failed"
        if int(result.retcode) == mt5.TRADE_RETCODE_DONE:
            self._log(event="level_closed", ticket=position["ticket"], volume=intent["volume"], level=intent["level"])
            return "done"
        self._log(event="management_close_refused", ticket=position["ticket"], retcode=int(result.retcode),
                  message=str(result.comment))
        return "failed"

