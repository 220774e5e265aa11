"""Trade management (protocol 1.6; docs/trade-management.md): a faithful port of the pure engine
src/bridge/trade-management.ts. The bridge feeds it quotes and carries out the one broker call it asks for at a time;
the broker always holds the real stop, so a bridge that is down leaves the position protected by the last stop set.

The state of a position is a plain dict with the TypeScript engine's field names (camelCase), so this bridge's state
file reads like the other bridges' and test/fixtures/trade-management-vectors.json runs unchanged against both.
Prices and lots are rounded as JavaScript's `Number(v.toFixed(d))` rounds them (decimal half up on the exact binary
value), not as Python's `round` (half to even): the two engines must agree to the last digit.
"""
from __future__ import annotations

import copy
import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Dict, List, Optional, Tuple

EPSILON = 1e-9
RETRY_AFTER_FAILURE_MS = 1000

Position = Dict[str, Any]
Intent = Dict[str, Any]
# The command's management fields (bridge protocol 1.6), defaults resolved by the service.
Asked = Dict[str, Any]


def round_to(value: float, digits: int) -> float:
    """JavaScript's Number(value.toFixed(digits))."""
    return float(Decimal(value).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def _decimals_of(step: float) -> int:
    exponent = Decimal(repr(float(step))).normalize().as_tuple().exponent
    return max(0, -int(exponent))


def lots(value: float, step: float) -> float:
    return round_to(value, _decimals_of(step))


def start_managing(asked: Asked, fill: Dict[str, Any], rules: Dict[str, Any]) -> Optional[Position]:
    """The position to manage after a fill, or None when the command asked for no management.
    `fill`: ticket, symbol, side, openPrice, volume, sl, tp; `rules`: pip, digits, volumeStep, volumeMin."""
    trailing = asked.get("trailDistancePips") is not None
    breakeven = asked.get("breakevenTriggerPips") is not None
    levels = _levels_of(asked.get("takeProfits") or [], fill, rules)
    if not trailing and not breakeven and not levels:
        return None
    p: Position = {**fill, **rules, "initialVolume": fill["volume"]}
    if trailing:
        p["trail"] = {"distancePips": asked["trailDistancePips"],
                      "triggerPips": asked["trailTriggerPips"] if asked.get("trailTriggerPips") is not None else 0,
                      "stepPips": asked["trailStepPips"] if asked.get("trailStepPips") is not None else 1,
                      "activeAt": None, "best": None}
    if breakeven:
        offset = asked.get("breakevenOffsetPips")
        p["breakeven"] = {"triggerPips": asked["breakevenTriggerPips"], "offsetPips": offset if offset is not None else 0,
                          "done": False}
    p.update(levels=levels, stopMoves=0, pending=None, failedAtMs=None)
    return p


def _levels_of(asked: List[Dict[str, Any]], fill: Dict[str, Any], rules: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Levels nearest first. A level's lots are its share of the entry rounded down to the volume step (never more
    than asked), raised to the minimum lot; when the shares add up to 100 % the last level takes whatever remains."""
    sign = 1 if fill["side"] == "buy" else -1
    priced = [{"price": level["tp"] if level.get("tp") is not None
               else round_to(fill["openPrice"] + sign * (level.get("tpPips") or 0) * rules["pip"], rules["digits"]),
               "closePercent": level["closePercent"]} for level in asked]
    priced.sort(key=lambda level: abs(level["price"] - fill["openPrice"]))
    total = 0.0
    for level in priced:
        total += level["closePercent"]
    whole = abs(total - 100) < EPSILON
    out = []
    step = rules["volumeStep"]
    for i, level in enumerate(priced):
        share = int(math.floor(fill["volume"] * level["closePercent"] / 100 / step + EPSILON)) * step
        volume = fill["volume"] if whole and i == len(priced) - 1 else max(lots(share, step), rules["volumeMin"])
        out.append({**level, "volume": lots(volume, step), "hit": False})
    return out


def _closing_price(p: Position, quote: Dict[str, float]) -> float:
    """Bid for a buy, ask for a sell."""
    return quote["bid"] if p["side"] == "buy" else quote["ask"]


def _better(p: Position, a: float, than: Optional[float]) -> bool:
    return than is None or (a > than + EPSILON if p["side"] == "buy" else a < than - EPSILON)


def on_quote(position: Position, quote: Dict[str, float], now_ms: float) -> Tuple[Position, Optional[Intent]]:
    """One quote: the position's new state and at most one broker call to make. Nothing is asked while a call is in
    flight or within a second of a refused one. The stop only ever moves in the trade's favour."""
    if position.get("pending"):
        return position, None
    p = copy.deepcopy(position)
    c = _closing_price(p, quote)
    sign = 1 if p["side"] == "buy" else -1
    profit_pips = sign * (c - p["openPrice"]) / p["pip"]
    trail = p.get("trail")
    if trail:
        if trail["activeAt"] is None and profit_pips >= trail["triggerPips"] - EPSILON:
            trail["activeAt"], trail["best"] = c, c
        elif trail["activeAt"] is not None:
            trail["best"] = c if trail["best"] is None or _better(p, c, trail["best"]) else trail["best"]
    if p.get("failedAtMs") is not None and now_ms - p["failedAtMs"] < RETRY_AFTER_FAILURE_MS:
        return p, None

    index = next((i for i, level in enumerate(p["levels"]) if not level["hit"]), -1)
    if index >= 0 and sign * (c - p["levels"][index]["price"]) >= -EPSILON:
        asked = p["levels"][index]
        whole = index == len(p["levels"]) - 1 and asked["volume"] >= p["volume"] - EPSILON
        volume = min(asked["volume"], p["volume"])
        if whole or p["volume"] - volume < p["volumeMin"] - EPSILON:
            volume = p["volume"]
        intent: Intent = {"kind": "partial_close", "level": index, "volume": lots(volume, p["volumeStep"]),
                          "volumeBefore": p["volume"], "closesPosition": volume >= p["volume"] - EPSILON}
        p["pending"] = intent
        return p, intent

    # A stop must stay on the losing side of the price, or the broker refuses it (the stop would already be hit).
    def placeable(sl: float) -> bool:
        return sl < quote["bid"] - EPSILON if p["side"] == "buy" else sl > quote["ask"] + EPSILON

    breakeven_sl: Optional[float] = None
    be = p.get("breakeven")
    if be and not be["done"] and profit_pips >= be["triggerPips"] - EPSILON:
        breakeven_sl = round_to(p["openPrice"] + sign * be["offsetPips"] * p["pip"], p["digits"])
        if not _better(p, breakeven_sl, p["sl"]):
            be["done"] = True
            breakeven_sl = None
        elif not placeable(breakeven_sl):
            breakeven_sl = None
    trail_sl: Optional[float] = None
    trail_from: Optional[float] = None
    if trail and trail["activeAt"] is not None and trail["best"] is not None:
        candidate = round_to(trail["best"] - sign * trail["distancePips"] * p["pip"], p["digits"])
        stepped = p["sl"] is None or sign * (candidate - p["sl"]) >= trail["stepPips"] * p["pip"] - EPSILON
        if stepped and _better(p, candidate, p["sl"]) and placeable(candidate):
            trail_sl, trail_from = candidate, trail["activeAt"]
    if breakeven_sl is None and trail_sl is None:
        return p, None
    by_breakeven = trail_sl is None or (breakeven_sl is not None and not _better(p, trail_sl, breakeven_sl))
    if by_breakeven:
        intent = {"kind": "modify", "sl": breakeven_sl, "tp": p["tp"], "cause": "breakeven_trigger"}
    else:
        intent = {"kind": "modify", "sl": trail_sl, "tp": p["tp"], "cause": "trailing_stop",
                  "trailActiveAt": trail_from}
    p["pending"] = intent
    return p, intent


def settle(position: Position, result: str, now_ms: float) -> Optional[Position]:
    """The broker's answer ("done" or "failed") to the call in flight; None when the position is gone."""
    intent = position.get("pending")
    if not intent:
        return position
    if result == "failed":
        return {**position, "pending": None, "failedAtMs": now_ms}
    p = {**position, "pending": None, "failedAtMs": None}
    if intent["kind"] == "modify":
        p["sl"] = intent["sl"]
        p["stopMoves"] += 1
        if intent["cause"] == "breakeven_trigger" and p.get("breakeven"):
            p["breakeven"] = {**p["breakeven"], "done": True}
        return p
    if intent["closesPosition"]:
        return None
    p["volume"] = lots(intent["volumeBefore"] - intent["volume"], p["volumeStep"])
    p["levels"] = [{**level, "hit": True} if i == intent["level"] else level for i, level in enumerate(p["levels"])]
    return p


def resume(saved: Position, broker: Optional[Dict[str, Any]]) -> Optional[Position]:
    """After a restart: the state read back from the file, squared with the broker's position (sl, tp, volume; None
    when gone). A call that was in flight counts as done only if the broker shows it; otherwise it is dropped and the
    next quote decides anew. Never sends a call by itself, so a restart never moves a stop twice for one step."""
    if broker is None:
        return None
    p: Position = saved
    intent = saved.get("pending")
    half_point = 0.5 * 10 ** -saved["digits"]
    if intent and intent["kind"] == "modify" and broker["sl"] is not None and abs(broker["sl"] - intent["sl"]) <= half_point:
        p = settle(p, "done", 0)  # type: ignore[assignment]
    elif intent and intent["kind"] == "partial_close" and broker["volume"] <= intent["volumeBefore"] - intent["volume"] + EPSILON:
        p = settle({**p, "pending": {**intent, "closesPosition": False}}, "done", 0)  # type: ignore[assignment]
    else:
        p = {**p, "pending": None}
    p = {**p, "sl": broker["sl"], "tp": broker["tp"], "volume": broker["volume"], "failedAtMs": None}
    trail = p.get("trail")
    # The trail's best price since it started is at least what the stop it set implies.
    if trail and trail["activeAt"] is not None and p["sl"] is not None:
        implied = round_to(p["sl"] + (1 if p["side"] == "buy" else -1) * trail["distancePips"] * p["pip"], p["digits"])
        if trail["best"] is None or _better(p, implied, trail["best"]):
            p["trail"] = {**trail, "best": implied}
    return p


def entry_refusal(asked: Asked, side: str, quote: Dict[str, float], pip: float) -> Optional[Tuple[str, str]]:
    """Why an entry must not be placed at this quote (checked before anything is closed or placed): (reason, message)."""
    spread_pips = (quote["ask"] - quote["bid"]) / pip
    max_spread = asked.get("maxSpreadPips")
    if max_spread is not None and spread_pips > max_spread + EPSILON:
        return "spread_too_wide", f"spread {_js_number(round_to(spread_pips, 1))} pips > max {_js_number(max_spread)}"
    sign = 1 if side == "buy" else -1
    reference = quote["ask"] if side == "buy" else quote["bid"]
    for level in asked.get("takeProfits") or []:
        tp = level.get("tp")
        if tp is None:
            continue
        if sign * (tp - reference) <= EPSILON:
            where = "above the ask" if side == "buy" else "below the bid"
            return "take_profit_level_invalid", f"take-profit level {_js_number(tp)} is not {where} {_js_number(reference)}"
        final = asked.get("tp")
        if final is not None and sign * (tp - final) >= -EPSILON:
            return ("take_profit_level_invalid",
                    f"take-profit level {_js_number(tp)} is not nearer than the final take profit {_js_number(final)}")
    return None


def _js_number(value: float) -> str:
    """A number as JavaScript prints it in a template string (2, not 2.0)."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def summary(p: Position) -> Dict[str, Any]:
    """What the dashboard and trade events show of it."""
    trail = p.get("trail")
    return {"trailActiveAt": trail["activeAt"] if trail else None, "stopMoves": p["stopMoves"],
            "levelsHit": sum(1 for level in p["levels"] if level["hit"]), "levels": len(p["levels"])}
