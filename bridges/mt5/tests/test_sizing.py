"""Sizing by risk over the table the service's TypeScript tests use too (test/fixtures/risk-sizing-cases.json): the
bridge sizes every case as the paper bridge does."""
from __future__ import annotations

import json
import math
import os
import random
from typing import Any, Dict, List

import pytest

from es_mt5_bridge.sizing import Instrument, Refused, Sized, lots_for_risk, risk_amount_of, stop_distance, tick_value_of

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "test", "fixtures", "risk-sizing-cases.json")
with open(TABLE, encoding="utf-8") as f:
    CASES: List[Dict[str, Any]] = json.load(f)["cases"]


def close(actual: float, expected: float) -> bool:
    """The table rounds tickValue to 10 decimals and lossPerLot to 8."""
    return abs(actual - expected) <= 1e-9 * max(1.0, abs(expected))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_each_case_of_the_shared_table_sizes_as_worked_out_by_hand(case: Dict[str, Any]) -> None:
    spec, account, expect, stop = case["instrument"], case["account"], case["expect"], case["stop"]
    tick_value = tick_value_of(spec["tickSize"], spec["contractSize"], case["quoteToAccountRate"])
    assert close(tick_value, expect["tickValue"]), case["check"]
    risk = risk_amount_of(case["mode"]["basis"], case["mode"]["value"], account["balance"], account["equity"])
    assert close(risk, expect["riskAmount"]), case["check"]
    distance = stop_distance(case["entry"], sl=stop.get("sl"), sl_pips=stop.get("slPips"), pip_size=stop.get("pipSize"))
    assert close(distance, expect["stopDistance"]), case["check"]

    instrument = Instrument(spec["tickSize"], tick_value, spec["volumeMin"], spec["volumeStep"], spec["volumeMax"])
    sized = lots_for_risk(risk, distance, instrument, case.get("maxLot"))
    if "reason" in expect:
        assert sized == Refused(expect["reason"]), case["check"]
        return
    assert isinstance(sized, Sized), (sized, case["check"])
    assert (sized.lots, sized.capped) == (expect["lots"], expect["capped"]), case["check"]
    assert close(sized.loss_per_lot, expect["lossPerLot"]), case["check"]
    assert sized.lots * sized.loss_per_lot <= risk + 1e-9


def test_for_random_inputs_the_loss_at_the_stop_is_at_most_the_risk_and_the_lots_a_multiple_of_the_step_within_the_caps() -> None:
    rnd = random.Random(20260117)
    sized_count = 0
    for _ in range(5000):
        step = rnd.choice([0.01, 0.1, 1.0])
        tick = rnd.choice([0.00001, 0.001, 0.01, 0.1, 1.0])
        tick_value = tick_value_of(tick, rnd.choice([1, 10, 100, 100000]), rnd.choice([1, 1 / 1.16, 1.16, 155, 1 / 155, 1 / 179.8]))
        instrument = Instrument(tick, tick_value, step * rnd.choice([1, 1, 10]), step, rnd.choice([10.0, 50.0, 100.0, 1000.0]))
        risk = rnd.random() * 10 ** (1 + rnd.random() * 5)
        distance = tick * (1 + rnd.randrange(20000))
        max_lots = 0.05 + rnd.random() * 20 if rnd.random() < 0.3 else None
        sized = lots_for_risk(risk, distance, instrument, max_lots)
        inputs = (risk, distance, instrument, max_lots)
        if isinstance(sized, Refused):
            assert sized.reason == "risk_volume_below_minimum", inputs
            continue
        sized_count += 1
        assert sized.lots * sized.loss_per_lot <= risk + 1e-9, inputs
        assert abs(sized.lots / step - round(sized.lots / step)) < 1e-6, inputs
        assert sized.lots <= instrument.volume_max and sized.lots <= (max_lots if max_lots is not None else math.inf), inputs
        assert sized.lots >= instrument.volume_min, inputs
    assert sized_count > 1000


@pytest.mark.parametrize("distance", [0.0, -0.001, math.nan, math.inf])
def test_when_there_is_no_stop_distance_then_the_entry_is_refused_risk_stop_loss_required(distance: float) -> None:
    instrument = Instrument(0.00001, 1.0, 0.01, 0.01, 100.0)
    assert lots_for_risk(100.0, distance, instrument) == Refused("risk_stop_loss_required")
    assert math.isnan(stop_distance(1.16))


def test_a_hair_below_a_step_is_not_rounded_up_by_the_epsilon():
    # 7,749.9999999225 JPY at 155,000 JPY a lot (USDJPY, a 1.55 stop) is 0.04999999999950 lots: 0.04, since 0.05 would
    # lose 7,750.
    instrument = Instrument(tick_size=0.001, tick_value=100.0, volume_min=0.01, volume_step=0.01, volume_max=100.0)
    sized = lots_for_risk(7749.9999999225, 1.55, instrument)
    assert isinstance(sized, Sized) and sized.lots == 0.04
