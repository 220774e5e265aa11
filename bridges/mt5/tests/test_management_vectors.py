"""The engine's port (es_mt5_bridge.management) on the vectors the TypeScript engine runs
(test/fixtures/trade-management-vectors.json, with the semantics of test/unit/trade-management.test.ts)."""
from __future__ import annotations

import json
import os
from typing import Any, Dict

import pytest

from conftest import HERE
from es_mt5_bridge.management import entry_refusal, on_quote, resume, round_to, settle, start_managing

VECTORS_FILE = os.path.join(HERE, "..", "..", "..", "test", "fixtures", "trade-management-vectors.json")
with open(VECTORS_FILE, encoding="utf-8") as _f:
    VECTORS: Dict[str, Any] = json.load(_f)


@pytest.mark.parametrize("case", VECTORS["cases"], ids=[c["name"] for c in VECTORS["cases"]])
def test_the_shared_vectors(case: Dict[str, Any]) -> None:
    p = start_managing(case["asked"], {"ticket": "1", "symbol": "EURUSD", **case["fill"]}, case.get("rules") or VECTORS["eurusd"])
    assert p is not None
    if "expectLevels" in case:
        assert [{"price": level["price"], "volume": level["volume"]} for level in p["levels"]] == case["expectLevels"]
    for i, step in enumerate(case["steps"]):
        where = f"step {i}"
        now = step.get("nowMs", 10_000 * (i + 1))
        if "quote" in step:
            assert p is not None, where
            p, intent = on_quote(p, step["quote"], now)
            assert (where, intent) == (where, step.get("intent"))
            if intent is not None and step.get("answer") != "crash":
                p = settle(p, step.get("answer", "done"), now)
        elif "restart" in step:
            p = resume(p, step["restart"])
        e = step.get("expect")
        if not e:
            continue
        if "gone" in e:
            assert (where, p is None) == (where, e["gone"])
        if p is None:
            continue
        seen = {
            "sl": p["sl"], "stopMoves": p["stopMoves"], "volume": p["volume"],
            "levelsHit": sum(1 for level in p["levels"] if level["hit"]),
            "breakevenDone": (p.get("breakeven") or {}).get("done"),
            "trailActiveAt": (p.get("trail") or {}).get("activeAt"),
        }
        wanted = {k: v for k, v in e.items() if k != "gone"}
        assert (where, {k: seen[k] for k in wanted}) == (where, wanted)


def test_nothing_asked_nothing_managed() -> None:
    fill = {"ticket": "1", "symbol": "EURUSD", "side": "buy", "openPrice": 1.085, "volume": 0.1, "sl": None, "tp": None}
    assert start_managing({}, fill, VECTORS["eurusd"]) is None


def test_no_call_is_asked_while_one_is_in_flight() -> None:
    fill = {"ticket": "1", "symbol": "EURUSD", "side": "buy", "openPrice": 1.085, "volume": 0.1, "sl": None, "tp": None}
    p = start_managing({"breakevenTriggerPips": 5}, fill, VECTORS["eurusd"])
    assert p is not None
    first, intent = on_quote(p, {"bid": 1.086, "ask": 1.0861}, 0)
    assert intent is not None
    assert on_quote(first, {"bid": 1.087, "ask": 1.0871}, 1)[1] is None


def test_a_stop_the_price_has_already_passed_is_not_asked_for() -> None:
    fill = {"ticket": "1", "symbol": "EURUSD", "side": "buy", "openPrice": 1.085, "volume": 0.1, "sl": None, "tp": None}
    p = start_managing({"trailDistancePips": 3, "trailTriggerPips": 0, "trailStepPips": 1}, fill, VECTORS["eurusd"])
    assert p is not None
    fallen = {**p, "trail": {**p["trail"], "activeAt": 1.086, "best": 1.087}}
    assert on_quote(fallen, {"bid": 1.0865, "ask": 1.0866}, 0)[1] is None
    _, intent = on_quote(fallen, {"bid": 1.0868, "ask": 1.0869}, 0)
    assert intent is not None and (intent["kind"], intent["sl"], intent["cause"]) == ("modify", 1.0867, "trailing_stop")


Q = {"bid": 1.085, "ask": 1.0852}


def test_a_spread_wider_than_the_max_is_refused_naming_both() -> None:
    assert entry_refusal({"maxSpreadPips": 1.5}, "buy", Q, 0.0001) == ("spread_too_wide", "spread 2 pips > max 1.5")
    assert entry_refusal({"maxSpreadPips": 2}, "buy", Q, 0.0001) is None


def test_a_level_on_the_losing_side_or_past_the_final_take_profit_is_refused() -> None:
    assert entry_refusal({"takeProfits": [{"tp": 1.0851, "closePercent": 50}]}, "buy", Q, 0.0001)[0] == "take_profit_level_invalid"  # type: ignore[index]
    assert entry_refusal({"takeProfits": [{"tp": 1.0849, "closePercent": 50}]}, "sell", Q, 0.0001) is None
    assert entry_refusal({"takeProfits": [{"tp": 1.0851, "closePercent": 50}]}, "sell", Q, 0.0001) == (
        "take_profit_level_invalid", "take-profit level 1.0851 is not below the bid 1.085")
    assert entry_refusal({"tp": 1.087, "takeProfits": [{"tp": 1.0875, "closePercent": 50}]}, "buy", Q, 0.0001)[0] == "take_profit_level_invalid"  # type: ignore[index]
    assert entry_refusal({"tp": 1.087, "takeProfits": [{"tp": 1.086, "closePercent": 50}]}, "buy", Q, 0.0001) is None


@pytest.mark.parametrize("value, digits, js", [
    (1.00005, 4, 1.0001),  # the binary value is just above the half: both round up
    (0.125, 2, 0.13),  # an exact half: toFixed rounds up where Python's round goes to even (0.12)
    (2.5, 0, 3.0),
    (1.08455, 5, 1.08455),
])
def test_prices_are_rounded_as_javascripts_toFixed_rounds_them(value: float, digits: int, js: float) -> None:
    assert round_to(value, digits) == js
