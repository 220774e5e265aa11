"""The stop-out's watch as the bridge runs it: armed and disarmed by the service's answers, a look at the account at
least once a second in its own thread (the long-poll holds the main one for up to 20 s) and after each command, always
under the lock the executor takes for a command, and the stop-out events sent until the service acknowledges them."""
from __future__ import annotations

import threading
import time
from typing import Any, Callable, Dict, Optional

from .ingress import Ingress
from .protocol import InvalidCommand, StopOutSettings, parse_stop_out
from .stop_out import StopOut
from .trade_events import TradeEvents
from .trade_sender import TradeSender

# How often the watch looks between commands (the protocol asks at least once a second).
WATCH_S = 0.5
# At most this many events on one reports call (protocol 1.4); unacknowledged ones are resent after a growing pause.
EVENTS_PER_CALL = 10
EVENTS_RETRY_MAX_S = 30.0
# How often the trade events look at the terminal's history between commands (and after each command).
TRADES_POLL_S = 1.0


class Watch:
    def __init__(self, lock: "threading.RLock", ingress: Ingress, figures: Callable[[], Optional[Dict[str, Any]]],
                 log: Callable[..., None]) -> None:
        self.lock = lock
        self._ingress = ingress
        self._figures = figures
        self._log = log
        # None while the owner has the stop-out off (the service's last answer carried no `stopOut`).
        self.settings: Optional[StopOutSettings] = None
        # Set once the terminal said which account it is logged into (its files are named after the login).
        self.stop_out: Optional[StopOut] = None
        self.running = True
        self._wake = threading.Event()
        self._failing = False
        self._events_due = 0.0
        self._events_delay = 1.0
        # The trade events (protocol 1.5): set with the stop-out, once the terminal said which account it is.
        self.trades: Optional[TradeEvents] = None
        self.trade_sender = TradeSender(ingress, figures, log)
        self._trades_failing = False
        self._trades_polled = 0.0

    def arm(self, raw: Any) -> None:
        """From each answer of the service: armed while it carries `stopOut`, disarmed when it does not. A malformed
        one changes nothing (neither a surprise stop-out nor a silent end of the owner's protection)."""
        try:
            settings = parse_stop_out(raw)
        except InvalidCommand as err:
            self._log(event="stop_out_invalid", error=str(err))
            return
        if settings != self.settings:
            self._log(event="stop_out_armed" if settings else "stop_out_disarmed",
                      **({"maxDrawdownPercent": settings.max_drawdown_percent, "drawdownResetAt": settings.drawdown_reset_at}
                         if settings else {}))
        self.settings = settings

    def check(self) -> None:
        """One look, between commands (never during one). Failures are logged once and the next look tries again: a
        stop-out a failure interrupted is still marked `closing` and goes on from its mark."""
        if self.stop_out is None:
            return
        with self.lock:
            try:
                self.stop_out.check(self.settings)
                self._failing = False
            except Exception as err:  # the watch must outlive anything one look meets
                if not self._failing:
                    self._log(event="stop_out_check_failed", error=f"{type(err).__name__}: {err}")
                self._failing = True

    def poll_trades(self) -> None:
        """One look at the history for trade events, under the executor's lock (never in the middle of a command)."""
        if self.trades is None:
            return
        self._trades_polled = time.monotonic()
        with self.lock:
            try:
                self.trades.poll()
                self._trades_failing = False
            except Exception as err:  # logged once; the next look reads the same history again
                if not self._trades_failing:
                    self._log(event="trade_events_failed", error=f"{type(err).__name__}: {err}")
                self._trades_failing = True

    def _book(self) -> Optional[Dict[str, Any]]:
        """The book, read in one step with a look at the history: a position the book no longer lists has its close
        queued first (None then: those events go before any book), else the service would close it `unknown`."""
        assert self.trades is not None
        with self.lock:
            if self.trades.poll():
                return None
            return self.trades.book()

    def send_trades(self) -> None:
        if self.trades is not None:
            self.trade_sender.send(self.trades, self._book)

    def send_events(self) -> None:
        """The events the service has not acknowledged, when due (they stay on disk until it does)."""
        if self.stop_out is None or time.monotonic() < self._events_due:
            return
        pending = self.stop_out.store.unacknowledged()[:EVENTS_PER_CALL]
        if not pending:
            return
        error = "not acknowledged"
        try:
            answers = self._ingress.events(pending, self._figures())
        except Exception as err:  # IngressError, or an answer this bridge cannot read: resent later all the same
            answers, error = [], f"{type(err).__name__}: {err}"
        taken = [str(a.get("eventId")) for a in answers
                 if isinstance(a, dict) and a.get("result") in ("recorded", "duplicate")]
        self.stop_out.store.acknowledge(taken)
        if not self.stop_out.store.unacknowledged():
            self._events_delay = 1.0
            return
        self._events_due = time.monotonic() + self._events_delay
        self._log(event="event_retry", error=error, retryInMs=int(self._events_delay * 1000))
        self._events_delay = min(self._events_delay * 2, EVENTS_RETRY_MAX_S)

    def _run(self) -> None:
        while self.running:
            started = time.monotonic()
            self.check()
            if time.monotonic() - self._trades_polled >= TRADES_POLL_S:
                self.poll_trades()
            try:
                self.send_events()
                self.send_trades()
            except Exception as err:  # the watch outlives a failed send: the events stay on disk for the next one
                self._log(event="event_send_failed", error=f"{type(err).__name__}: {err}")
            self._wake.wait(max(0.0, WATCH_S - (time.monotonic() - started)))

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self._run, name="stop-out-watch", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        self.running = False
        self._wake.set()
