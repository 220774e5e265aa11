"""Closing and modifying what is open: close, close_all (with its filters), partial_close, cancel_pending, modify_sl,
modify_tp, breakeven (a position's SL and TP), and the modify_pending family."""
from __future__ import annotations

from typing import Any, Dict, List

from .protocol import Command

from .terminal import DEVIATION_POINTS, EPS, MAGIC, Outcome, Refusal, Terminal, refused, tag_of


class PositionActions(Terminal):
    def close_request(self, comment: str, pos: Any, volume: float, info: Any) -> Dict[str, Any]:
        buy = pos.type == self.mt5.POSITION_TYPE_BUY
        tick = self.tick(pos.symbol)
        return {
            "action": self.mt5.TRADE_ACTION_DEAL, "symbol": pos.symbol, "volume": volume, "position": pos.ticket,
            "type": self.mt5.ORDER_TYPE_SELL if buy else self.mt5.ORDER_TYPE_BUY, "price": tick.bid if buy else tick.ask,
            "deviation": DEVIATION_POINTS, "magic": MAGIC, "comment": comment,
            "type_time": self.mt5.ORDER_TIME_GTC, "type_filling": self._filling(info),
        }

    def close_whole(self, pos: Any, comment: str) -> Any:
        """The trade server's answer to closing all of a position at market (the opposite deal on its ticket)."""
        return self.send(self.close_request(comment, pos, pos.volume, self.symbol(pos.symbol)))

    def remove_order(self, order: Any, comment: str) -> Any:
        return self.send({"action": self.mt5.TRADE_ACTION_REMOVE, "order": order.ticket, "magic": MAGIC, "comment": comment})

    def close_one(self, cmd: Command) -> Outcome:
        pos = self.position(cmd.position_id)
        result = self.close_whole(pos, tag_of(cmd.command_id))
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
            result = self.close_whole(pos, tag_of(cmd.command_id))
            if self._ok(result, self.mt5.TRADE_RETCODE_DONE):
                closed.append(str(pos.ticket))
            elif int(result.retcode) == self.mt5.TRADE_RETCODE_MARKET_CLOSED:
                skipped.append(pos.symbol)
            else:
                failed.append(f"{pos.ticket}: {result.retcode} {result.comment}")
        for order in orders:
            result = self.remove_order(order, tag_of(cmd.command_id))
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
        result = self.send(self.close_request(tag_of(cmd.command_id), pos, volume, self.symbol(pos.symbol)))
        if not self._ok(result, self.mt5.TRADE_RETCODE_DONE):
            return self._broker(result)
        full = volume >= pos.volume - EPS
        return Outcome("done", ticket=str(pos.ticket), price=result.price, volume=result.volume,
                       retcode=int(result.retcode), message="closed in full" if full else str(result.comment))

    def cancel_pending(self, cmd: Command) -> Outcome:
        order = self.order(cmd.order_id)
        result = self.remove_order(order, tag_of(cmd.command_id))
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

