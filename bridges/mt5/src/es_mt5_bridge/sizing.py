"""Sizing by risk (docs/risk-sizing.md): the lots that lose `risk_amount` (account currency) if the stop loss is hit.

The mirror of the service's src/risk/sizing.ts, line for line, so the MT5 bridge sizes an entry exactly as the paper
bridge does; both are checked against one table (test/fixtures/risk-sizing-cases.json). Pure: the bridge feeds it
the live figures of `account_info()` and `symbol_info()` at the instant of execution. Never rounds up: the lots are
floored to the volume step, so the loss at the stop is at most the amount at risk; below the minimum lot the entry is
refused, never sized up to it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Union

# The epsilon keeps an exact multiple (115 / 100 / 0.01 = 114.99999999999999) from losing a step.
STEP_EPSILON = 1e-9


@dataclass(frozen=True)
class Instrument:
    tick_size: float  # the smallest price move
    tick_value: float  # what one tick is worth for one lot, in the account currency
    volume_min: float
    volume_step: float
    volume_max: float


@dataclass(frozen=True)
class Sized:
    lots: float
    risk_amount: float
    loss_per_lot: float
    capped: bool


@dataclass(frozen=True)
class Refused:
    reason: str  # risk_volume_below_minimum | risk_stop_loss_required


def risk_amount_of(basis: str, value: float, balance: float, equity: float) -> float:
    """What the owner risks per trade (the command's riskSizing): a % of equity or balance, or a fixed amount."""
    if basis == "equity_percent":
        return equity * value / 100
    if basis == "balance_percent":
        return balance * value / 100
    if basis == "fixed_amount":
        return value
    raise ValueError(f"unknown risk basis {basis!r}")


def tick_value_of(tick_size: float, contract_size: float, quote_to_account_rate: float) -> float:
    """The tick value of one lot in the account currency: tick_size × contract_size × (account currency per quote unit)."""
    return tick_size * contract_size * quote_to_account_rate


def stop_distance(entry: float, sl: Optional[float] = None, sl_pips: Optional[float] = None, pip_size: Optional[float] = None) -> float:
    """|entry − sl|, or sl_pips × pip_size; NaN without either (which lots_for_risk refuses)."""
    if sl is not None:
        return abs(entry - sl)
    if sl_pips is not None and pip_size is not None:
        return sl_pips * pip_size
    return math.nan


def lots_for_risk(risk_amount: float, stop_distance: float, instrument: Instrument, max_lots: Optional[float] = None) -> Union[Sized, Refused]:
    """`stop_distance` in price units; `max_lots` is the owner's cap (their max volume per order)."""
    i = instrument
    if not (stop_distance > 0) or not math.isfinite(stop_distance):
        return Refused("risk_stop_loss_required")
    loss_per_lot = stop_distance / i.tick_size * i.tick_value
    if not math.isfinite(risk_amount / loss_per_lot / i.volume_step):
        return Refused("risk_volume_below_minimum")  # an unreadable figure sizes nothing (floor(nan) would raise)
    steps = math.floor(risk_amount / loss_per_lot / i.volume_step + STEP_EPSILON)
    # The epsilon must never add a step the risk does not cover: a value just below a step stays below it.
    if steps > 0 and steps * i.volume_step * loss_per_lot > risk_amount * (1 + 1e-12):
        steps -= 1
    lots = _round_to_step(steps * i.volume_step, i.volume_step)
    cap = min(i.volume_max, max_lots if max_lots is not None else math.inf)
    capped = lots > cap
    if capped:
        lots = _round_to_step(math.floor(cap / i.volume_step + STEP_EPSILON) * i.volume_step, i.volume_step)
    if lots < i.volume_min or lots <= 0:
        return Refused("risk_volume_below_minimum")
    return Sized(lots=lots, risk_amount=risk_amount, loss_per_lot=loss_per_lot, capped=capped)


def _round_to_step(value: float, step: float) -> float:
    decimals = max(0, math.ceil(-math.log10(step)) + 2)
    return round(value, decimals)
