"""The terminal side: each of the 17 actions as `order_send` requests of the official MetaTrader5 package.

Prices: `sl`/`tp` as given, or from `slPips`/`tpPips` with the symbol's pip size (from the fill price for market
entries, from the entry price for pending ones). Stop-limit: the service's `stopLimitPrice` is the trigger, which MT5
calls `price`; the service's `price` is the limit order's price, MT5's `stoplimit`.

Every request carries the command's tag as its comment, so after a crash the bridge can find what a command already
did on the trade server (`find`): the terminal's own history is the truth, not the bridge's memory.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .protocol import ENTRY_ACTIONS, Command, Retcode
from .risk import EquityMarks, guard_refusal, size_by_risk, utc_now

# MQL5 SYMBOL_FILLING_* and SYMBOL_EXPIRATION_* flags of SymbolInfo.filling_mode / expiration_mode (documented values;
# the Python package does not export them).
SYMBOL_FILLING_FOK = 1
SYMBOL_FILLING_IOC = 2
SYMBOL_EXPIRATION_SPECIFIED = 4

MAGIC = 20261120
DEVIATION_POINTS = 20
ORDER_NOT_FOUND = 4754  # MQL5 ERR_TRADE_ORDER_NOT_FOUND: what an EA sees for an unknown order ticket
EPS = 1e-9


class TerminalUnavailable(Exception):
    """The terminal did not answer (not running, restarting, IPC failure): nothing can be known or done now."""


@dataclass(frozen=True)
class Outcome:
    status: str  # filled | done | rejected
    ticket: Optional[str] = None
    price: Optional[float] = None
    volume: Optional[float] = None
    retcode: Optional[Retcode] = None
    message: Optional[str] = None


def tag_of(command_id: str) -> str:
    """The request comment that marks a command's orders (MT5 keeps at most 31 characters of a comment)."""
    return "es:" + hashlib.sha256(command_id.encode("utf-8")).hexdigest()[:24]


def pip_size(digits: int, point: float, name: str) -> float:
    """10 points on 3- and 5-digit symbols (and 2-digit metals), else one point (docs/bridge-protocol.md)."""
    if digits in (3, 5) or (digits == 2 and name.upper().startswith(("XAU", "XAG"))):
        return round(point * 10, 10)
    return point


def refused(retcode: Retcode, message: str) -> Outcome:
    return Outcome("rejected", retcode=retcode, message=message)


class Refusal(Exception):
    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome.message)
        self.outcome = outcome


class Trader:
    def __init__(self, mt5: Any, server_offset: Callable[[], int]) -> None:
        self.mt5 = mt5
        self._server_offset = server_offset
        # The loss guards' day-open and peak equity, as this bridge saw the account (kept in memory).
        self.marks = EquityMarks()

    # ---- reading the terminal ------------------------------------------------------------------------------------

    def _call(self, what: str, result: Any, missing_ok: bool = False) -> Any:
        """None from the package: nothing found when last_error says success (or, for a symbol look-up with
        `missing_ok`, a generic failure: the symbol does not exist); anything else means the terminal cannot be asked
        now, and nothing may be concluded from its silence (a position "not found" could still be open)."""
        if result is None:
            code, text = self.mt5.last_error()
            if code == self.mt5.RES_S_OK or (missing_ok and code in (self.mt5.RES_E_FAIL, self.mt5.RES_E_NOT_FOUND)):
                return None
            raise TerminalUnavailable(f"{what}: {code} {text}")
        return result

    def symbol(self, name: Optional[str]) -> Any:
        if not name:
            raise Refusal(refused(self.mt5.TRADE_RETCODE_INVALID, "Invalid request: symbol is required"))
        self.mt5.symbol_select(name, True)
        info = self._call("symbol_info", self.mt5.symbol_info(name), missing_ok=True)
        if info is None:
            raise Refusal(refused(self.mt5.TRADE_RETCODE_INVALID, f"Invalid request: unknown symbol {name}"))
        return info

    def tick(self, name: str) -> Any:
        tick = self._call("symbol_info_tick", self.mt5.symbol_info_tick(name), missing_ok=True)
        if tick is None or not tick.bid or not tick.ask:
            raise Refusal(refused(self.mt5.TRADE_RETCODE_PRICE_OFF, f"No quotes for {name}"))
        return tick

    def positions(self) -> Sequence[Any]:
        return self._call("positions_get", self.mt5.positions_get()) or ()

    def position(self, ticket: Optional[str]) -> Any:
        if ticket is None:
            raise Refusal(refused(self.mt5.TRADE_RETCODE_INVALID, "Invalid request: positionId is required"))
        found = self._call("positions_get", self.mt5.positions_get(ticket=int(ticket))) if ticket.isdigit() else ()
        if not found:
            raise Refusal(refused(self.mt5.TRADE_RETCODE_POSITION_CLOSED, f"Position doesn't exist: position {ticket}"))
        return found[0]

    def order(self, ticket: Optional[str]) -> Any:
        if ticket is None:
            raise Refusal(refused(self.mt5.TRADE_RETCODE_INVALID, "Invalid request: orderId is required"))
        found = self._call("orders_get", self.mt5.orders_get(ticket=int(ticket))) if ticket.isdigit() else ()
        if not found:
            raise Refusal(refused(ORDER_NOT_FOUND, f"Order not found: order {ticket}"))
        return found[0]

    def find(self, command_id: str, since: datetime) -> Tuple[List[Any], List[Any]]:
        """The orders a command already sent (history and active, by their tag) and their deals."""
        tag = tag_of(command_id)
        start = since - timedelta(days=2)
        end = datetime.now(timezone.utc) + timedelta(days=2)
        history = self._call("history_orders_get", self.mt5.history_orders_get(start, end)) or ()
        active = self._call("orders_get", self.mt5.orders_get()) or ()
        orders = [o for o in list(history) + list(active) if o.comment == tag]
        deals = self._call("history_deals_get", self.mt5.history_deals_get(start, end)) or ()
        return orders, [d for d in deals if d.comment == tag]

    # ---- the request -----------------------------------------------------------------------------------------------

    def send(self, request: Dict[str, Any]) -> Any:
        result = self.mt5.order_send(request)
        if result is None:
            code, text = self.mt5.last_error()
            if code <= self.mt5.RES_E_INTERNAL_FAIL:
                # The request may or may not have reached the server: leave the command unreported, reconcile later.
                raise TerminalUnavailable(f"order_send: {code} {text}")
            raise Refusal(refused("bridge_internal_error", f"order_send refused the request: {code} {text}"))
        return result

    def _filling(self, info: Any) -> int:
        if info.filling_mode & SYMBOL_FILLING_FOK:
            return int(self.mt5.ORDER_FILLING_FOK)
        if info.filling_mode & SYMBOL_FILLING_IOC:
            return int(self.mt5.ORDER_FILLING_IOC)
        return int(self.mt5.ORDER_FILLING_RETURN)

    def _broker(self, result: Any) -> Outcome:
        return refused(int(result.retcode), str(result.comment or f"retcode {result.retcode}"))

    def _ok(self, result: Any, *codes: int) -> bool:
        return int(result.retcode) in codes

    # ---- the actions -----------------------------------------------------------------------------------------------

    def execute(self, cmd: Command, recovering: bool) -> Outcome:
        """Runs one command. `recovering`: it may have run before (an intent without a report): look first."""
        try:
            if recovering:
                found = self.recover(cmd)
                if found is not None:
                    return found
            return self._run(cmd)
        except Refusal as refusal:
            return refusal.outcome

    def _run(self, cmd: Command) -> Outcome:
        a = cmd.action
        if a in ("buy", "sell"):
            return self.market_entry(cmd, a == "buy")
        if a in ENTRY_ACTIONS:
            return self.pending_entry(cmd)
        if a == "close":
            return self.close_one(cmd) if cmd.position_id is not None else self.close_many(cmd, self._matching(cmd), [])
        if a == "close_all":
            return self.close_many(cmd, list(self.positions()), list(self._call("orders_get", self.mt5.orders_get()) or ()))
        if a == "partial_close":
            return self.partial_close(cmd)
        if a == "cancel_pending":
            return self.cancel_pending(cmd)
        if a in ("modify_sl", "modify_tp", "breakeven"):
            return self.modify_position(cmd)
        return self.modify_pending(cmd)

    def _guard_open_positions(self, cmd: Command) -> None:
        if cmd.max_open_positions is None:
            return
        count = len(self.positions())
        if count >= cmd.max_open_positions:
            raise Refusal(refused("risk_max_open_positions",
                                  f"the account already has {count} open position(s); the maximum is {cmd.max_open_positions}"))

    def _volume(self, cmd: Command, info: Any, buy: bool, entry: float) -> Tuple[Optional[float], Optional[str]]:
        """The lots to place and the sizing note: the loss guards first, then sizing by risk on the live account."""
        if cmd.loss_guards is None and cmd.risk_sizing is None:
            return cmd.volume, None
        account = self._call("account_info", self.mt5.account_info())
        if cmd.loss_guards is not None:
            refusal = guard_refusal(cmd.loss_guards, account, self.marks, utc_now())
            if refusal is not None:
                raise Refusal(refused(*refusal))
        if cmd.risk_sizing is None:
            return cmd.volume, None
        pip = pip_size(info.digits, info.point, info.name)
        distance = abs(entry - cmd.sl) if cmd.sl is not None else (cmd.sl_pips * pip if cmd.sl_pips is not None else 0.0)
        lots, note, refusal_code = size_by_risk(cmd.risk_sizing, account, info, distance)
        if refusal_code is not None:
            raise Refusal(refused(refusal_code, note))
        return lots, note

    def _stops(self, cmd: Command, info: Any, buy: bool, entry: float) -> Tuple[float, float]:
        pip = pip_size(info.digits, info.point, info.name)
        direction = 1 if buy else -1
        sl = cmd.sl if cmd.sl is not None else (entry - direction * cmd.sl_pips * pip if cmd.sl_pips is not None else 0.0)
        tp = cmd.tp if cmd.tp is not None else (entry + direction * cmd.tp_pips * pip if cmd.tp_pips is not None else 0.0)
        return round(sl, info.digits), round(tp, info.digits)

    def market_entry(self, cmd: Command, buy: bool) -> Outcome:
        info = self.symbol(cmd.symbol)
        self._guard_open_positions(cmd)
        tick = self.tick(info.name)
        price = tick.ask if buy else tick.bid
        volume, note = self._volume(cmd, info, buy, price)
        if volume is None:
            raise Refusal(refused(self.mt5.TRADE_RETCODE_INVALID, "Invalid request: volume is required"))
        sl, tp = self._stops(cmd, info, buy, price)
        result = self.send({
            "action": self.mt5.TRADE_ACTION_DEAL, "symbol": info.name, "volume": volume,
            "type": self.mt5.ORDER_TYPE_BUY if buy else self.mt5.ORDER_TYPE_SELL, "price": price, "sl": sl, "tp": tp,
            "deviation": DEVIATION_POINTS, "magic": MAGIC, "comment": tag_of(cmd.command_id),
            "type_time": self.mt5.ORDER_TIME_GTC, "type_filling": self._filling(info),
        })
        if not self._ok(result, self.mt5.TRADE_RETCODE_DONE, self.mt5.TRADE_RETCODE_DONE_PARTIAL):
            return self._broker(result)
        outcome = Outcome("filled", ticket=str(result.order), price=result.price, volume=result.volume,
                          retcode=int(result.retcode), message=note or str(result.comment))
        if (cmd.sl_pips is not None or cmd.tp_pips is not None) and abs(result.price - price) > EPS:
            self._reanchor(cmd, info, buy, result)
        return outcome

    def _reanchor(self, cmd: Command, info: Any, buy: bool, result: Any) -> None:
        """Slippage: pips are from the fill price, which was not the quoted one; move the stops there (best effort)."""
        sl, tp = self._stops(cmd, info, buy, result.price)
        self.mt5.order_send({"action": self.mt5.TRADE_ACTION_SLTP, "symbol": info.name, "position": int(result.order),
                             "sl": sl, "tp": tp, "magic": MAGIC, "comment": tag_of(cmd.command_id)})

    _PENDING = {
        "buy_limit": ("ORDER_TYPE_BUY_LIMIT", True), "sell_limit": ("ORDER_TYPE_SELL_LIMIT", False),
        "buy_stop": ("ORDER_TYPE_BUY_STOP", True), "sell_stop": ("ORDER_TYPE_SELL_STOP", False),
        "buy_stop_limit": ("ORDER_TYPE_BUY_STOP_LIMIT", True), "sell_stop_limit": ("ORDER_TYPE_SELL_STOP_LIMIT", False),
    }

    def _expiration(self, expiry: Optional[datetime]) -> Tuple[int, int]:
        """(type_time, expiration): MT5 counts expiration in trade-server time."""
        if expiry is None:
            return self.mt5.ORDER_TIME_GTC, 0
        return self.mt5.ORDER_TIME_SPECIFIED, int(expiry.timestamp()) + self._server_offset()

    def pending_entry(self, cmd: Command) -> Outcome:
        type_name, buy = self._PENDING[cmd.action]
        info = self.symbol(cmd.symbol)
        self._guard_open_positions(cmd)
        if cmd.price is None:
            raise Refusal(refused(self.mt5.TRADE_RETCODE_INVALID, "Invalid request: volume and price are required"))
        stop_limit = cmd.action.endswith("stop_limit")
        if stop_limit and cmd.stop_limit_price is None:
            raise Refusal(refused(self.mt5.TRADE_RETCODE_INVALID, "Invalid request: stopLimitPrice is required"))
        entry = round(cmd.price, info.digits)
        volume, note = self._volume(cmd, info, buy, entry)
        if volume is None:
            raise Refusal(refused(self.mt5.TRADE_RETCODE_INVALID, "Invalid request: volume and price are required"))
        sl, tp = self._stops(cmd, info, buy, entry)
        type_time, expiration = self._expiration(cmd.expiry)
        request: Dict[str, Any] = {
            "action": self.mt5.TRADE_ACTION_PENDING, "symbol": info.name, "volume": volume,
            "type": getattr(self.mt5, type_name), "price": entry, "sl": sl, "tp": tp, "magic": MAGIC,
            "comment": tag_of(cmd.command_id), "type_time": type_time, "expiration": expiration,
            "type_filling": self.mt5.ORDER_FILLING_RETURN,
        }
        if stop_limit:
            request["price"] = round(cmd.stop_limit_price or 0.0, info.digits)
            request["stoplimit"] = entry
        result = self.send(request)
        if not self._ok(result, self.mt5.TRADE_RETCODE_PLACED, self.mt5.TRADE_RETCODE_DONE):
            return self._broker(result)
        return Outcome("filled", ticket=str(result.order), price=entry, volume=volume,
                       retcode=int(result.retcode), message=note or str(result.comment))

    def _close_request(self, cmd: Command, pos: Any, volume: float, info: Any) -> Dict[str, Any]:
        buy = pos.type == self.mt5.POSITION_TYPE_BUY
        tick = self.tick(pos.symbol)
        return {
            "action": self.mt5.TRADE_ACTION_DEAL, "symbol": pos.symbol, "volume": volume, "position": pos.ticket,
            "type": self.mt5.ORDER_TYPE_SELL if buy else self.mt5.ORDER_TYPE_BUY, "price": tick.bid if buy else tick.ask,
            "deviation": DEVIATION_POINTS, "magic": MAGIC, "comment": tag_of(cmd.command_id),
            "type_time": self.mt5.ORDER_TIME_GTC, "type_filling": self._filling(info),
        }

    def close_one(self, cmd: Command) -> Outcome:
        pos = self.position(cmd.position_id)
        result = self.send(self._close_request(cmd, pos, pos.volume, self.symbol(pos.symbol)))
        if not self._ok(result, self.mt5.TRADE_RETCODE_DONE):
            return self._broker(result)
        return Outcome("done", ticket=str(pos.ticket), price=result.price, volume=result.volume,
                       retcode=int(result.retcode), message=str(result.comment))

    def _matching(self, cmd: Command) -> List[Any]:
        if cmd.symbol is not None:
            self.symbol(cmd.symbol)
        out = []
        for pos in self.positions():
            if cmd.symbol is not None and pos.symbol.upper() != cmd.symbol.upper():
                continue
            if cmd.side is not None and (pos.type == self.mt5.POSITION_TYPE_BUY) != (cmd.side == "buy"):
                continue
            if cmd.pnl == "profit" and not pos.profit > 0:
                continue
            if cmd.pnl == "loss" and not pos.profit < 0:
                continue
            out.append(pos)
        return out

    def close_many(self, cmd: Command, positions: List[Any], orders: List[Any]) -> Outcome:
        """Closes what it can; a symbol whose market is closed is skipped; rejected only if everything was skipped."""
        if not positions and not orders:
            return Outcome("done", message="nothing to close")
        closed: List[str] = []
        cancelled: List[str] = []
        skipped: List[str] = []
        failed: List[str] = []
        for pos in positions:
            result = self.send(self._close_request(cmd, pos, pos.volume, self.symbol(pos.symbol)))
            if self._ok(result, self.mt5.TRADE_RETCODE_DONE):
                closed.append(str(pos.ticket))
            elif int(result.retcode) == self.mt5.TRADE_RETCODE_MARKET_CLOSED:
                skipped.append(pos.symbol)
            else:
                failed.append(f"{pos.ticket}: {result.retcode} {result.comment}")
        for order in orders:
            result = self.send({"action": self.mt5.TRADE_ACTION_REMOVE, "order": order.ticket, "magic": MAGIC,
                                "comment": tag_of(cmd.command_id)})
            if self._ok(result, self.mt5.TRADE_RETCODE_DONE):
                cancelled.append(str(order.ticket))
            elif int(result.retcode) == self.mt5.TRADE_RETCODE_MARKET_CLOSED:
                skipped.append(order.symbol)
            else:
                failed.append(f"{order.ticket}: {result.retcode} {result.comment}")
        if not closed and not cancelled:
            if failed:
                return refused(self.mt5.TRADE_RETCODE_ERROR, "nothing closed: " + "; ".join(failed))
            return refused(self.mt5.TRADE_RETCODE_MARKET_CLOSED, "Market is closed: " + ", ".join(sorted(set(skipped))))
        parts = [f"closed {len(closed)} position(s)" + (f" {','.join(closed)}" if closed else "")]
        if orders:
            parts.append(f"cancelled {len(cancelled)} order(s)" + (f" {','.join(cancelled)}" if cancelled else ""))
        if skipped:
            parts.append("market closed: " + ", ".join(sorted(set(skipped))))
        if failed:
            parts.append("refused: " + "; ".join(failed))
        only = (closed + cancelled)[0] if len(closed) + len(cancelled) == 1 else None
        return Outcome("done", ticket=only, message="; ".join(parts))

    def partial_close(self, cmd: Command) -> Outcome:
        pos = self.position(cmd.position_id)
        if cmd.partial_volume is None:
            raise Refusal(refused(self.mt5.TRADE_RETCODE_INVALID, "Invalid request: partialVolume is required"))
        volume = pos.volume if cmd.partial_volume >= pos.volume - EPS else cmd.partial_volume
        result = self.send(self._close_request(cmd, pos, volume, self.symbol(pos.symbol)))
        if not self._ok(result, self.mt5.TRADE_RETCODE_DONE):
            return self._broker(result)
        full = volume >= pos.volume - EPS
        return Outcome("done", ticket=str(pos.ticket), price=result.price, volume=result.volume,
                       retcode=int(result.retcode), message="closed in full" if full else str(result.comment))

    def cancel_pending(self, cmd: Command) -> Outcome:
        order = self.order(cmd.order_id)
        result = self.send({"action": self.mt5.TRADE_ACTION_REMOVE, "order": order.ticket, "magic": MAGIC,
                            "comment": tag_of(cmd.command_id)})
        if not self._ok(result, self.mt5.TRADE_RETCODE_DONE):
            return self._broker(result)
        return Outcome("done", ticket=str(order.ticket), retcode=int(result.retcode), message=str(result.comment))

    def _done_or_no_changes(self, result: Any, ticket: Any) -> Outcome:
        if self._ok(result, self.mt5.TRADE_RETCODE_DONE, self.mt5.TRADE_RETCODE_NO_CHANGES):
            return Outcome("done", ticket=str(ticket), retcode=int(result.retcode), message=str(result.comment))
        return self._broker(result)

    def modify_position(self, cmd: Command) -> Outcome:
        pos = self.position(cmd.position_id)
        info = self.symbol(pos.symbol)
        sl, tp = pos.sl, pos.tp
        if cmd.action == "modify_sl":
            if cmd.sl is None:
                raise Refusal(refused(self.mt5.TRADE_RETCODE_INVALID, "Invalid request: sl is required"))
            sl = round(cmd.sl, info.digits)
        elif cmd.action == "modify_tp":
            if cmd.tp is None:
                raise Refusal(refused(self.mt5.TRADE_RETCODE_INVALID, "Invalid request: tp is required"))
            tp = round(cmd.tp, info.digits)
        else:
            sl = pos.price_open
        result = self.send({"action": self.mt5.TRADE_ACTION_SLTP, "symbol": pos.symbol, "position": pos.ticket,
                            "sl": sl, "tp": tp, "magic": MAGIC, "comment": tag_of(cmd.command_id)})
        return self._done_or_no_changes(result, pos.ticket)

    def modify_pending(self, cmd: Command) -> Outcome:
        order = self.order(cmd.order_id)
        info = self.symbol(order.symbol)
        expiry_only = cmd.action == "modify_pending_expiry"
        if expiry_only and cmd.expiry is None:
            raise Refusal(refused(self.mt5.TRADE_RETCODE_INVALID, "Invalid request: expiry is required"))
        given = [cmd.expiry] if expiry_only else [cmd.price, cmd.stop_limit_price, cmd.sl, cmd.tp, cmd.expiry]
        if all(v is None for v in given):
            raise Refusal(refused(self.mt5.TRADE_RETCODE_INVALID, "Invalid request: nothing to modify"))
        stop_limit = order.type in (self.mt5.ORDER_TYPE_BUY_STOP_LIMIT, self.mt5.ORDER_TYPE_SELL_STOP_LIMIT)
        if not expiry_only and cmd.stop_limit_price is not None and not stop_limit:
            raise Refusal(refused(self.mt5.TRADE_RETCODE_INVALID,
                                  f"Invalid request: order {order.ticket} has no stop-limit trigger"))
        # MT5 holds a stop-limit's trigger in price_open and its limit price in price_stoplimit.
        trigger, limit = (order.price_open, order.price_stoplimit) if stop_limit else (None, order.price_open)
        sl, tp = order.sl, order.tp
        if not expiry_only:
            limit = round(cmd.price, info.digits) if cmd.price is not None else limit
            trigger = round(cmd.stop_limit_price, info.digits) if cmd.stop_limit_price is not None else trigger
            sl = round(cmd.sl, info.digits) if cmd.sl is not None else sl
            tp = round(cmd.tp, info.digits) if cmd.tp is not None else tp
        if cmd.expiry is not None:
            type_time, expiration = self._expiration(cmd.expiry)
        else:
            type_time, expiration = order.type_time, order.time_expiration
        request: Dict[str, Any] = {"action": self.mt5.TRADE_ACTION_MODIFY, "order": order.ticket, "symbol": order.symbol,
                   "price": trigger if stop_limit else limit, "sl": sl, "tp": tp, "type_time": type_time,
                   "expiration": expiration, "magic": MAGIC, "comment": tag_of(cmd.command_id)}
        if stop_limit:
            request["stoplimit"] = limit
        return self._done_or_no_changes(self.send(request), order.ticket)

    # ---- after a crash ---------------------------------------------------------------------------------------------

    def recover(self, cmd: Command) -> Optional[Outcome]:
        """What the trade server shows a command already did, or None when it shows nothing and it may run (again).
        Only commands whose repetition would trade twice need this: entries and single closes; the others are
        idempotent on the server (a second SL/TP set is "no changes", close_all closes what is left)."""
        if cmd.action not in ENTRY_ACTIONS and cmd.action not in ("close", "partial_close"):
            return None
        if cmd.action == "close" and cmd.position_id is None:
            return None
        orders, deals = self.find(cmd.command_id, cmd.accepted_at)
        if not orders:
            return None
        order = orders[0]
        if cmd.action in ("buy", "sell"):
            deal = next((d for d in deals if d.order == order.ticket), None)
            return Outcome("filled", ticket=str(order.position_id or order.ticket),
                           price=deal.price if deal else order.price_open,
                           volume=deal.volume if deal else order.volume_initial,
                           message="recovered from the terminal's history after a restart")
        if cmd.action in ENTRY_ACTIONS:
            entry = order.price_stoplimit if cmd.action.endswith("stop_limit") else order.price_open
            return Outcome("filled", ticket=str(order.ticket), price=entry, volume=order.volume_initial,
                           message="recovered from the terminal's history after a restart")
        deal = next((d for d in deals if d.order == order.ticket), None)
        return Outcome("done", ticket=str(order.position_id), price=deal.price if deal else None,
                       volume=deal.volume if deal else order.volume_initial,
                       message="recovered from the terminal's history after a restart")
