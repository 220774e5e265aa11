"""The copy-trading stop-out (protocol 1.4, docs/mt5-bridge.md "The stop-out"): while the owner has it on, when equity
falls `maxDrawdownPercent` below the drawdown guard's peak, close every open position and cancel every pending order,
once per drawdown reset, and tell the service.

`check` is one look at the account. The bridge calls it under the lock its executor takes for each command, so a
stop-out never runs in the middle of a command, and a command never in the middle of a stop-out.
"""
from __future__ import annotations

import math
import time
from datetime import datetime
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

from .protocol import StopOutSettings, iso
from .risk import stale_refusal, utc_now
from .stop_out_store import StopOutStore
from .terminal import Refusal, tag_of
from .trading import Trader

# The wire's bounds (docs/bridge-protocol.md): at most 500 tickets a list, messages kept short.
MAX_TICKETS = 500
MAX_MESSAGE = 200

# Trade-server refusals that say "not now" rather than "no": requote, price changed, no prices, request timed out, no
# connection. Nothing was executed, so the stop-out sends the close again, ATTEMPTS in all with a growing pause,
# rather than leave open a position the owner wanted closed. Each attempt first looks up the ticket again (gone: not
# sent), and a close names its position's ticket, which the trade server never closes twice (10036).
TRANSIENT_RETCODES = frozenset({10004, 10020, 10021, 10012, 10031})
ATTEMPTS = 3
BACKOFF_S = 0.25


def event_id_of(reset_at: Optional[str]) -> str:
    return f"stop-out/{reset_at or 'initial'}"


def _later(reset_at: Optional[str], than: Optional[str]) -> bool:
    """Whether the owner reset the drawdown guard after the stop-out marked for `than` (None: never reset)."""
    if reset_at is None:
        return False
    if than is None:
        return True
    return datetime.fromisoformat(reset_at.replace("Z", "+00:00")) > datetime.fromisoformat(than.replace("Z", "+00:00"))


def _result(ticket: str, result: str, message: str) -> Dict[str, str]:
    return {"ticket": ticket, "result": result, "message": message[:MAX_MESSAGE]}


class StopOut:
    def __init__(self, trader: Trader, store: StopOutStore, log: Callable[..., None],
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.trader = trader
        self._sleep = sleep
        self.store = store
        self._log = log
        self._stale_logged = False
        self._resume_logged = False

    def check(self, settings: Optional[StopOutSettings]) -> bool:
        """Trips, or finishes a stop-out a crash interrupted; True when it closed anything. The caller holds the lock."""
        mark = self.store.mark
        if mark is not None and mark["state"] == "closing":
            # Decided before the crash: finishing it does not wait for the owner's setting or fresh quotes.
            if not self._resume_logged:
                self._log(event="stop_out_resumed", eventId=mark["eventId"])
                self._resume_logged = True
            self._close(mark)
            return True
        if settings is None:
            return False
        account = self.trader.account()
        positions = self.trader.positions()
        stale = self._stale(positions, settings.figures_max_age_ms)
        if stale is not None:
            # Equity on old quotes could trip on a loss that is not there, or raise the peak to a gain that is not.
            if not self._stale_logged:
                self._log(event="stop_out_figures_stale", message=stale)
                self._stale_logged = True
            return False
        equity = float(account.equity)
        if not math.isfinite(equity):
            # No figure at all: every comparison with NaN is false, so `drawdown < limit` was false and it tripped.
            if not self._stale_logged:
                self._log(event="stop_out_figures_stale", message=f"the terminal's equity is unreadable ({account.equity})")
                self._stale_logged = True
            return False
        self._stale_logged = False
        peak = self.trader.marks.observe_peak(equity, settings.drawdown_reset_at)
        if mark is not None and not _later(settings.drawdown_reset_at, mark["resetAt"]):
            return False  # once per reset: the trader's own trades after a stop-out are left alone
        if not (peak > 0 and (peak - equity) / peak * 100 >= settings.max_drawdown_percent):
            return False
        self._trip(settings, account, equity, peak, positions)
        return True

    def _stale(self, positions: Sequence[Any], max_age_ms: int) -> Optional[str]:
        """Why equity cannot be trusted now: an open position's last quote is older than the bound, or missing.
        The terminal converts profits with its own rates, so the positions' symbols are the quotes it rests on."""
        ticks = []
        for name in sorted({str(p.symbol) for p in positions}):
            try:
                ticks.append((name, self.trader.tick(name)))
            except Refusal as refusal:
                return str(refusal)
        stale = stale_refusal(ticks, max_age_ms, self.trader.server_now_ms())
        return stale[1] if stale is not None else None

    def _trip(self, settings: StopOutSettings, account: Any, equity: float, peak: float, positions: Sequence[Any]) -> None:
        drawdown = (peak - equity) / peak * 100
        mark: Dict[str, Any] = {
            "eventId": event_id_of(settings.drawdown_reset_at), "resetAt": settings.drawdown_reset_at,
            "trippedAt": iso(utc_now()), "equity": equity, "peak": peak, "currency": str(account.currency),
            "drawdownPercent": round(drawdown, 2), "maxDrawdownPercent": settings.max_drawdown_percent,
            "positions": [str(p.ticket) for p in positions], "orders": [str(o.ticket) for o in self.trader.orders()],
            "state": "closing", "closed": [], "cancelled": [],
        }
        self.store.begin(mark)
        self._log(event="stop_out", eventId=mark["eventId"], equity=equity, peak=peak, drawdownPercent=mark["drawdownPercent"],
                  maxDrawdownPercent=settings.max_drawdown_percent, positions=len(mark["positions"]), orders=len(mark["orders"]))
        self._close(mark)

    def _close(self, mark: Dict[str, Any]) -> None:
        """Every listed ticket without a result yet. Pending orders first: one that fills while positions close would
        open a position the stop-out never listed. A terminal that stops answering leaves the mark `closing`: the
        next check goes on from there."""
        comment = tag_of(mark["eventId"])
        cancelled = {r["ticket"] for r in mark["cancelled"]}
        for ticket in mark["orders"]:
            if ticket not in cancelled:
                self.store.record("cancelled", self._cancel(ticket, comment))
        closed = {r["ticket"] for r in mark["closed"]}
        for ticket in mark["positions"]:
            if ticket not in closed:
                self.store.record("closed", self._close_position(ticket, comment))
        event = {"type": "stop_out", **{k: mark[k] for k in ("eventId", "trippedAt", "equity", "peak", "drawdownPercent",
                                                              "maxDrawdownPercent", "currency")},
                 "closed": mark["closed"][:MAX_TICKETS], "cancelled": mark["cancelled"][:MAX_TICKETS]}
        self.store.finish(event)
        self._log(event="stop_out_done", eventId=mark["eventId"],
                  closed=sum(r["result"] == "closed" for r in mark["closed"]),
                  cancelled=sum(r["result"] == "cancelled" for r in mark["cancelled"]),
                  failed=[r for r in mark["closed"] + mark["cancelled"] if r["result"] == "failed"][:20])

    def _close_position(self, ticket: str, comment: str) -> Dict[str, str]:
        def once() -> Tuple[Dict[str, str], bool]:
            try:
                pos = self.trader.position(ticket)
            except Refusal:
                return _result(ticket, "closed", "not open any more when the stop-out reached it"), False
            return self._sent(ticket, lambda: self.trader.close_whole(pos, comment), "closed",
                              lambda r: f"closed {r.volume} lots of {pos.symbol} at {r.price}")
        return self._attempts(ticket, once)

    def _cancel(self, ticket: str, comment: str) -> Dict[str, str]:
        def once() -> Tuple[Dict[str, str], bool]:
            try:
                order = self.trader.order(ticket)
            except Refusal:
                return self._gone(ticket), False
            return self._sent(ticket, lambda: self.trader.remove_order(order, comment), "cancelled",
                              lambda r: f"cancelled {order.symbol} order")
        return self._attempts(ticket, once)

    def _attempts(self, ticket: str, once: Callable[[], Tuple[Dict[str, str], bool]]) -> Dict[str, str]:
        """One ticket, sent again after a transient refusal, at most ATTEMPTS times in all (the lock stays held: no
        command runs between two attempts)."""
        attempt = 1
        while True:
            result, transient = once()
            if not transient:
                return result
            if attempt >= ATTEMPTS:
                return _result(ticket, "failed", f"{result['message']} (after {ATTEMPTS} attempts)")
            self._log(event="stop_out_retry", ticket=ticket, attempt=attempt, message=result["message"])
            self._sleep(BACKOFF_S * attempt)
            attempt += 1

    def _sent(self, ticket: str, send: Callable[[], Any], done: str,
              message: Callable[[Any], str]) -> Tuple[Dict[str, str], bool]:
        """One request's result, and whether its refusal may pass in a moment; a terminal that does not answer raises
        past it (the mark stays `closing`)."""
        try:
            result = send()
        except Refusal as refusal:
            return _result(ticket, "failed", str(refusal)), False
        retcode = int(result.retcode)
        if retcode != self.trader.mt5.TRADE_RETCODE_DONE:
            return _result(ticket, "failed", f"{result.retcode} {result.comment}"), retcode in TRANSIENT_RETCODES
        return _result(ticket, done, message(result)), False

    def _gone(self, ticket: str) -> Dict[str, str]:
        """An order no longer pending: cancelled or expired counts; filled does not (its position is not ours to close)."""
        mt5 = self.trader.mt5
        order = self.trader.history_order(ticket)
        if order is not None and order.state in (mt5.ORDER_STATE_CANCELED, mt5.ORDER_STATE_EXPIRED):
            return _result(ticket, "cancelled", "not pending any more when the stop-out reached it")
        state = "not found" if order is None else f"state {order.state}, position {order.position_id}"
        return _result(ticket, "failed", f"not pending any more and not cancelled ({state})")
