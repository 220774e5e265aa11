"""Sends the trade events and the book (`POST /bridge/v1/trades`, protocol 1.5) from the watch's thread: events in
order, at most 100 a call, each kept on disk until the service answered `recorded`, `duplicate` or `refused`; the book
after every hello, after each batch of events and at least every minute. The book is never kept: it is read fresh."""
from __future__ import annotations

import json
import time
from typing import Any, Callable, Dict, List, Optional

from .ingress import Ingress, IngressError
from .trade_events import TradeEvents

EVENTS_PER_CALL = 100
# The protocol asks for a book at least every 60 s while connected.
BOOK_EVERY_S = 50.0
RETRY_MAX_S = 30.0
# A service without the call (older than protocol 1.5) is asked again after this long; the events wait on disk.
UNSUPPORTED_RETRY_S = 300.0


# The call's body is at most 256 KiB: a book that would not fit sends its oldest part, marked truncated.
BOOK_MAX_BYTES = 240 * 1024


def fit(book: Dict[str, Any]) -> Dict[str, Any]:
    while len(json.dumps(book)) > BOOK_MAX_BYTES and (book["positions"] or book["orders"]):
        book = {**book, "truncated": True, "positions": book["positions"][:len(book["positions"]) // 2],
                "orders": book["orders"][:len(book["orders"]) // 2]}
    return book


class TradeSender:
    def __init__(self, ingress: Ingress, figures: Callable[[], Optional[Dict[str, Any]]], log: Callable[..., None],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._ingress = ingress
        self._figures = figures
        self._log = log
        self._clock = clock
        self.book_due = 0.0
        self._due = 0.0
        self._delay = 1.0
        # After a 400 for a batch: one event a call, until the one the service cannot read is found and dropped.
        self._one_at_a_time = False
        self._unsupported_logged = False

    def book_now(self) -> None:
        self.book_due = 0.0

    def send(self, detector: TradeEvents, book: Callable[[], Optional[Dict[str, Any]]]) -> None:
        """One call when something is due (events, or the book); never raises for the service's sake."""
        now = self._clock()
        if now < self._due:
            return
        pending = detector.outbox.unacknowledged()
        if pending:
            self._send_events(detector, pending[:1 if self._one_at_a_time else EVENTS_PER_CALL])
        elif now >= self.book_due:
            self._send_book(book)

    def _failed(self, err: IngressError, what: str) -> None:
        if err.status == 404:
            if not self._unsupported_logged:
                self._log(event="trades_not_supported", hint="the service is older than protocol 1.5; trade events wait on disk")
                self._unsupported_logged = True
            self._due = self._clock() + UNSUPPORTED_RETRY_S
            return
        wait = max(self._delay, err.retry_after or 0.0)
        self._log(event="trades_retry", what=what, error=str(err), retryInMs=int(wait * 1000))
        self._due = self._clock() + wait
        self._delay = min(self._delay * 2, RETRY_MAX_S)

    def _send_events(self, detector: TradeEvents, batch: List[Dict[str, Any]]) -> None:
        try:
            answer = self._ingress.trades(batch, None, self._figures())
        except IngressError as err:
            if err.status == 400:
                if len(batch) > 1:
                    self._one_at_a_time = True
                    return
                # Never resent for ever: the service says this one event cannot be read.
                self._log(event="trade_event_dropped", eventId=batch[0].get("eventId"), error=str(err))
                detector.outbox.acknowledge([str(batch[0].get("eventId"))])
                self._one_at_a_time = False
                return
            self._failed(err, "events")
            return
        answered = answer.get("events")
        results: List[Any] = answered if isinstance(answered, list) else []
        taken = []
        for result in results:
            if not isinstance(result, dict) or result.get("result") not in ("recorded", "duplicate", "refused"):
                continue
            if result.get("result") == "refused":
                self._log(event="trade_event_refused", eventId=result.get("eventId"), reason=result.get("reason"))
            taken.append(str(result.get("eventId")))
        detector.outbox.acknowledge(taken)
        self._delay = 1.0
        self._unsupported_logged = False
        if not taken:
            self._due = self._clock() + self._delay
        # The book follows every batch, so the service reconciles against what the events left.
        self.book_due = 0.0

    def _send_book(self, book: Callable[[], Optional[Dict[str, Any]]]) -> None:
        taken = book()
        if taken is None:
            return  # events came up while reading it: they go first, the book right after them
        try:
            self._ingress.trades([], fit(taken), self._figures())
        except IngressError as err:
            if err.status == 400:
                self._log(event="trades_book_refused", error=str(err))
                self.book_due = self._clock() + BOOK_EVERY_S
                return
            self._failed(err, "book")
            return
        self._delay = 1.0
        self.book_due = self._clock() + BOOK_EVERY_S
