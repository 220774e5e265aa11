"""Trade events and the book from the terminal's own records (protocol 1.5, docs/mt5-bridge.md "Trade events").

Only the documented MetaTrader5 API: `history_deals_get` (a day back, and by position), `history_orders_get`,
`positions_get` and `orders_get`. Each deal and each order state becomes at most one event, its eventId made from
the ticket (`deal:<ticket>`, `order:<ticket>:placed|triggered|cancelled|expired`), so a restart doubles nothing.
Causes from the deal's reason (SL, TP, SO, CLIENT/MOBILE/WEB) and, for the bridge's own requests (DEAL_REASON_EXPERT),
from the comment every request of the bridge carries: a command's tag, or the stop-out's.
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .protocol import iso
from .risk import utc_now
from .terminal import Terminal
from .trade_outbox import TradeOutbox, fresh_state

# How far back each look reads the history: deals reach the terminal late after a disconnection, and MT5's history
# filter works in trade-server time, whatever the offset.
LOOK_BACK_S = 86_400
BOOK_MAX = 1000
# A note of the bridge's own request names the cause of a change seen at most this long after it.
REQUEST_NOTE_MS = 600_000
PENDING_TYPES = {2: ("buy", "limit"), 3: ("sell", "limit"), 4: ("buy", "stop"), 5: ("sell", "stop"),
                 6: ("buy", "stop_limit"), 7: ("sell", "stop_limit")}
_RANK = {"order_placed": 0, "order_modified": 1, "order_triggered": 2, "position_opened": 3, "position_modified": 4,
         "position_closed": 5, "order_cancelled": 6, "order_expired": 6}

# (cause, commandId) of a request comment: a command's tag, the stop-out's, or None (not the bridge's).
CauseOfTag = Callable[[str], Optional[Tuple[str, Optional[str]]]]


def _level(value: float) -> Optional[float]:
    return float(value) if value else None


def _side(deal_or_order_type: int) -> str:
    return "buy" if deal_or_order_type % 2 == 0 else "sell"


class TradeEvents(Terminal):
    """The detector: one `poll` reads the terminal and commits the new events with its state (caller holds the lock)."""

    def __init__(self, mt5: Any, server_offset: Callable[[], int], outbox: TradeOutbox, cause_of_tag: CauseOfTag) -> None:
        super().__init__(mt5, server_offset)
        self.outbox = outbox
        self._cause_of_tag = cause_of_tag

    # ---- times: MT5 keeps trade-server time ----------------------------------------------------------------------

    def _utc(self, server_ms: int) -> str:
        return iso(datetime.fromtimestamp((server_ms - self._server_offset() * 1000) / 1000, timezone.utc))

    def _server_s(self) -> int:
        return int(self.server_now_ms() // 1000)

    # ---- the look ------------------------------------------------------------------------------------------------

    def start(self) -> None:
        """The first time on this account: what happened before is not reported as events (the book shows what is
        open); from now on everything is."""
        if self.outbox.state is None:
            self.outbox.commit([], fresh_state(self._server_s()))

    def poll(self) -> int:
        """New events since the last look, committed to the outbox; how many."""
        now = self._server_s()
        state = self.outbox.snapshot() or fresh_state(now)
        state["consumed"] = []
        mt5 = self.mt5
        start = datetime.fromtimestamp(max(state["startedAt"], now - LOOK_BACK_S), timezone.utc)
        end = datetime.fromtimestamp(now + LOOK_BACK_S, timezone.utc)
        deals = self._call("history_deals_get", mt5.history_deals_get(start, end)) or ()
        history = self._call("history_orders_get", mt5.history_orders_get(start, end)) or ()
        active = self._call("orders_get", mt5.orders_get()) or ()
        positions = self._call("positions_get", mt5.positions_get()) or ()
        orders_by_ticket = {o.ticket: o for o in list(history) + list(active)}
        found: List[Tuple[int, Dict[str, Any]]] = []

        def add(at_ms: int, event: Dict[str, Any]) -> None:
            if event["eventId"] in state["seen"]:
                return
            state["seen"][event["eventId"]] = at_ms // 1000
            # null is a level removed (or an order's expiry: good till cancelled), on a modification only; elsewhere a
            # field without a value is left out.
            keep_null = {"position_modified": ("sl", "tp"), "order_modified": ("sl", "tp", "expiresAt")}.get(event["type"], ())
            found.append((at_ms, {k: v for k, v in event.items() if v is not None or k in keep_null}))

        for order in sorted(list(history) + list(active), key=lambda o: (o.time_setup_msc, o.ticket)):
            if order.type not in PENDING_TYPES:
                continue
            if order.time_setup >= state["startedAt"]:
                add(order.time_setup_msc, self._placed(order))
            if order.state == mt5.ORDER_STATE_CANCELED:
                add(order.time_done_msc, self._cancelled(order, state))
            elif order.state == mt5.ORDER_STATE_EXPIRED:
                add(order.time_done_msc, {"eventId": f"order:{order.ticket}:expired", "type": "order_expired",
                                          "at": self._utc(order.time_done_msc), "ticket": str(order.ticket),
                                          "symbol": order.symbol})
        for deal in sorted(deals, key=lambda d: (d.time_msc, d.ticket)):
            if deal.type not in (mt5.DEAL_TYPE_BUY, mt5.DEAL_TYPE_SELL) or deal.time < state["startedAt"]:
                continue
            order = orders_by_ticket.get(deal.order) or self._history_order(deal.order)
            for event in self._of_deal(deal, order, state):
                add(deal.time_msc, event)
        for pos in positions:
            self._sltp(pos, state, add)
        for order in active:
            self._order_changed(order, state, add)
        cutoff = now - 2 * LOOK_BACK_S
        state["seen"] = {k: t for k, t in state["seen"].items() if t >= cutoff}
        state["positions"] = {k: v for k, v in state["positions"].items() if int(k) in {p.ticket for p in positions}}
        state["orders"] = {k: v for k, v in state["orders"].items() if int(k) in {o.ticket for o in active}}
        found.sort(key=lambda f: (f[0], _RANK[f[1]["type"]]))
        events = [e for _, e in found]
        self.outbox.commit(events, state)
        return len(events)

    def _history_order(self, ticket: int) -> Any:
        found = self._call("history_orders_get", self.mt5.history_orders_get(ticket=ticket)) or ()
        return found[0] if found else None

    def _by_note(self, key: str, state: Dict[str, Any], at_ms: int) -> Optional[Tuple[str, Optional[str]]]:
        note = state.get("requests", {}).get(key)
        if note is None or abs(at_ms - note["at"]) > REQUEST_NOTE_MS:
            return None
        state["consumed"].append(key)
        return self._cause_of_tag(note["comment"])

    # ---- pending orders --------------------------------------------------------------------------------------------

    def _prices(self, order: Any) -> Tuple[float, Optional[float]]:
        """(price, stopLimitPrice) in the service's words: MT5 keeps a stop-limit's trigger in price_open."""
        if PENDING_TYPES[order.type][1] == "stop_limit":
            return float(order.price_stoplimit), float(order.price_open)
        return float(order.price_open), None

    def _expiry(self, order: Any) -> Optional[str]:
        """The order's expiry in UTC; None: good till cancelled."""
        if order.type_time == self.mt5.ORDER_TIME_SPECIFIED and order.time_expiration:
            return self._utc(order.time_expiration * 1000)
        return None

    def _placed(self, order: Any) -> Dict[str, Any]:
        side, order_type = PENDING_TYPES[order.type]
        price, stop_limit = self._prices(order)
        by = self._cause_of_tag(order.comment)
        return {"eventId": f"order:{order.ticket}:placed", "type": "order_placed", "at": self._utc(order.time_setup_msc),
                "ticket": str(order.ticket), "symbol": order.symbol, "commandId": by[1] if by else None,
                "side": side, "orderType": order_type, "volume": float(order.volume_initial), "price": price,
                "stopLimitPrice": stop_limit, "sl": _level(order.sl), "tp": _level(order.tp),
                "expiresAt": self._expiry(order)}

    def _cancelled(self, order: Any, state: Dict[str, Any]) -> Dict[str, Any]:
        # The history does not say who deleted an order: the bridge's own note does, else it was done by hand.
        by = self._by_note(f"order:{order.ticket}", state, order.time_done_msc)
        return {"eventId": f"order:{order.ticket}:cancelled", "type": "order_cancelled",
                "at": self._utc(order.time_done_msc), "ticket": str(order.ticket), "symbol": order.symbol,
                "commandId": by[1] if by else None, "cause": by[0] if by else "manual"}

    def _order_changed(self, order: Any, state: Dict[str, Any], add: Callable[[int, Dict[str, Any]], None]) -> None:
        if order.type not in PENDING_TYPES:
            return
        price, stop_limit = self._prices(order)
        now = [price, stop_limit, _level(order.sl), _level(order.tp), int(order.time_expiration)]
        key = str(order.ticket)
        known = state["orders"].get(key)
        if known is not None and known["values"] != now:
            changes = known["changes"] + 1
            at_ms = int(self.server_now_ms())
            by = self._by_note(f"order:{order.ticket}", state, at_ms)
            add(at_ms, {"eventId": f"order:{order.ticket}:modified:{changes}", "type": "order_modified",
                        "at": self._utc(at_ms), "ticket": key, "symbol": order.symbol,
                        "commandId": by[1] if by else None, "price": price, "stopLimitPrice": stop_limit,
                        "orderType": PENDING_TYPES[order.type][1], "sl": now[2], "tp": now[3],
                        "expiresAt": self._expiry(order), "cause": by[0] if by else "broker"})
            state["orders"][key] = {"values": now, "changes": changes}
        elif known is None:
            state["orders"][key] = {"values": now, "changes": 0}

    # ---- deals and positions ---------------------------------------------------------------------------------------

    def _of_deal(self, deal: Any, order: Any, state: Dict[str, Any]) -> List[Dict[str, Any]]:
        mt5 = self.mt5
        base = {"at": self._utc(deal.time_msc), "ticket": str(deal.position_id), "symbol": deal.symbol}
        if deal.entry == mt5.DEAL_ENTRY_IN:
            return self._opened(deal, order, state, base, f"deal:{deal.ticket}", float(deal.volume))
        before, after, entry_commission, opened_volume = self._volumes(deal)
        if deal.entry == mt5.DEAL_ENTRY_INOUT:
            # A netting reversal: the old position closes in full and the rest opens the other way, in one deal.
            closed = self._closed(deal, base, f"deal:{deal.ticket}:out", before, 0.0, entry_commission, opened_volume)
            return [closed] + self._opened(deal, order, state, base, f"deal:{deal.ticket}:in", after)
        return [self._closed(deal, base, f"deal:{deal.ticket}", float(deal.volume), after, entry_commission, opened_volume)]

    def _opened(self, deal: Any, order: Any, state: Dict[str, Any], base: Dict[str, Any], event_id: str,
                volume: float) -> List[Dict[str, Any]]:
        by = self._cause_of_tag(deal.comment)
        sl, tp = (_level(order.sl), _level(order.tp)) if order is not None else (None, None)
        # A stop moved by trade management before this first look is already recorded (managed_move).
        state["positions"].setdefault(str(deal.position_id), [sl, tp])
        events = []
        pending = order is not None and order.type in PENDING_TYPES
        if pending:
            events.append({"eventId": f"order:{order.ticket}:triggered", "type": "order_triggered", "at": base["at"],
                           "ticket": str(order.ticket), "symbol": deal.symbol, "positionTicket": str(deal.position_id),
                           "price": float(deal.price)})
        events.append({"eventId": event_id, "type": "position_opened", **base, "commandId": by[1] if by else None,
                       "side": _side(deal.type), "volume": volume, "price": float(deal.price), "sl": sl, "tp": tp,
                       "fromOrder": str(order.ticket) if pending else None})
        return events

    def _volumes(self, deal: Any) -> Tuple[float, float, float, float]:
        """The position's volume before and after `deal`, and its entry deals' commission and volume (MT5 charges
        commission on entry too: a close carries its share of it, so the trade's P&L is whole)."""
        mt5 = self.mt5
        deals = self._call("history_deals_get", mt5.history_deals_get(position=deal.position_id)) or ()
        volume = entry_commission = opened = 0.0
        for d in sorted(deals, key=lambda d: (d.time_msc, d.ticket)):
            signed = float(d.volume) if d.type == mt5.DEAL_TYPE_BUY else -float(d.volume)
            if d.entry == mt5.DEAL_ENTRY_IN:
                entry_commission += float(d.commission) + float(d.fee)
                opened += float(d.volume)
            if d.ticket == deal.ticket:
                before = abs(volume)
                volume += signed
                return before, round(abs(volume), 8), entry_commission, opened
            volume += signed
        return float(deal.volume), 0.0, entry_commission, opened

    def _closed(self, deal: Any, base: Dict[str, Any], event_id: str, volume: float, remaining: float,
                entry_commission: float, opened: float) -> Dict[str, Any]:
        cause, command_id = self._close_cause(deal)
        share = entry_commission * volume / opened if opened > 0 else 0.0
        return {"eventId": event_id, "type": "position_closed", **base, "commandId": command_id, "volume": volume,
                "remainingVolume": remaining, "price": float(deal.price), "profit": float(deal.profit),
                "commission": round(float(deal.commission) + float(deal.fee) + share, 2), "swap": float(deal.swap),
                "cause": cause}

    def _close_cause(self, deal: Any) -> Tuple[str, Optional[str]]:
        mt5 = self.mt5
        by_reason = {mt5.DEAL_REASON_SL: "stop_loss", mt5.DEAL_REASON_TP: "take_profit", mt5.DEAL_REASON_SO: "margin_call",
                     mt5.DEAL_REASON_CLIENT: "manual", mt5.DEAL_REASON_MOBILE: "manual", mt5.DEAL_REASON_WEB: "manual"}
        if deal.reason in by_reason:
            return by_reason[deal.reason], None
        by = self._cause_of_tag(deal.comment) if deal.reason == mt5.DEAL_REASON_EXPERT else None
        return by if by is not None else ("other", None)

    def _sltp(self, pos: Any, state: Dict[str, Any], add: Callable[[int, Dict[str, Any]], None]) -> None:
        key = str(pos.ticket)
        now = [_level(pos.sl), _level(pos.tp)]
        known = state["positions"].get(key)
        state["positions"][key] = now
        if known is None or known == now:
            return
        note = state.get("requests", {}).get(f"position:{pos.ticket}") or {}
        by = self._by_note(f"position:{pos.ticket}", state, pos.time_update_msc)
        # A trailing stop's move says where the trail started (protocol 1.6).
        extra = (note.get("fields") or {}) if by is not None and by[0] == "trailing_stop" else {}
        add(pos.time_update_msc, {**extra, "eventId": f"position:{pos.ticket}:sltp:{pos.time_update_msc}",
                                  "type": "position_modified", "at": self._utc(pos.time_update_msc), "ticket": key,
                                  "symbol": pos.symbol, "commandId": by[1] if by else None, "sl": now[0], "tp": now[1],
                                  "cause": by[0] if by else "broker"})

    def managed_move(self, ticket: str, symbol: str, sl: float, tp: Optional[float], cause: str,
                     trail_active_at: Optional[float], move: int) -> None:
        """A stop trade management just moved (protocol 1.6), as its own event at once: two moves between two looks
        are two events, not one, and the next look sees no change to report (caller holds the lock)."""
        state = self.outbox.snapshot() or fresh_state(self._server_s())
        key = f"position:{ticket}"
        # The request's note is used up here, so a later change by someone else is not taken for this one.
        state["consumed"] = [key] if key in state.get("requests", {}) else []
        state["positions"][ticket] = [sl, tp]
        at_ms = int(self.server_now_ms())
        event: Dict[str, Any] = {"eventId": f"{key}:managed:{move}", "type": "position_modified", "at": self._utc(at_ms),
                                 "ticket": ticket, "symbol": symbol, "sl": sl, "tp": tp, "cause": cause}
        if trail_active_at is not None:
            event["trailActiveAt"] = trail_active_at
        if event["eventId"] in state["seen"]:
            return
        state["seen"][event["eventId"]] = at_ms // 1000
        self.outbox.commit([event], state)

    # ---- the book ----------------------------------------------------------------------------------------------------

    def book(self) -> Dict[str, Any]:
        positions: Sequence[Any] = sorted(self.positions(), key=lambda p: (p.time_msc, p.ticket))
        orders: Sequence[Any] = sorted((o for o in self.orders() if o.type in PENDING_TYPES),
                                       key=lambda o: (o.time_setup_msc, o.ticket))
        return {
            "takenAt": iso(utc_now()), "truncated": len(positions) > BOOK_MAX or len(orders) > BOOK_MAX,
            "positions": [{"ticket": str(p.ticket), "symbol": p.symbol, "side": "buy" if p.type == self.mt5.POSITION_TYPE_BUY else "sell",
                           "volume": float(p.volume), "openPrice": float(p.price_open), "sl": _level(p.sl), "tp": _level(p.tp),
                           "openedAt": self._utc(p.time_msc), "profit": float(p.profit), "swap": float(p.swap),
                           # MT5 positions carry no commission: the deals do, and each close reports its share.
                           "commission": 0.0}
                          for p in positions[:BOOK_MAX]],
            "orders": [self._book_order(o) for o in orders[:BOOK_MAX]],
        }

    def _book_order(self, o: Any) -> Dict[str, Any]:
        side, order_type = PENDING_TYPES[o.type]
        price, stop_limit = self._prices(o)
        return {"ticket": str(o.ticket), "symbol": o.symbol, "side": side, "orderType": order_type,
                "volume": float(o.volume_current), "price": price, "stopLimitPrice": stop_limit, "sl": _level(o.sl),
                "tp": _level(o.tp), "placedAt": self._utc(o.time_setup_msc),
                "expiresAt": self._expiry(o)}
