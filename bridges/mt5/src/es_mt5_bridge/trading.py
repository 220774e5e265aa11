"""The terminal side: each of the 17 actions as `order_send` requests of the official MetaTrader5 package.

Prices: `sl`/`tp` as given, or from `slPips`/`tpPips` with the symbol's pip size (from the fill price for market
entries, from the entry price for pending ones). Stop-limit: the service's `stopLimitPrice` is the trigger, which MT5
calls `price`; the service's `price` is the limit order's price, MT5's `stoplimit`.

Every request carries the command's tag as its comment, so after a crash the bridge can find what a command already
did on the trade server (`find`): the terminal's own history is the truth, not the bridge's memory.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from .protocol import ENTRY_ACTIONS, Command
from .management import entry_refusal
from .risk import guard_refusal, size_by_risk, stale_refusal, utc_now

from .positions import PositionActions
from .terminal import DEVIATION_POINTS, EPS, MAGIC, Outcome, Refusal, close_opposite_tag, refused, tag_of, pip_size


class Trader(PositionActions):
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
            return self.close_many(cmd, list(self.positions()), list(self.orders()))
        if a == "partial_close":
            return self.partial_close(cmd)
        if a == "cancel_pending":
            return self.cancel_pending(cmd)
        if a in ("modify_sl", "modify_tp", "breakeven"):
            return self.modify_position(cmd)
        return self.modify_pending(cmd)

    def _guard_open_positions(self, cmd: Command, symbol: str) -> None:
        if cmd.max_open_positions is None and cmd.max_open_positions_per_symbol is None:
            return
        positions = self.positions()
        if cmd.max_open_positions is not None and len(positions) >= cmd.max_open_positions:
            raise Refusal(refused("risk_max_open_positions",
                                  f"the account already has {len(positions)} open position(s); the maximum is {cmd.max_open_positions}"))
        in_symbol = sum(1 for p in positions if p.symbol == symbol)
        if cmd.max_open_positions_per_symbol is not None and in_symbol >= cmd.max_open_positions_per_symbol:
            raise Refusal(refused("risk_max_open_positions",
                                  f"the account already has {in_symbol} open position(s) in {symbol}; "
                                  f"the maximum per symbol is {cmd.max_open_positions_per_symbol}"))

    def _volume(self, cmd: Command, info: Any, buy: bool, entry: float) -> Tuple[Optional[float], Optional[str]]:
        """The lots to place and the sizing note: the loss guards first, then sizing by risk on the live account."""
        if cmd.loss_guards is None and cmd.risk_sizing is None:
            return cmd.volume, None
        self._refuse_stale(cmd, info)
        account = self.account()
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

    def _refuse_stale(self, cmd: Command, info: Any) -> None:
        """The ticks the figures rest on: the entry's when sized (the terminal's tick value converts with its own rates),
        the open positions' when equity counts (the terminal values them at their last ticks)."""
        if cmd.figures_max_age_ms is None:
            return
        symbols = [info.name] if cmd.risk_sizing is not None else []
        if cmd.loss_guards is not None or (cmd.risk_sizing or {}).get("basis") == "equity_percent":
            symbols += sorted({str(p.symbol) for p in self.positions()} - set(symbols))
        ticks = [(name, self.tick(name)) for name in symbols]
        refusal = stale_refusal(ticks, cmd.figures_max_age_ms, self.server_now_ms())
        if refusal is not None:
            raise Refusal(refused(*refusal))

    def _stops(self, cmd: Command, info: Any, buy: bool, entry: float) -> Tuple[float, float]:
        pip = pip_size(info.digits, info.point, info.name)
        direction = 1 if buy else -1
        sl = cmd.sl if cmd.sl is not None else (entry - direction * cmd.sl_pips * pip if cmd.sl_pips is not None else 0.0)
        tp = cmd.tp if cmd.tp is not None else (entry + direction * cmd.tp_pips * pip if cmd.tp_pips is not None else 0.0)
        return round(sl, info.digits), round(tp, info.digits)

    def market_entry(self, cmd: Command, buy: bool) -> Outcome:
        info = self.symbol(cmd.symbol)
        self._guard_open_positions(cmd, info.name)
        tick = self.tick(info.name)
        price = tick.ask if buy else tick.bid
        volume, note = self._volume(cmd, info, buy, price)
        if volume is None:
            raise Refusal(refused(self.mt5.TRADE_RETCODE_INVALID, "Invalid request: volume is required"))
        if cmd.management:
            self._before_entry(cmd, info, buy, tick, None)
            tick = self.tick(info.name)
            price = tick.ask if buy else tick.bid
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
        if self.on_request is not None:
            self.on_request({"action": self.mt5.TRADE_ACTION_SLTP, "position": int(result.order), "comment": tag_of(cmd.command_id)}, None)
        self.mt5.order_send({"action": self.mt5.TRADE_ACTION_SLTP, "symbol": info.name, "position": int(result.order),
                             "sl": sl, "tp": tp, "magic": MAGIC, "comment": tag_of(cmd.command_id)})

    _PENDING = {
        "buy_limit": ("ORDER_TYPE_BUY_LIMIT", True), "sell_limit": ("ORDER_TYPE_SELL_LIMIT", False),
        "buy_stop": ("ORDER_TYPE_BUY_STOP", True), "sell_stop": ("ORDER_TYPE_SELL_STOP", False),
        "buy_stop_limit": ("ORDER_TYPE_BUY_STOP_LIMIT", True), "sell_stop_limit": ("ORDER_TYPE_SELL_STOP_LIMIT", False),
    }

    def pending_entry(self, cmd: Command) -> Outcome:
        type_name, buy = self._PENDING[cmd.action]
        info = self.symbol(cmd.symbol)
        self._guard_open_positions(cmd, info.name)
        if cmd.price is None:
            raise Refusal(refused(self.mt5.TRADE_RETCODE_INVALID, "Invalid request: volume and price are required"))
        stop_limit = cmd.action.endswith("stop_limit")
        if stop_limit and cmd.stop_limit_price is None:
            raise Refusal(refused(self.mt5.TRADE_RETCODE_INVALID, "Invalid request: stopLimitPrice is required"))
        entry = round(cmd.price, info.digits)
        volume, note = self._volume(cmd, info, buy, entry)
        if volume is None:
            raise Refusal(refused(self.mt5.TRADE_RETCODE_INVALID, "Invalid request: volume and price are required"))
        if cmd.management:
            self._before_entry(cmd, info, buy, self.tick(info.name) if "maxSpreadPips" in cmd.management else None, entry)
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

    # ---- trade management before the entry (protocol 1.6, docs/trade-management.md §5) ----------------------------

    def _before_entry(self, cmd: Command, info: Any, buy: bool, tick: Any, pending_at: Optional[float]) -> None:
        """After the risk checks, in the contract's order: the spread, the take-profit levels' prices, then the close
        of the positions on the other side. A pending entry's levels are judged against its own entry price."""
        side = "buy" if buy else "sell"
        pip = pip_size(info.digits, info.point, info.name)
        asked = cmd.management
        if tick is not None:
            spread = entry_refusal({k: v for k, v in asked.items() if k == "maxSpreadPips"}, side,
                                   {"bid": float(tick.bid), "ask": float(tick.ask)}, pip)
            if spread is not None:
                raise Refusal(refused(*spread))
        at = {"bid": float(tick.bid), "ask": float(tick.ask)} if pending_at is None else {"bid": pending_at, "ask": pending_at}
        levels = entry_refusal({"takeProfits": asked.get("takeProfits") or [], **({"tp": cmd.tp} if cmd.tp is not None else {})},
                               side, at, pip)
        if levels is not None:
            raise Refusal(refused(*levels))
        if asked.get("closeOpposite") and pending_at is None:
            self._close_opposite(cmd, info, buy)

    def _close_opposite(self, cmd: Command, info: Any, buy: bool) -> None:
        """Every position of the symbol on the other side closed in full, one by one, before the entry (a reverse)."""
        closed: List[str] = []
        for pos in self.positions():
            if pos.symbol != info.name or (pos.type == self.mt5.POSITION_TYPE_BUY) == buy:
                continue
            try:
                result = self.close_whole(pos, close_opposite_tag(cmd.command_id))
                failure = None if self._ok(result, self.mt5.TRADE_RETCODE_DONE) else f"{result.retcode} {result.comment}"
            except Refusal as refusal:
                failure = f"{refusal.outcome.retcode} {refusal.outcome.message}"
            if failure is not None:
                done = ", ".join(closed) if closed else "none"
                raise Refusal(refused("close_opposite_failed",
                                      f"closed {done}; closing position {pos.ticket} failed: {failure}; nothing opened"))
            closed.append(str(pos.ticket))

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
