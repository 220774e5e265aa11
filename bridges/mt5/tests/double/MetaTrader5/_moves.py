"""What the trade server does on its own between two requests, applied whenever the double is asked (the market is
where the test put it, so what it implies has happened by the time anyone looks):

* a position whose SL or TP the quote reached is closed there by the server: an opposite order of reason
  ORDER_REASON_SL/TP and a DEAL_ENTRY_OUT deal of reason DEAL_REASON_SL/TP, at the quote that reached it (a gap
  fills worse than the level, as on a real server), with the comment the terminal shows ("[sl 1.08000]");
* a pending limit or stop order the quote reached fills: the order goes to the history ORDER_STATE_FILLED, and a
  DEAL_ENTRY_IN deal (the order's reason and comment) opens the position, whose ticket on a hedging account is the
  order's. Stop-limit orders are not triggered (a real server places a limit order then; nothing here needs it);
* a pending order past its ORDER_TIME_SPECIFIED expiration goes to the history ORDER_STATE_EXPIRED;
* `terminal_ops` in market.json, each applied once (by its `id`): what a trader does by hand in the terminal or what
  the broker does itself, `{"id": "…", "op": "close", "ticket": N, "volume"?: lots, "reason"?: "client" | "mobile" |
  "web" | "so"}` (a close of that reason, "so" being the broker's margin stop-out) and `{"id": "…", "op": "cancel",
  "ticket": N}` (a pending order deleted by hand).
"""
from __future__ import annotations

from typing import Any, Dict

import MetaTrader5 as _m

_REASONS = {"client": _m.DEAL_REASON_CLIENT, "mobile": _m.DEAL_REASON_MOBILE, "web": _m.DEAL_REASON_WEB,
            "so": _m.DEAL_REASON_SO}


def _digits(symbol: str) -> int:
    return int(_m._specs()[symbol]["digits"])


def _terminal_op(state: Dict[str, Any], op: Dict[str, Any]) -> None:
    if op.get("op") == "close":
        pos = next((p for p in state["positions"] if p["ticket"] == op.get("ticket")), None)
        if pos is None:
            return
        bid, ask = _m._quote(_m._specs()[pos["symbol"]])
        price = bid if pos["type"] == _m.POSITION_TYPE_BUY else ask
        volume = min(float(op.get("volume") or pos["volume"]), pos["volume"])
        reason = _REASONS[op.get("reason", "client")]
        comment = f"[so {op.get('level', '50.00')}%]" if reason == _m.DEAL_REASON_SO else ""
        _m._close(state, pos, volume, price, reason, comment, 0)
    elif op.get("op") == "cancel":
        order = next((o for o in state["orders"] if o["ticket"] == op.get("ticket")), None)
        if order is None:
            return
        now, _ = _m._server_now()
        state["orders"].remove(order)
        order.update(state=_m.ORDER_STATE_CANCELED, time_done=now)
        state["history_orders"].append(order)


def _reached(otype: int, level: float, bid: float, ask: float) -> bool:
    return {
        _m.ORDER_TYPE_BUY_LIMIT: ask <= level, _m.ORDER_TYPE_SELL_LIMIT: bid >= level,
        _m.ORDER_TYPE_BUY_STOP: ask >= level, _m.ORDER_TYPE_SELL_STOP: bid <= level,
    }.get(otype, False)


def settle(state: Dict[str, Any]) -> bool:
    """Applies what happened since the last look; True when the trade server's state changed."""
    changed = False
    market = _m._market()
    specs = _m._specs()
    closed = set(market.get("closed", []))
    applied = state.setdefault("applied_ops", [])
    for op in market.get("terminal_ops", []):
        if op.get("id") in applied:
            continue
        applied.append(op.get("id"))
        _terminal_op(state, op)
        changed = True
    now, _ = _m._server_now()
    for order in list(state["orders"]):
        if order["type_time"] == _m.ORDER_TIME_SPECIFIED and 0 < order["time_expiration"] <= now:
            state["orders"].remove(order)
            order.update(state=_m.ORDER_STATE_EXPIRED, time_done=order["time_expiration"])
            state["history_orders"].append(order)
            changed = True
    for order in list(state["orders"]):
        if order["symbol"] in closed:
            continue
        spec = specs[order["symbol"]]
        bid, ask = _m._quote(spec)
        if not _reached(order["type"], order["price_open"], bid, ask):
            continue
        buy = order["type"] in (_m.ORDER_TYPE_BUY_LIMIT, _m.ORDER_TYPE_BUY_STOP)
        price = ask if buy else bid
        state["orders"].remove(order)
        order.update(state=_m.ORDER_STATE_FILLED, time_done=now, volume_current=0.0, position_id=order["ticket"],
                     price_current=price)
        state["history_orders"].append(order)
        _m._open_position(state, spec, order["ticket"], order["type"], order["volume_initial"], price, order["sl"],
                          order["tp"], order["magic"], order["comment"], order.get("reason", _m.DEAL_REASON_EXPERT))
        changed = True
    for pos in list(state["positions"]):
        if pos["symbol"] in closed:
            continue
        bid, ask = _m._quote(specs[pos["symbol"]])
        buy = pos["type"] == _m.POSITION_TYPE_BUY
        price = bid if buy else ask
        hit_sl = pos["sl"] and (price <= pos["sl"] if buy else price >= pos["sl"])
        hit_tp = pos["tp"] and (price >= pos["tp"] if buy else price <= pos["tp"])
        if not (hit_sl or hit_tp):
            continue
        reason, level, tag = (_m.DEAL_REASON_SL, pos["sl"], "sl") if hit_sl else (_m.DEAL_REASON_TP, pos["tp"], "tp")
        _m._close(state, pos, pos["volume"], price, reason, f"[{tag} {level:.{_digits(pos['symbol'])}f}]", pos["magic"])
        changed = True
    return changed
