"""The terminal's primitives the actions are built on: symbol and price lookups, positions and orders, `order_send`
with its fill policy, and what a command is answered with (Outcome, a Refusal). Every request carries the command's
tag as its comment, so after a crash the bridge can find what a command already did on the trade server (`find`).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .protocol import Retcode
from .risk import EquityMarks, utc_now

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


def close_opposite_tag(command_id: str) -> str:
    """The comment of the closes an entry's `closeOpposite` makes: its command's tag under another prefix, so the trade
    events name the cause (close_opposite) and the command, and the entry's own recovery (`find`) does not take them
    for the entry."""
    return "es-co:" + tag_of(command_id)[3:]


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


class Terminal:
    def __init__(self, mt5: Any, server_offset: Callable[[], int]) -> None:
        self.mt5 = mt5
        self._server_offset = server_offset
        # The loss guards' day-open and peak equity, as this bridge saw the account (in memory until the bridge sets a
        # file for them, beside its journal).
        self.marks = EquityMarks()
        # Told of every request before it leaves (the trade events note who modified or deleted what), with what the
        # trade event of the change should carry besides (a trailing stop's trailActiveAt).
        self.on_request: Optional[Callable[[Dict[str, Any], Optional[Dict[str, Any]]], None]] = None

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

    def positions_by_ticket(self, ticket: str) -> Optional[Any]:
        """The open position of this ticket, or None when the terminal shows none."""
        found = self._call("positions_get", self.mt5.positions_get(ticket=int(ticket))) if ticket.isdigit() else ()
        return found[0] if found else None

    def order_pending(self, ticket: str) -> bool:
        """Whether this pending order is still waiting on the trade server."""
        return bool(self._call("orders_get", self.mt5.orders_get(ticket=int(ticket)))) if ticket.isdigit() else False

    def account(self) -> Any:
        return self._call("account_info", self.mt5.account_info())

    def orders(self) -> Sequence[Any]:
        """The pending orders."""
        return self._call("orders_get", self.mt5.orders_get()) or ()

    def history_order(self, ticket: str) -> Optional[Any]:
        """An order that left the pending list (filled, cancelled, expired), from the terminal's history."""
        found = self._call("history_orders_get", self.mt5.history_orders_get(ticket=int(ticket))) if ticket.isdigit() else ()
        return found[0] if found else None

    def server_now_ms(self) -> float:
        """The trade server's clock (UTC now plus its offset): what a tick's time is measured against."""
        return utc_now().timestamp() * 1000 + self._server_offset() * 1000

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

    def send(self, request: Dict[str, Any], note: Optional[Dict[str, Any]] = None) -> Any:
        if self.on_request is not None:
            self.on_request(request, note)
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

    def _expiration(self, expiry: Optional[datetime]) -> Tuple[int, int]:
        """(type_time, expiration): MT5 counts expiration in trade-server time."""
        if expiry is None:
            return self.mt5.ORDER_TIME_GTC, 0
        return self.mt5.ORDER_TIME_SPECIFIED, int(expiry.timestamp()) + self._server_offset()
