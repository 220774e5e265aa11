"""The bridge protocol's messages (docs/bridge-protocol.md), as this bridge reads and writes them."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any, Dict, List, Optional, Union

ACTIONS = (
    "buy", "sell", "buy_limit", "sell_limit", "buy_stop", "sell_stop", "buy_stop_limit", "sell_stop_limit",
    "close", "close_all", "partial_close", "cancel_pending", "modify_sl", "modify_tp", "modify_pending",
    "modify_pending_expiry", "breakeven",
)
ENTRY_ACTIONS = ACTIONS[:8]
PLATFORM = "mt5"
# From risk_sizing on, features the service checks (docs/bridge-protocol.md): it sizes by risk, applies loss guards and
# per-symbol position limits, closes everything once when the drawdown guard trips (stop_out, protocol 1.4), and
# reports what became of each trade and the book (trade_events, protocol 1.5), and manages a trade after its entry
# (protocol 1.6, docs/trade-management.md: the last five).
CAPABILITIES = ["stop_limit", "modify_pending", "partial_close", "max_open_positions", "exactly_once_journal", "risk_sizing", "loss_guards",
                "position_limits", "stop_out", "trade_events",
                "trailing_stop", "breakeven_trigger", "take_profit_levels", "close_opposite", "max_spread"]

Retcode = Union[int, str]


class InvalidCommand(ValueError):
    """A delivered command this bridge cannot read; reported as bridge_invalid_command."""


@dataclass(frozen=True)
class Command:
    command_id: str
    seq: int
    signal_id: str
    account_id: str
    action: str
    accepted_at: datetime
    expires_at: datetime
    symbol: Optional[str] = None
    volume: Optional[float] = None
    price: Optional[float] = None
    stop_limit_price: Optional[float] = None
    sl: Optional[float] = None
    tp: Optional[float] = None
    sl_pips: Optional[float] = None
    tp_pips: Optional[float] = None
    position_id: Optional[str] = None
    order_id: Optional[str] = None
    partial_volume: Optional[float] = None
    expiry: Optional[datetime] = None
    side: Optional[str] = None
    pnl: Optional[str] = None
    max_open_positions: Optional[int] = None
    # The owner's max open positions in the entry's symbol (feature position_limits).
    max_open_positions_per_symbol: Optional[int] = None
    # {basis, value, maxLots?}: size the entry by risk on the live account (volume is then absent).
    risk_sizing: Optional[Dict[str, Any]] = None
    # {dailyLossAmount?|dailyLossPercent?, maxDrawdownPercent?, timezone}: refuse the entry while a guard holds.
    loss_guards: Optional[Dict[str, Any]] = None
    # Protocol 1.3: the oldest (ms) a quote behind a sized or guarded entry's figures may be (risk_figures_stale).
    figures_max_age_ms: Optional[int] = None
    # Protocol 1.6: the entry's management, in the protocol's own names (trailDistancePips, trailTriggerPips,
    # trailStepPips, breakevenTriggerPips, breakevenOffsetPips, takeProfits, closeOpposite, maxSpreadPips); empty
    # when the command asks for none. Defaults are the service's: nothing here is defaulted.
    management: Dict[str, Any] = field(default_factory=dict)

    def pip_fields(self) -> List[str]:
        """The management fields counted in pips (a symbol whose pip the bridge does not know cannot have them)."""
        return [k for k in PIP_FIELDS if k in self.management] + (
            ["takeProfits"] if any("tpPips" in level for level in self.management.get("takeProfits", [])) else [])


@dataclass(frozen=True)
class Report:
    commandId: str
    status: str
    ticket: Optional[str] = None
    price: Optional[float] = None
    volume: Optional[float] = None
    retcode: Optional[Retcode] = None
    message: Optional[str] = None
    executedAt: Optional[str] = None

    def to_json(self) -> Dict[str, Any]:
        body = asdict(self)
        if body["message"] is not None:
            body["message"] = body["message"][:512]
        return body

    @staticmethod
    def from_json(raw: Dict[str, Any]) -> "Report":
        return Report(commandId=str(raw["commandId"]), status=str(raw["status"]), ticket=raw.get("ticket"),
                      price=raw.get("price"), volume=raw.get("volume"), retcode=raw.get("retcode"),
                      message=raw.get("message"), executedAt=raw.get("executedAt"))


def parse_time(value: Any, field: str) -> datetime:
    if not isinstance(value, str):
        raise InvalidCommand(f"{field}: expected an ISO 8601 date-time")
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as err:
        raise InvalidCommand(f"{field}: {err}") from None
    if parsed.tzinfo is None:
        raise InvalidCommand(f"{field}: the date-time has no offset")
    return parsed.astimezone(timezone.utc)


def iso(at: datetime) -> str:
    return at.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _number(raw: Dict[str, Any], key: str) -> Optional[float]:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidCommand(f"{key}: expected a number")
    return float(value)


def _text(raw: Dict[str, Any], key: str, required: bool = False) -> Optional[str]:
    value = raw.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value or len(value) > 256:
        raise InvalidCommand(f"{key}: expected a non-empty string")
    return value


def parse_command(raw: Any) -> Command:
    """Reads one delivered command; unknown fields are ignored (the protocol only ever adds fields)."""
    if not isinstance(raw, dict):
        raise InvalidCommand("a command is an object")
    action = _text(raw, "action", True)
    if action not in ACTIONS:
        raise InvalidCommand(f"action: unknown action {action!r}")
    seq = raw.get("seq")
    if isinstance(seq, bool) or not isinstance(seq, int):
        raise InvalidCommand("seq: expected an integer")
    side, pnl = _text(raw, "side"), _text(raw, "pnl")
    if side not in (None, "buy", "sell"):
        raise InvalidCommand("side: expected buy or sell")
    if pnl not in (None, "profit", "loss"):
        raise InvalidCommand("pnl: expected profit or loss")
    max_open = _count(raw, "maxOpenPositions")
    max_per_symbol = _count(raw, "maxOpenPositionsPerSymbol")
    risk_sizing = _risk_sizing(raw.get("riskSizing"))
    loss_guards = _loss_guards(raw.get("lossGuards"))
    figures_max_age = _count(raw, "figuresMaxAgeMs")
    if figures_max_age == 0:
        raise InvalidCommand("figuresMaxAgeMs: expected a positive integer")
    expiry = raw.get("expiry")
    return Command(
        command_id=_text(raw, "commandId", True) or "",
        seq=seq,
        signal_id=_text(raw, "signalId", True) or "",
        account_id=_text(raw, "accountId", True) or "",
        action=action,
        accepted_at=parse_time(raw.get("acceptedAt"), "acceptedAt"),
        expires_at=parse_time(raw.get("expiresAt"), "expiresAt"),
        symbol=_text(raw, "symbol"),
        volume=_number(raw, "volume"),
        price=_number(raw, "price"),
        stop_limit_price=_number(raw, "stopLimitPrice"),
        sl=_number(raw, "sl"),
        tp=_number(raw, "tp"),
        sl_pips=_number(raw, "slPips"),
        tp_pips=_number(raw, "tpPips"),
        position_id=_text(raw, "positionId"),
        order_id=_text(raw, "orderId"),
        partial_volume=_number(raw, "partialVolume"),
        expiry=None if expiry is None else parse_time(expiry, "expiry"),
        side=side,
        pnl=pnl,
        max_open_positions=max_open,
        max_open_positions_per_symbol=max_per_symbol,
        risk_sizing=risk_sizing,
        loss_guards=loss_guards,
        figures_max_age_ms=figures_max_age,
        management=_management(raw, action),
    )


# Bounds of the contract (docs/trade-management.md §1): a number beyond them is a command this bridge will not run.
MAX_PIPS = 1e6
PIP_FIELDS = ("trailDistancePips", "trailTriggerPips", "trailStepPips", "breakevenTriggerPips", "breakevenOffsetPips",
              "maxSpreadPips")
_MAY_BE_ZERO = ("trailTriggerPips", "breakevenOffsetPips")


def _management(raw: Dict[str, Any], action: str) -> Dict[str, Any]:
    """The management fields of an entry, checked for shape and bounds (the service validated them; a bridge still
    fails closed on what it cannot run). On other actions they are ignored, as any field an action does not use."""
    if action not in ENTRY_ACTIONS:
        return {}
    out: Dict[str, Any] = {}
    for key in PIP_FIELDS:
        value = _number(raw, key)
        if value is None:
            continue
        above_floor = value >= 0 if key in _MAY_BE_ZERO else value > 0
        if not above_floor or value > MAX_PIPS:
            raise InvalidCommand(f"{key}: expected a number {'from 0' if key in _MAY_BE_ZERO else 'above 0'} up to {MAX_PIPS:g}")
        out[key] = value
    levels = raw.get("takeProfits")
    if levels is not None:
        if not isinstance(levels, list) or not 1 <= len(levels) <= 5:
            raise InvalidCommand("takeProfits: expected 1 to 5 levels")
        out["takeProfits"] = [_level(level, i) for i, level in enumerate(levels)]
        if sum(level["closePercent"] for level in out["takeProfits"]) > 100 + 1e-9:
            raise InvalidCommand("takeProfits: the levels' closePercent add up to more than 100")
    close_opposite = raw.get("closeOpposite")
    if close_opposite is not None and close_opposite is not False:
        if close_opposite is not True:
            raise InvalidCommand("closeOpposite: expected true")
        if action not in ("buy", "sell"):
            raise InvalidCommand("closeOpposite: not used by " + action)
        out["closeOpposite"] = True
    for needs, key in (("trailDistancePips", "trailTriggerPips"), ("trailDistancePips", "trailStepPips"),
                       ("breakevenTriggerPips", "breakevenOffsetPips")):
        if key in out and needs not in out:
            raise InvalidCommand(f"{key}: needs {needs}")
    return out


def _level(raw: Any, i: int) -> Dict[str, Any]:
    where = f"takeProfits.{i}"
    if not isinstance(raw, dict) or set(raw) - {"tpPips", "tp", "closePercent"}:
        raise InvalidCommand(f"{where}: expected {{tpPips | tp, closePercent}}")
    tp_pips, tp, percent = _number(raw, "tpPips"), _number(raw, "tp"), _number(raw, "closePercent")
    if (tp_pips is None) == (tp is None) or not ((tp_pips or tp or 0) > 0) or (tp_pips is not None and tp_pips > MAX_PIPS):
        raise InvalidCommand(f"{where}: expected exactly one of tpPips or tp, above 0")
    if percent is None or not 0 < percent <= 100:
        raise InvalidCommand(f"{where}.closePercent: expected a number above 0 up to 100")
    return {**({"tpPips": tp_pips} if tp_pips is not None else {"tp": tp}), "closePercent": percent}


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def _count(raw: Dict[str, Any], name: str) -> Optional[int]:
    value = raw.get(name)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise InvalidCommand(f"{name}: expected a non-negative integer")
    return value if value is None else int(value)


def _risk_sizing(value: Any) -> Optional[Dict[str, Any]]:
    if value is None:
        return None
    if (not isinstance(value, dict) or value.get("basis") not in ("equity_percent", "balance_percent", "fixed_amount")
            or not _positive(value.get("value")) or not (value.get("maxLots") is None or _positive(value.get("maxLots")))):
        raise InvalidCommand("riskSizing: expected {basis: equity_percent|balance_percent|fixed_amount, value > 0, maxLots?}")
    return dict(value)


def _loss_guards(value: Any) -> Optional[Dict[str, Any]]:
    if value is None:
        return None
    numbers = ("dailyLossAmount", "dailyLossPercent", "maxDrawdownPercent")
    if (not isinstance(value, dict) or not isinstance(value.get("timezone"), str)
            or any(value.get(k) is not None and not _positive(value.get(k)) for k in numbers)):
        raise InvalidCommand("lossGuards: expected {dailyLossAmount?|dailyLossPercent?, maxDrawdownPercent?, timezone}")
    return dict(value)


@dataclass(frozen=True)
class StopOutSettings:
    """The hello's and every commands answer's `stopOut` (protocol 1.4): the owner wants everything closed once when
    equity falls this far below the drawdown guard's peak."""
    max_drawdown_percent: float
    # The owner's last drawdown reset, as the service wrote it (it names the stop-out's event), or None.
    drawdown_reset_at: Optional[str]
    figures_max_age_ms: int


# A day: no owner wants figures older than that to close their account.
MAX_FIGURES_AGE_MS = 86_400_000


def parse_stop_out(value: Any) -> Optional[StopOutSettings]:
    """None when the answer carries no `stopOut` (the owner has it off); InvalidCommand when it is malformed."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidCommand("stopOut: expected an object")
    percent: Any = value.get("maxDrawdownPercent")
    reset, max_age = value.get("drawdownResetAt"), value.get("figuresMaxAgeMs")
    if not _positive(percent) or not math.isfinite(percent) or percent > 100:
        raise InvalidCommand("stopOut.maxDrawdownPercent: expected a number above 0 and at most 100")
    if reset is not None:
        if not isinstance(reset, str) or len(reset) > 40:
            raise InvalidCommand("stopOut.drawdownResetAt: expected an ISO 8601 date-time or null")
        parse_time(reset, "stopOut.drawdownResetAt")
    if isinstance(max_age, bool) or not isinstance(max_age, int) or not 0 < max_age <= MAX_FIGURES_AGE_MS:
        raise InvalidCommand(f"stopOut.figuresMaxAgeMs: expected an integer from 1 to {MAX_FIGURES_AGE_MS}")
    return StopOutSettings(float(percent), reset, max_age)
