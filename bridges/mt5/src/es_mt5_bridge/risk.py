"""
What the bridge does with an entry's `riskSizing` and `lossGuards` (docs/risk-sizing.md), on the live account at the
instant of execution and one command at a time, as the paper bridge does (src/paper/risk.ts): two entries racing each
other cannot both pass a guard that only one fits under, and an entry whose prices are older than the command's
`figuresMaxAgeMs` is refused `risk_figures_stale` (src/risk/figures-age.ts, the same rule and message).
"""
from __future__ import annotations

import json
import math
import os
from datetime import datetime, timezone
from typing import Any, Dict, Iterable, Optional, Tuple
from zoneinfo import ZoneInfo

from .durable import replace_json
from .sizing import Instrument, Refused, lots_for_risk, risk_amount_of


class EquityMarks:
    """The equity marks of the loss guards: the trading day's opening equity, and the peak, as this bridge saw them.

    With a path, they are kept in that file (beside the journal) and read back on start: a restarted bridge does not
    take the equity after a bad morning as the day's opening, nor forget the peak."""

    def __init__(self, path: Optional[str] = None) -> None:
        self.path = path
        self.day: Optional[str] = None
        self.day_open = 0.0
        self.peak = 0.0
        self.reset_applied: Optional[datetime] = None
        if path and os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                saved = json.load(f)
            self.day, self.day_open, self.peak = saved.get("day"), float(saved["dayOpen"]), float(saved["peak"])
            reset = saved.get("resetApplied")
            self.reset_applied = datetime.fromisoformat(reset) if reset else None

    def _save(self) -> None:
        if not self.path:
            return
        replace_json(self.path, {"day": self.day, "dayOpen": self.day_open, "peak": self.peak,
                                 "resetApplied": self.reset_applied.isoformat() if self.reset_applied else None})

    def observe(self, equity: float, now: datetime, tz: str, drawdown_reset_at: Optional[str] = None) -> Tuple[float, float]:
        before = (self.day, self.day_open, self.peak, self.reset_applied)
        self._peak_at(equity, drawdown_reset_at)
        day = now.astimezone(ZoneInfo(tz)).date().isoformat()
        if day != self.day:
            self.day, self.day_open = day, equity
        self._save_if_changed(before)
        return self.day_open, self.peak

    def observe_peak(self, equity: float, drawdown_reset_at: Optional[str]) -> float:
        """The peak alone: the stop-out's watch knows no trading day (its answer carries no timezone)."""
        before = (self.day, self.day_open, self.peak, self.reset_applied)
        self._peak_at(equity, drawdown_reset_at)
        self._save_if_changed(before)
        return self.peak

    def _peak_at(self, equity: float, drawdown_reset_at: Optional[str]) -> None:
        if not math.isfinite(equity):
            return  # a reading that is no number never becomes the peak (nor restarts it after a reset)
        # An owner's reset newer than the last one applied starts the peak again from this equity.
        if drawdown_reset_at:
            reset = datetime.fromisoformat(drawdown_reset_at.replace("Z", "+00:00"))
            if self.reset_applied is None or reset > self.reset_applied:
                self.reset_applied, self.peak = reset, equity
        self.peak = max(self.peak, equity)

    def _save_if_changed(self, before: Tuple[Optional[str], float, float, Optional[datetime]]) -> None:
        if (self.day, self.day_open, self.peak, self.reset_applied) != before or (self.path and not os.path.exists(self.path)):
            self._save()


def guard_refusal(guards: Dict[str, Any], account: Any, marks: EquityMarks, now: datetime) -> Optional[Tuple[str, str]]:
    """(retcode, message) when a loss guard refuses the entry, else None."""
    equity = float(account.equity)
    if not math.isfinite(equity):
        # Every comparison with NaN is false: an unreadable equity would pass every guard. Fail closed.
        return ("risk_figures_unavailable", f"the account's equity reads {equity}; the entry was not placed rather than guarded on it")
    day_open, peak = marks.observe(equity, now, str(guards.get("timezone") or "UTC"), guards.get("drawdownResetAt"))
    limit = guards.get("dailyLossAmount")
    if limit is None and guards.get("dailyLossPercent") is not None:
        limit = day_open * float(guards["dailyLossPercent"]) / 100
    if limit is not None and day_open - equity >= float(limit):
        return ("risk_daily_loss_limit",
                f"equity {equity:.2f} is {day_open - equity:.2f} below the day's opening {day_open:.2f} {account.currency}; limit {float(limit):.2f}")
    dd = guards.get("maxDrawdownPercent")
    if dd is not None and peak > 0 and (peak - equity) / peak * 100 >= float(dd):
        return ("risk_max_drawdown",
                f"equity {equity:.2f} is {(peak - equity) / peak * 100:.2f}% below its peak {peak:.2f} {account.currency}; limit {dd}%")
    return None


def size_by_risk(sizing: Dict[str, Any], account: Any, info: Any, stop_distance: float) -> Tuple[Optional[float], str, Optional[str]]:
    """(lots, note, refusal retcode): the lots from the terminal's own tick value (`trade_tick_value`, deposit currency)."""
    risk = risk_amount_of(str(sizing["basis"]), float(sizing["value"]), float(account.balance), float(account.equity))
    if not math.isfinite(risk):
        return None, f"the account's figures read balance {account.balance}, equity {account.equity}; the entry was not sized on them", "risk_figures_unavailable"
    instrument = Instrument(tick_size=float(info.trade_tick_size), tick_value=float(info.trade_tick_value),
                            volume_min=float(info.volume_min), volume_step=float(info.volume_step), volume_max=float(info.volume_max))
    sized = lots_for_risk(risk, stop_distance, instrument, sizing.get("maxLots"))
    basis = (f"{float(sizing['value']):.2f} {account.currency}" if sizing["basis"] == "fixed_amount"
             else f"{sizing['value']}% of {'equity' if sizing['basis'] == 'equity_percent' else 'balance'}")
    if isinstance(sized, Refused):
        return None, f"risk {basis} = {risk:.2f} {account.currency} is less than one minimum lot at this stop", sized.reason
    note = (f"sized {sized.lots} lots by risk: {basis} = {risk:.2f} {account.currency} (balance {float(account.balance):.2f}, "
            f"equity {float(account.equity):.2f}); stop {stop_distance:.{int(info.digits)}f} away, {sized.loss_per_lot:.2f} "
            f"{account.currency} a lot{'; capped' if sized.capped else ''}")
    return sized.lots, note, None


def stale_refusal(ticks: Iterable[Tuple[str, Any]], max_age_ms: Optional[int], server_now_ms: float) -> Optional[Tuple[str, str]]:
    """(retcode, message) for the oldest tick past the bound, else None. A tick's time is trade-server time, as is
    `server_now_ms` (UTC now plus the server's offset): `time_msc` when the terminal gives it, else `time` in seconds."""
    if max_age_ms is None:
        return None
    oldest: Optional[Tuple[str, float]] = None
    for symbol, tick in ticks:
        at_ms = float(getattr(tick, "time_msc", 0) or 0) or float(tick.time) * 1000
        age = server_now_ms - at_ms
        if age > max_age_ms and (oldest is None or age > oldest[1]):
            oldest = (symbol, age)
    if oldest is None:
        return None
    return ("risk_figures_stale",
            f"the last {oldest[0]} quote is {oldest[1] / 1000:.1f} s old, past the {max_age_ms / 1000:.1f} s the figures may be: "
            "the entry was not placed rather than sized or guarded on old prices")


def utc_now() -> datetime:
    return datetime.now(timezone.utc)
