"""A test double of the official ``MetaTrader5`` Python package, for tests only.

It stands in for the terminal and its trade server, and nothing else: the bridge under test imports it as
``MetaTrader5`` because the tests put ``bridges/mt5/tests/double`` first on PYTHONPATH. The real package is
Windows-only and drives a running MetaTrader 5 terminal; this module follows its published interface:

* functions, arguments and return shapes (named tuples with the documented field names and order):
  https://www.mql5.com/en/docs/python_metatrader5 and its pages
  mt5initialize_py, mt5shutdown_py, mt5version_py, mt5lasterror_py, mt5terminalinfo_py, mt5accountinfo_py,
  mt5symbolsget_py, mt5symbolinfo_py, mt5symbolinfotick_py, mt5symbolselect_py, mt5ordersend_py,
  mt5positionsget_py, mt5ordersget_py, mt5historyordersget_py,
  mt5historydealsget_py (each at https://www.mql5.com/en/docs/python_metatrader5/<page>);
* constants with the values MetaQuotes documents for the MQL5 enumerations the package mirrors:
  trade request actions, order types, filling and time types, order states
  (https://www.mql5.com/en/docs/constants/tradingconstants/orderproperties,
  https://www.mql5.com/en/docs/constants/tradingconstants/enum_trade_request_actions), position and deal
  properties (.../positionproperties, .../dealproperties), symbol trade modes (.../environment_state/marketinfoconstants);
* trade server return codes and their descriptions:
  https://www.mql5.com/en/docs/constants/errorswarnings/enum_trade_return_codes
  (the result's ``comment`` is "filled by description of trade server return code" by default:
  https://www.mql5.com/en/docs/constants/structures/mqltraderesult);
* ``last_error()`` codes: the table of mt5lasterror_py.

The trade server it simulates is a hedging retail account (ACCOUNT_MARGIN_MODE_RETAIL_HEDGING): a market deal
without ``position`` opens a position whose ticket is the order's ticket; a deal with ``position`` and the opposite
type closes all or part of it. Server time is UTC plus ``server_utc_offset`` (default two hours, as many brokers
run), as in the real terminal, where every time is trade-server time.

What a test steers lives in files in the directory named by the environment variable ``MT5_DOUBLE_DIR``:

* ``market.json`` (written by the test): ``{"symbols": [...], "quotes": {"EURUSD": {"bid": .., "ask": .., "time": ..}},
  "closed": ["US30"], "server_utc_offset": 7200, "balance": 100000, "leverage": 100, "login": 5012345,
  "algo_trading": true}``. Read again on every call: the market is where the test puts it. A quote's optional
  ``time`` (UTC seconds) is when it last ticked (``symbol_info_tick``'s ``time``/``time_msc``, in server time);
  without it, a symbol ticks whenever it is read. Prices move only
  when the test moves them; what a move implies (SL/TP hit, a pending order filled or expired) and the trader's own
  clicks in the terminal (``terminal_ops``) are applied by the trade server before any call reads it (``_moves.py``).
* ``server.json`` (written here, atomically, after every change): the account's positions, orders, history orders
  and deals. It outlives the process, like a trade server outlives a terminal restart.
* ``MT5_DOUBLE_CRASH=before_fill|after_fill`` in the environment: the hosting process dies with SIGKILL inside the
  first ``order_send`` that would change the account, before or after the trade server executed it;
  ``MT5_DOUBLE_CRASH_ACTION`` (a TRADE_ACTION_* value) narrows it to the first such request of that action (a
  stop moved by TRADE_ACTION_SLTP, say).
* ``server.json`` also lists every request the trade server accepted (``requests``: action, position, volume, sl,
  tp, comment), which no MetaTrader5 function shows: what a test counts (a stop moved twice for one step).
"""
from __future__ import annotations

import json
import os
import signal
import time as _time
from collections import namedtuple
from typing import Any, Dict, List, Optional, Tuple

__version__ = "5.0.4424"
__author__ = "test double"

# ---- constants -------------------------------------------------------------------------------------------------

TRADE_ACTION_DEAL = 1
TRADE_ACTION_PENDING = 5
TRADE_ACTION_SLTP = 6
TRADE_ACTION_MODIFY = 7
TRADE_ACTION_REMOVE = 8
TRADE_ACTION_CLOSE_BY = 10

ORDER_TYPE_BUY = 0
ORDER_TYPE_SELL = 1
ORDER_TYPE_BUY_LIMIT = 2
ORDER_TYPE_SELL_LIMIT = 3
ORDER_TYPE_BUY_STOP = 4
ORDER_TYPE_SELL_STOP = 5
ORDER_TYPE_BUY_STOP_LIMIT = 6
ORDER_TYPE_SELL_STOP_LIMIT = 7
ORDER_TYPE_CLOSE_BY = 8

ORDER_FILLING_FOK = 0
ORDER_FILLING_IOC = 1
ORDER_FILLING_RETURN = 2
ORDER_FILLING_BOC = 3

ORDER_TIME_GTC = 0
ORDER_TIME_DAY = 1
ORDER_TIME_SPECIFIED = 2
ORDER_TIME_SPECIFIED_DAY = 3

ORDER_STATE_STARTED = 0
ORDER_STATE_PLACED = 1
ORDER_STATE_CANCELED = 2
ORDER_STATE_PARTIAL = 3
ORDER_STATE_FILLED = 4
ORDER_STATE_REJECTED = 5
ORDER_STATE_EXPIRED = 6
ORDER_STATE_REQUEST_ADD = 7
ORDER_STATE_REQUEST_MODIFY = 8
ORDER_STATE_REQUEST_CANCEL = 9

ORDER_REASON_CLIENT = 0
ORDER_REASON_MOBILE = 1
ORDER_REASON_WEB = 2
ORDER_REASON_EXPERT = 3
ORDER_REASON_SL = 4
ORDER_REASON_TP = 5
ORDER_REASON_SO = 6

POSITION_TYPE_BUY = 0
POSITION_TYPE_SELL = 1

POSITION_REASON_CLIENT = 0
POSITION_REASON_MOBILE = 1
POSITION_REASON_WEB = 2
POSITION_REASON_EXPERT = 3

DEAL_TYPE_BUY = 0
DEAL_TYPE_SELL = 1
DEAL_TYPE_BALANCE = 2

DEAL_ENTRY_IN = 0
DEAL_ENTRY_OUT = 1
DEAL_ENTRY_INOUT = 2
DEAL_ENTRY_OUT_BY = 3

DEAL_REASON_CLIENT = 0
DEAL_REASON_MOBILE = 1
DEAL_REASON_WEB = 2
DEAL_REASON_EXPERT = 3
DEAL_REASON_SL = 4
DEAL_REASON_TP = 5
DEAL_REASON_SO = 6

SYMBOL_TRADE_MODE_DISABLED = 0
SYMBOL_TRADE_MODE_LONGONLY = 1
SYMBOL_TRADE_MODE_SHORTONLY = 2
SYMBOL_TRADE_MODE_CLOSEONLY = 3
SYMBOL_TRADE_MODE_FULL = 4

SYMBOL_TRADE_EXECUTION_REQUEST = 0
SYMBOL_TRADE_EXECUTION_INSTANT = 1
SYMBOL_TRADE_EXECUTION_MARKET = 2
SYMBOL_TRADE_EXECUTION_EXCHANGE = 3

SYMBOL_CALC_MODE_FOREX = 0
SYMBOL_CALC_MODE_CFDLEVERAGE = 4

ACCOUNT_TRADE_MODE_DEMO = 0
ACCOUNT_TRADE_MODE_CONTEST = 1
ACCOUNT_TRADE_MODE_REAL = 2

ACCOUNT_MARGIN_MODE_RETAIL_NETTING = 0
ACCOUNT_MARGIN_MODE_EXCHANGE = 1
ACCOUNT_MARGIN_MODE_RETAIL_HEDGING = 2

TRADE_RETCODE_REQUOTE = 10004
TRADE_RETCODE_REJECT = 10006
TRADE_RETCODE_CANCEL = 10007
TRADE_RETCODE_PLACED = 10008
TRADE_RETCODE_DONE = 10009
TRADE_RETCODE_DONE_PARTIAL = 10010
TRADE_RETCODE_ERROR = 10011
TRADE_RETCODE_TIMEOUT = 10012
TRADE_RETCODE_INVALID = 10013
TRADE_RETCODE_INVALID_VOLUME = 10014
TRADE_RETCODE_INVALID_PRICE = 10015
TRADE_RETCODE_INVALID_STOPS = 10016
TRADE_RETCODE_TRADE_DISABLED = 10017
TRADE_RETCODE_MARKET_CLOSED = 10018
TRADE_RETCODE_NO_MONEY = 10019
TRADE_RETCODE_PRICE_CHANGED = 10020
TRADE_RETCODE_PRICE_OFF = 10021
TRADE_RETCODE_INVALID_EXPIRATION = 10022
TRADE_RETCODE_ORDER_CHANGED = 10023
TRADE_RETCODE_TOO_MANY_REQUESTS = 10024
TRADE_RETCODE_NO_CHANGES = 10025
TRADE_RETCODE_SERVER_DISABLES_AT = 10026
TRADE_RETCODE_CLIENT_DISABLES_AT = 10027
TRADE_RETCODE_LOCKED = 10028
TRADE_RETCODE_FROZEN = 10029
TRADE_RETCODE_INVALID_FILL = 10030
TRADE_RETCODE_CONNECTION = 10031
TRADE_RETCODE_ONLY_REAL = 10032
TRADE_RETCODE_LIMIT_ORDERS = 10033
TRADE_RETCODE_LIMIT_VOLUME = 10034
TRADE_RETCODE_INVALID_ORDER = 10035
TRADE_RETCODE_POSITION_CLOSED = 10036
TRADE_RETCODE_INVALID_CLOSE_VOLUME = 10038
TRADE_RETCODE_CLOSE_ORDER_EXIST = 10039
TRADE_RETCODE_LIMIT_POSITIONS = 10040
TRADE_RETCODE_REJECT_CANCEL = 10041
TRADE_RETCODE_LONG_ONLY = 10042
TRADE_RETCODE_SHORT_ONLY = 10043
TRADE_RETCODE_CLOSE_ONLY = 10044
TRADE_RETCODE_FIFO_CLOSE = 10045

RES_S_OK = 1
RES_E_FAIL = -1
RES_E_INVALID_PARAMS = -2
RES_E_NO_MEMORY = -3
RES_E_NOT_FOUND = -4
RES_E_INVALID_VERSION = -5
RES_E_AUTH_FAILED = -6
RES_E_UNSUPPORTED = -7
RES_E_AUTO_TRADING_DISABLED = -8
RES_E_INTERNAL_FAIL = -10000
RES_E_INTERNAL_FAIL_SEND = -10001
RES_E_INTERNAL_FAIL_RECEIVE = -10002
RES_E_INTERNAL_FAIL_INIT = -10003
RES_E_INTERNAL_FAIL_CONNECT = -10004
RES_E_INTERNAL_FAIL_TIMEOUT = -10005

# The descriptions of enum_trade_return_codes, which the result's comment carries by default.
_RETCODE_TEXT = {
    10004: "Requote",
    10006: "Request rejected",
    10007: "Request canceled by trader",
    10008: "Order placed",
    10009: "Request completed",
    10010: "Only part of the request was completed",
    10011: "Request processing error",
    10012: "Request canceled by timeout",
    10013: "Invalid request",
    10014: "Invalid volume in the request",
    10015: "Invalid price in the request",
    10016: "Invalid stops in the request",
    10017: "Trade is disabled",
    10018: "Market is closed",
    10019: "There is not enough money to complete the request",
    10020: "Prices changed",
    10021: "There are no quotes to process the request",
    10022: "Invalid order expiration date in the request",
    10023: "Order state changed",
    10024: "Too frequent requests",
    10025: "No changes in request",
    10026: "Autotrading disabled by server",
    10027: "Autotrading disabled by client terminal",
    10028: "Request locked for processing",
    10029: "Order or position frozen",
    10030: "Invalid order filling type",
    10031: "No connection with the trade server",
    10035: "Incorrect or prohibited order type",
    10036: "Position with the specified POSITION_IDENTIFIER has already been closed",
    10038: "A close volume exceeds the current position volume",
}

# ---- return shapes ---------------------------------------------------------------------------------------------

TerminalInfo = namedtuple("TerminalInfo", [
    "community_account", "community_connection", "connected", "dlls_allowed", "trade_allowed", "tradeapi_disabled",
    "email_enabled", "ftp_enabled", "notifications_enabled", "mqid", "build", "maxbars", "codepage", "ping_last",
    "community_balance", "retransmission", "company", "name", "language", "path", "data_path", "commondata_path"])
AccountInfo = namedtuple("AccountInfo", [
    "login", "trade_mode", "leverage", "limit_orders", "margin_so_mode", "trade_allowed", "trade_expert",
    "margin_mode", "currency_digits", "fifo_close", "balance", "credit", "profit", "equity", "margin", "margin_free",
    "margin_level", "margin_so_call", "margin_so_so", "margin_initial", "margin_maintenance", "assets", "liabilities",
    "commission_blocked", "name", "server", "currency", "company"])
SymbolInfo = namedtuple("SymbolInfo", [
    "custom", "chart_mode", "select", "visible", "session_deals", "session_buy_orders", "session_sell_orders",
    "volume", "volumehigh", "volumelow", "time", "digits", "spread", "spread_float", "ticks_bookdepth",
    "trade_calc_mode", "trade_mode", "start_time", "expiration_time", "trade_stops_level", "trade_freeze_level",
    "trade_exemode", "swap_mode", "swap_rollover3days", "margin_hedged_use_leg", "expiration_mode", "filling_mode",
    "order_mode", "order_gtc_mode", "option_mode", "option_right", "bid", "bidhigh", "bidlow", "ask", "askhigh",
    "asklow", "last", "lasthigh", "lastlow", "volume_real", "volumehigh_real", "volumelow_real", "option_strike",
    "point", "trade_tick_value", "trade_tick_value_profit", "trade_tick_value_loss", "trade_tick_size",
    "trade_contract_size", "trade_accrued_interest", "trade_face_value", "trade_liquidity_rate", "volume_min",
    "volume_max", "volume_step", "volume_limit", "swap_long", "swap_short", "margin_initial", "margin_maintenance",
    "session_volume", "session_turnover", "session_interest", "session_buy_orders_volume",
    "session_sell_orders_volume", "session_open", "session_close", "session_aw", "session_price_settlement",
    "session_price_limit_min", "session_price_limit_max", "margin_hedged", "price_change", "price_volatility",
    "price_theoretical", "price_greeks_delta", "price_greeks_theta", "price_greeks_gamma", "price_greeks_vega",
    "price_greeks_rho", "price_greeks_omega", "price_sensitivity", "basis", "category", "currency_base",
    "currency_profit", "currency_margin", "bank", "description", "exchange", "formula", "isin", "name", "page", "path"])
Tick = namedtuple("Tick", ["time", "bid", "ask", "last", "volume", "time_msc", "flags", "volume_real"])
TradeRequest = namedtuple("TradeRequest", [
    "action", "magic", "order", "symbol", "volume", "price", "stoplimit", "sl", "tp", "deviation", "type",
    "type_filling", "type_time", "expiration", "comment", "position", "position_by"])
OrderSendResult = namedtuple("OrderSendResult", [
    "retcode", "deal", "order", "volume", "price", "bid", "ask", "comment", "request_id", "retcode_external", "request"])
TradePosition = namedtuple("TradePosition", [
    "ticket", "time", "time_msc", "time_update", "time_update_msc", "type", "magic", "identifier", "reason", "volume",
    "price_open", "sl", "tp", "price_current", "swap", "profit", "symbol", "comment", "external_id"])
TradeOrder = namedtuple("TradeOrder", [
    "ticket", "time_setup", "time_setup_msc", "time_done", "time_done_msc", "time_expiration", "type", "type_time",
    "type_filling", "state", "magic", "position_id", "position_by_id", "reason", "volume_initial", "volume_current",
    "price_open", "sl", "tp", "price_current", "price_stoplimit", "symbol", "comment", "external_id"])
TradeDeal = namedtuple("TradeDeal", [
    "ticket", "order", "time", "time_msc", "type", "entry", "magic", "position_id", "reason", "volume", "price",
    "commission", "swap", "profit", "fee", "symbol", "comment", "external_id"])

_REQUEST_FIELDS = TradeRequest._fields

# ---- the simulated terminal and trade server -------------------------------------------------------------------

_last_error: Tuple[int, str] = (RES_S_OK, "Success")
_initialized = False
_request_id = 0
_crash_armed = os.environ.get("MT5_DOUBLE_CRASH", "")
_crash_action = int(os.environ.get("MT5_DOUBLE_CRASH_ACTION") or 0)


def _dir() -> str:
    d = os.environ.get("MT5_DOUBLE_DIR")
    if not d:
        raise RuntimeError("MT5_DOUBLE_DIR is not set: the MetaTrader5 test double needs its directory")
    return d


def _market() -> Dict[str, Any]:
    try:
        with open(os.path.join(_dir(), "market.json"), encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return {}


def _load_server() -> Dict[str, Any]:
    try:
        with open(os.path.join(_dir(), "server.json"), encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return {"next_order": 50_000_001, "next_deal": 70_000_001, "balance": None,
                "positions": [], "orders": [], "history_orders": [], "deals": []}


def _server() -> Dict[str, Any]:
    """The trade server as it stands now: what the market's moves implied since the last look has happened."""
    state = _load_server()
    if _moves.settle(state):
        _save_server(state)
    return state


def _save_server(state: Dict[str, Any]) -> None:
    path = os.path.join(_dir(), "server.json")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _fail(code: int, text: str) -> None:
    global _last_error
    _last_error = (code, text)
    return None


def _ok() -> None:
    global _last_error
    _last_error = (RES_S_OK, "Success")


def _connected() -> bool:
    if not _initialized:
        _fail(RES_E_INTERNAL_FAIL_INIT, "IPC initialize failed, MetaTrader 5 x64 not found")
        return False
    return True


def _server_now() -> Tuple[int, int]:
    """Trade-server time: (seconds, milliseconds)."""
    offset = int(_market().get("server_utc_offset", 7200))
    ms = int(_time.time() * 1000) + offset * 1000
    return ms // 1000, ms


def _specs() -> Dict[str, Dict[str, Any]]:
    return {s["name"]: s for s in _market().get("symbols", [])}


def _quote(spec: Dict[str, Any]) -> Tuple[float, float]:
    q = _market().get("quotes", {}).get(spec["name"])
    if q:
        return float(q["bid"]), float(q["ask"])
    return float(spec["bid"]), round(float(spec["bid"]) + float(spec["spread"]), spec["digits"])


def _open(spec: Dict[str, Any]) -> bool:
    return spec["name"] not in _market().get("closed", [])


# ---- terminal and account --------------------------------------------------------------------------------------

def initialize(path: Optional[str] = None, *, login: Optional[int] = None, password: Optional[str] = None,
               server: Optional[str] = None, timeout: int = 60_000, portable: bool = False) -> bool:
    global _initialized
    _initialized = True
    _ok()
    return True


def shutdown() -> None:
    global _initialized
    _initialized = False
    return None


def version() -> Optional[Tuple[int, int, str]]:
    if not _connected():
        return None
    _ok()
    return (500, 4424, "10 Jul 2024")


def last_error() -> Tuple[int, str]:
    return _last_error


def terminal_info() -> Optional[TerminalInfo]:
    if not _connected():
        return None
    _ok()
    m = _market()
    return TerminalInfo(False, False, True, False, bool(m.get("algo_trading", True)), False, False, False, False,
                        False, 4424, 100000, 0, 12000, 0.0, 0.0, "Test Broker Ltd", "MetaTrader 5", "English",
                        "C:\\Program Files\\MetaTrader 5", "C:\\MT5Data", "C:\\MT5Common")


def _money(state: Dict[str, Any]) -> Tuple[float, float, float]:
    """balance, equity, margin."""
    m = _market()
    balance = state["balance"] if state["balance"] is not None else float(m.get("balance", 100_000))
    specs = _specs()
    profit = sum(_profit(specs[p["symbol"]], p, _close_price(specs[p["symbol"]], p)) for p in state["positions"])
    margin = sum(_margin(specs[p["symbol"]], p["volume"], p["price_open"]) for p in state["positions"])
    return round(balance, 2), round(balance + profit, 2), round(margin, 2)


def account_info() -> Optional[AccountInfo]:
    if not _connected():
        return None
    _ok()
    m = _market()
    state = _server()
    balance, equity, margin = _money(state)
    free = round(equity - margin, 2)
    level = round(equity / margin * 100, 2) if margin > 0 else 0.0
    return AccountInfo(int(m.get("login", 5012345)), ACCOUNT_TRADE_MODE_DEMO, int(m.get("leverage", 100)), 200, 0,
                       True, True, ACCOUNT_MARGIN_MODE_RETAIL_HEDGING, 2, False, balance, 0.0,
                       round(equity - balance, 2), equity, margin, free, level, 50.0, 30.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                       "Test Trader", "TestBroker-Demo", "USD", "Test Broker Ltd")


# ---- symbols ---------------------------------------------------------------------------------------------------

def _symbol_info(spec: Dict[str, Any]) -> SymbolInfo:
    bid, ask = _quote(spec)
    now, _ = _server_now()
    point = 10 ** -spec["digits"]
    # A closed session does not change the symbol's trade mode; order_send answers 10018 then.
    mode = SYMBOL_TRADE_MODE_FULL
    values: Dict[str, Any] = {f: 0 for f in SymbolInfo._fields}
    values.update(
        custom=False, select=True, visible=True, time=now, digits=spec["digits"],
        spread=int(round((ask - bid) / point)), spread_float=True, trade_calc_mode=spec.get("calc_mode", 0),
        trade_mode=mode, trade_stops_level=0, trade_freeze_level=0, trade_exemode=SYMBOL_TRADE_EXECUTION_MARKET,
        swap_rollover3days=3, margin_hedged_use_leg=False, expiration_mode=spec.get("expiration_mode", 15),
        filling_mode=spec.get("filling_mode", 1), order_mode=127, order_gtc_mode=0,
        bid=bid, bidhigh=bid, bidlow=bid, ask=ask, askhigh=ask, asklow=ask, last=0.0, lasthigh=0.0, lastlow=0.0,
        volume_real=0.0, volumehigh_real=0.0, volumelow_real=0.0, option_strike=0.0, point=point,
        # What one tick of one lot is worth in the deposit currency (USD), as the terminal computes it.
        trade_tick_value=_tick_value(spec, point), trade_tick_value_profit=_tick_value(spec, point),
        trade_tick_value_loss=_tick_value(spec, point), trade_tick_size=point,
        trade_contract_size=float(spec["contract_size"]), trade_accrued_interest=0.0, trade_face_value=0.0,
        trade_liquidity_rate=0.0, volume_min=float(spec["volume_min"]), volume_max=float(spec["volume_max"]),
        volume_step=float(spec["volume_step"]), volume_limit=0.0, swap_long=0.0, swap_short=0.0,
        margin_initial=0.0, margin_maintenance=0.0, session_volume=0.0, session_turnover=0.0,
        session_interest=0.0, session_buy_orders_volume=0.0, session_sell_orders_volume=0.0, session_open=bid,
        session_close=bid, session_aw=0.0, session_price_settlement=0.0, session_price_limit_min=0.0,
        session_price_limit_max=0.0, margin_hedged=float(spec["contract_size"]), price_change=0.0,
        price_volatility=0.0, price_theoretical=0.0, price_greeks_delta=0.0, price_greeks_theta=0.0,
        price_greeks_gamma=0.0, price_greeks_vega=0.0, price_greeks_rho=0.0, price_greeks_omega=0.0,
        price_sensitivity=0.0, basis="", category="", currency_base=spec["currency_base"],
        currency_profit=spec["currency_profit"], currency_margin=spec["currency_base"], bank="",
        description=spec["name"], exchange="", formula="", isin="", name=spec["name"], page="",
        path="Markets\\" + spec["name"])
    return SymbolInfo(**values)


def symbols_get(group: Optional[str] = None) -> Optional[Tuple[SymbolInfo, ...]]:
    if not _connected():
        return None
    _ok()
    return tuple(_symbol_info(s) for s in _specs().values())


def symbol_info(symbol: str) -> Optional[SymbolInfo]:
    if not _connected():
        return None
    spec = _specs().get(symbol)
    if spec is None:
        return _fail(RES_E_FAIL, "Terminal: Call failed")
    _ok()
    return _symbol_info(spec)


def symbol_select(symbol: str, enable: bool = True) -> bool:
    if not _connected():
        return False
    if symbol not in _specs():
        _fail(RES_E_FAIL, "Terminal: Call failed")
        return False
    _ok()
    return True


def symbol_info_tick(symbol: str) -> Optional[Tick]:
    if not _connected():
        return None
    spec = _specs().get(symbol)
    if spec is None:
        return _fail(RES_E_FAIL, "Terminal: Call failed")
    _ok()
    bid, ask = _quote(spec)
    now, ms = _server_now()
    # A quote with a "time" (UTC seconds) last ticked then; without one it ticks whenever it is read.
    quoted = _market().get("quotes", {}).get(spec["name"], {}).get("time")
    if quoted is not None:
        offset = int(_market().get("server_utc_offset", 7200))
        ms = int(float(quoted) * 1000) + offset * 1000
        now = ms // 1000
    return Tick(now, bid, ask, 0.0, 0, ms, 6, 0.0)


# ---- positions, orders, history --------------------------------------------------------------------------------

def _close_price(spec: Dict[str, Any], pos: Dict[str, Any]) -> float:
    bid, ask = _quote(spec)
    return bid if pos["type"] == POSITION_TYPE_BUY else ask


def _tick_value(spec: Dict[str, Any], point: float) -> float:
    return _to_usd(point * float(spec["contract_size"]), spec["currency_profit"])


def _to_usd(amount: float, currency: str) -> float:
    if currency == "USD":
        return amount
    specs = _specs()
    direct = specs.get(currency + "USD")
    if direct:
        return amount * _quote(direct)[0]
    inverse = specs.get("USD" + currency)
    if inverse:
        return amount / _quote(inverse)[0]
    return amount


def _profit(spec: Dict[str, Any], pos: Dict[str, Any], price: float, volume: Optional[float] = None) -> float:
    v = pos["volume"] if volume is None else volume
    direction = 1 if pos["type"] == POSITION_TYPE_BUY else -1
    raw = direction * (price - pos["price_open"]) * v * float(spec["contract_size"])
    return round(_to_usd(raw, spec["currency_profit"]), 2)


def _margin(spec: Dict[str, Any], volume: float, price: float) -> float:
    leverage = float(_market().get("leverage", 100))
    units = volume * float(spec["contract_size"])
    if spec.get("calc_mode", 0) == SYMBOL_CALC_MODE_FOREX and spec["currency_base"] == "USD":
        return units / leverage
    return _to_usd(units * price, spec["currency_profit"]) / leverage


def _position_tuple(p: Dict[str, Any]) -> TradePosition:
    spec = _specs()[p["symbol"]]
    price = _close_price(spec, p)
    return TradePosition(p["ticket"], p["time"], p["time"] * 1000, p["time_update"], p["time_update"] * 1000,
                         p["type"], p["magic"], p["ticket"], p.get("reason", POSITION_REASON_EXPERT), p["volume"], p["price_open"],
                         p["sl"], p["tp"], price, 0.0, _profit(spec, p, price), p["symbol"], p["comment"], "")


def _order_tuple(o: Dict[str, Any]) -> TradeOrder:
    return TradeOrder(o["ticket"], o["time_setup"], o["time_setup"] * 1000, o["time_done"], o["time_done"] * 1000,
                      o["time_expiration"], o["type"], o["type_time"], o["type_filling"], o["state"], o["magic"],
                      o["position_id"], 0, o.get("reason", ORDER_REASON_EXPERT), o["volume_initial"], o["volume_current"],
                      o["price_open"], o["sl"], o["tp"], o["price_current"], o["price_stoplimit"], o["symbol"],
                      o["comment"], "")


def _deal_tuple(d: Dict[str, Any]) -> TradeDeal:
    return TradeDeal(d["ticket"], d["order"], d["time"], d["time"] * 1000, d["type"], d["entry"], d["magic"],
                     d["position_id"], d.get("reason", DEAL_REASON_EXPERT), d["volume"], d["price"],
                     d.get("commission", 0.0), 0.0, d["profit"], 0.0,
                     d["symbol"], d["comment"], "")


def _select(items: List[Dict[str, Any]], symbol: Optional[str], group: Optional[str], ticket: Optional[int]):
    out = items
    if ticket is not None:
        out = [i for i in out if i["ticket"] == ticket]
    if symbol is not None:
        out = [i for i in out if i["symbol"] == symbol]
    if group is not None and group not in ("*", ""):
        pattern = group.strip("*")
        out = [i for i in out if pattern in i["symbol"]]
    return out


def positions_get(symbol: Optional[str] = None, group: Optional[str] = None,
                  ticket: Optional[int] = None) -> Optional[Tuple[TradePosition, ...]]:
    if not _connected():
        return None
    _ok()
    return tuple(_position_tuple(p) for p in _select(_server()["positions"], symbol, group, ticket))


def orders_get(symbol: Optional[str] = None, group: Optional[str] = None,
               ticket: Optional[int] = None) -> Optional[Tuple[TradeOrder, ...]]:
    if not _connected():
        return None
    _ok()
    return tuple(_order_tuple(o) for o in _select(_server()["orders"], symbol, group, ticket))


def _history(kind: str, args: Tuple[Any, ...], group: Optional[str], ticket: Optional[int],
             position: Optional[int]) -> Optional[List[Dict[str, Any]]]:
    if not _connected():
        return None
    items = _server()[kind]
    if ticket is not None:
        key = "ticket" if kind == "history_orders" else "order"
        return [i for i in items if i[key] == ticket]
    if position is not None:
        return [i for i in items if i["position_id"] == position]
    if len(args) != 2:
        return _fail(RES_E_INVALID_PARAMS, "Invalid arguments")
    start, end = (int(a.timestamp()) if hasattr(a, "timestamp") else int(a) for a in args)
    time_key = "time_done" if kind == "history_orders" else "time"
    out = [i for i in items if start <= i[time_key] <= end]
    return _select(out, None, group, None)


def history_orders_get(*args: Any, group: Optional[str] = None, ticket: Optional[int] = None,
                       position: Optional[int] = None) -> Optional[Tuple[TradeOrder, ...]]:
    found = _history("history_orders", args, group, ticket, position)
    if found is None:
        return None
    _ok()
    return tuple(_order_tuple(o) for o in found)


def history_deals_get(*args: Any, group: Optional[str] = None, ticket: Optional[int] = None,
                      position: Optional[int] = None) -> Optional[Tuple[TradeDeal, ...]]:
    found = _history("deals", args, group, ticket, position)
    if found is None:
        return None
    _ok()
    return tuple(_deal_tuple(d) for d in found)


# ---- order_send ------------------------------------------------------------------------------------------------

class _Refused(Exception):
    def __init__(self, retcode: int) -> None:
        super().__init__(retcode)
        self.retcode = retcode


def _crash(point: str, action: int) -> None:
    global _crash_armed
    if _crash_armed == point and _crash_action in (0, action):
        _crash_armed = ""
        os.kill(os.getpid(), signal.SIGKILL)


def order_send(request: Dict[str, Any]) -> Optional[OrderSendResult]:
    global _request_id
    if not _connected():
        return None
    if not isinstance(request, dict):
        return _fail(RES_E_INVALID_PARAMS, "Invalid arguments")
    for key in request:
        if key not in _REQUEST_FIELDS:
            return _fail(RES_E_INVALID_PARAMS, 'Invalid "%s" argument' % key)
    if len(str(request.get("comment", ""))) > 31:
        return _fail(RES_E_INVALID_PARAMS, 'Invalid "comment" argument')
    req = TradeRequest(**{f: request.get(f, "" if f in ("symbol", "comment") else 0) for f in _REQUEST_FIELDS})
    _request_id += 1
    state = _server()
    if not bool(_market().get("algo_trading", True)):
        return _result(TRADE_RETCODE_CLIENT_DISABLES_AT, req, state)
    try:
        deal, order, volume, price, retcode = _execute(req, state)
    except _Refused as refused:
        return _result(refused.retcode, req, state)
    _crash("before_fill", req.action)
    state.setdefault("requests", []).append({"action": req.action, "position": req.position, "order": order,
                                             "volume": volume or float(req.volume or 0), "sl": float(req.sl or 0),
                                             "tp": float(req.tp or 0), "comment": req.comment})
    _save_server(state)
    _crash("after_fill", req.action)
    return _result(retcode, req, state, deal, order, volume, price)


def _result(retcode: int, req: TradeRequest, state: Dict[str, Any], deal: int = 0, order: int = 0,
            volume: float = 0.0, price: float = 0.0) -> OrderSendResult:
    _ok()
    bid = ask = 0.0
    spec = _specs().get(req.symbol)
    if spec:
        bid, ask = _quote(spec)
    return OrderSendResult(retcode, deal, order, volume, price, bid, ask, _RETCODE_TEXT.get(retcode, ""),
                           _request_id, 0, req)


def _execute(req: TradeRequest, state: Dict[str, Any]) -> Tuple[int, int, float, float, int]:
    if req.action == TRADE_ACTION_DEAL:
        return _deal(req, state)
    if req.action == TRADE_ACTION_PENDING:
        return _pending(req, state)
    if req.action == TRADE_ACTION_SLTP:
        return _sltp(req, state)
    if req.action == TRADE_ACTION_MODIFY:
        return _modify(req, state)
    if req.action == TRADE_ACTION_REMOVE:
        return _remove(req, state)
    raise _Refused(TRADE_RETCODE_INVALID)


def _spec_of(symbol: str) -> Dict[str, Any]:
    spec = _specs().get(symbol)
    if spec is None:
        raise _Refused(TRADE_RETCODE_INVALID)
    if not _open(spec):
        raise _Refused(TRADE_RETCODE_MARKET_CLOSED)
    return spec


def _check_volume(spec: Dict[str, Any], volume: float) -> float:
    step = float(spec["volume_step"])
    if not (volume >= float(spec["volume_min"]) - 1e-9 and volume <= float(spec["volume_max"]) + 1e-9):
        raise _Refused(TRADE_RETCODE_INVALID_VOLUME)
    if abs(volume / step - round(volume / step)) > 1e-7:
        raise _Refused(TRADE_RETCODE_INVALID_VOLUME)
    return round(volume, 8)


def _check_stops(buy: bool, ref: float, sl: float, tp: float) -> None:
    """Stops level 0: a buy's SL below the reference and TP above it, a sell's mirrored (0 = none)."""
    if buy:
        if (sl and not sl < ref) or (tp and not tp > ref):
            raise _Refused(TRADE_RETCODE_INVALID_STOPS)
    elif (sl and not sl > ref) or (tp and not tp < ref):
        raise _Refused(TRADE_RETCODE_INVALID_STOPS)


def _next(state: Dict[str, Any], key: str) -> int:
    value = state[key]
    state[key] = value + 1
    return value


def _check_filling(spec: Dict[str, Any], filling: int, pending: bool) -> None:
    if pending:
        if filling not in (ORDER_FILLING_RETURN, ORDER_FILLING_FOK, ORDER_FILLING_IOC):
            raise _Refused(TRADE_RETCODE_INVALID_FILL)
        return
    flags = int(spec.get("filling_mode", 1))
    allowed = {ORDER_FILLING_FOK: flags & 1, ORDER_FILLING_IOC: flags & 2, ORDER_FILLING_RETURN: 1}
    if not allowed.get(filling, 0):
        raise _Refused(TRADE_RETCODE_INVALID_FILL)


def _deal(req: TradeRequest, state: Dict[str, Any]) -> Tuple[int, int, float, float, int]:
    if req.type not in (ORDER_TYPE_BUY, ORDER_TYPE_SELL):
        raise _Refused(TRADE_RETCODE_INVALID_ORDER)
    buy = req.type == ORDER_TYPE_BUY
    now, _ = _server_now()
    if req.position:
        pos = next((p for p in state["positions"] if p["ticket"] == req.position), None)
        if pos is None:
            raise _Refused(TRADE_RETCODE_POSITION_CLOSED)
        spec = _spec_of(pos["symbol"])
        if req.symbol and req.symbol != pos["symbol"]:
            raise _Refused(TRADE_RETCODE_INVALID)
        if (pos["type"] == POSITION_TYPE_BUY) == buy:
            raise _Refused(TRADE_RETCODE_INVALID)
        volume = _check_volume(spec, float(req.volume))
        if volume > pos["volume"] + 1e-9:
            raise _Refused(TRADE_RETCODE_INVALID_CLOSE_VOLUME)
        _check_filling(spec, req.type_filling, False)
        bid, ask = _quote(spec)
        price = ask if buy else bid
        deal, order = _close(state, pos, volume, price, DEAL_REASON_EXPERT, req.comment, req.magic, req.type_filling)
        return deal, order, volume, price, TRADE_RETCODE_DONE
    spec = _spec_of(req.symbol)
    volume = _check_volume(spec, float(req.volume))
    _check_filling(spec, req.type_filling, False)
    bid, ask = _quote(spec)
    price = ask if buy else bid
    _check_stops(buy, bid if buy else ask, float(req.sl or 0), float(req.tp or 0))
    _, equity, margin = _money(state)
    if _margin(spec, volume, price) > equity - margin + 1e-9:
        raise _Refused(TRADE_RETCODE_NO_MONEY)
    order = _next(state, "next_order")
    state["history_orders"].append(_order_record(order, req, spec, req.type, volume, price, now,
                                                 ORDER_STATE_FILLED, order))
    deal = _open_position(state, spec, order, req.type, volume, price, float(req.sl or 0), float(req.tp or 0),
                   req.magic, req.comment, DEAL_REASON_EXPERT)
    return deal, order, volume, price, TRADE_RETCODE_DONE


def _commission(spec: Dict[str, Any], volume: float) -> float:
    """What a symbol's `commission_per_lot` (market.json, default none) charges a deal, as a negative amount."""
    return -round(float(spec.get("commission_per_lot", 0.0)) * volume, 2)


def _charge(state: Dict[str, Any], amount: float) -> None:
    balance = state["balance"] if state["balance"] is not None else float(_market().get("balance", 100_000))
    state["balance"] = round(balance + amount, 2)


def _open_position(state: Dict[str, Any], spec: Dict[str, Any], order: int, otype: int, volume: float, price: float,
                   sl: float, tp: float, magic: int, comment: str, reason: int) -> int:
    """The DEAL_ENTRY_IN deal of `order` and the position it opens (hedging: the position's ticket is the order's)."""
    now, _ = _server_now()
    deal = _next(state, "next_deal")
    commission = _commission(spec, volume)
    buy = otype in (ORDER_TYPE_BUY, ORDER_TYPE_BUY_LIMIT, ORDER_TYPE_BUY_STOP, ORDER_TYPE_BUY_STOP_LIMIT)
    state["deals"].append({"ticket": deal, "order": order, "time": now, "type": DEAL_TYPE_BUY if buy else DEAL_TYPE_SELL,
                           "entry": DEAL_ENTRY_IN,
                           "magic": magic, "position_id": order, "reason": reason, "volume": volume, "price": price,
                           "profit": 0.0, "commission": commission, "symbol": spec["name"], "comment": comment})
    _charge(state, commission)
    state["positions"].append({"ticket": order, "time": now, "time_update": now,
                               "type": POSITION_TYPE_BUY if buy else POSITION_TYPE_SELL, "magic": magic,
                               "volume": volume, "price_open": price, "sl": sl, "tp": tp, "symbol": spec["name"],
                               "comment": comment})
    return deal


# The order reason that goes with each deal reason (the trade server places an order for every deal it makes).
_ORDER_REASON_OF_DEAL = {DEAL_REASON_CLIENT: ORDER_REASON_CLIENT, DEAL_REASON_MOBILE: ORDER_REASON_MOBILE,
                         DEAL_REASON_WEB: ORDER_REASON_WEB, DEAL_REASON_EXPERT: ORDER_REASON_EXPERT,
                         DEAL_REASON_SL: ORDER_REASON_SL, DEAL_REASON_TP: ORDER_REASON_TP, DEAL_REASON_SO: ORDER_REASON_SO}


def _close(state: Dict[str, Any], pos: Dict[str, Any], volume: float, price: float, reason: int, comment: str,
           magic: int, filling: int = ORDER_FILLING_FOK) -> Tuple[int, int]:
    """All or part of `pos` closed at `price` by an opposite order and its DEAL_ENTRY_OUT deal: by a request
    (DEAL_REASON_EXPERT), by the trade server at the position's SL/TP or stop-out, or by hand in the terminal."""
    spec = _specs()[pos["symbol"]]
    now, _ = _server_now()
    otype = ORDER_TYPE_SELL if pos["type"] == POSITION_TYPE_BUY else ORDER_TYPE_BUY
    profit = _profit(spec, pos, price, volume)
    commission = _commission(spec, volume)
    order = _next(state, "next_order")
    deal = _next(state, "next_deal")
    state["history_orders"].append({
        "ticket": order, "time_setup": now, "time_done": now, "time_expiration": 0, "type": otype,
        "type_time": ORDER_TIME_GTC, "type_filling": filling, "state": ORDER_STATE_FILLED, "magic": magic,
        "position_id": pos["ticket"], "reason": _ORDER_REASON_OF_DEAL[reason], "volume_initial": volume,
        "volume_current": 0.0, "price_open": price, "sl": 0.0, "tp": 0.0, "price_current": price,
        "price_stoplimit": 0.0, "symbol": pos["symbol"], "comment": comment})
    state["deals"].append({"ticket": deal, "order": order, "time": now, "type": otype, "entry": DEAL_ENTRY_OUT,
                           "magic": magic, "position_id": pos["ticket"], "reason": reason, "volume": volume,
                           "price": price, "profit": profit, "commission": commission, "symbol": pos["symbol"],
                           "comment": comment})
    _charge(state, profit + commission)
    remaining = round(pos["volume"] - volume, 8)
    if remaining <= 1e-9:
        state["positions"].remove(pos)
    else:
        pos["volume"] = remaining
        pos["time_update"] = now
    return deal, order


def _order_record(ticket: int, req: TradeRequest, spec: Dict[str, Any], otype: int, volume: float, price: float,
                  now: int, state: int, position_id: int) -> Dict[str, Any]:
    return {"ticket": ticket, "time_setup": now, "time_done": now if state != ORDER_STATE_PLACED else 0,
            "time_expiration": int(req.expiration or 0), "type": otype, "type_time": req.type_time,
            "type_filling": req.type_filling, "state": state, "magic": req.magic, "position_id": position_id,
            "volume_initial": volume, "volume_current": 0.0 if state == ORDER_STATE_FILLED else volume,
            "price_open": price, "sl": float(req.sl or 0), "tp": float(req.tp or 0), "price_current": price,
            "price_stoplimit": float(req.stoplimit or 0), "symbol": spec["name"], "comment": req.comment}


def _check_pending_price(spec: Dict[str, Any], otype: int, price: float, stoplimit: float) -> None:
    bid, ask = _quote(spec)
    ok = {
        ORDER_TYPE_BUY_LIMIT: price < ask,
        ORDER_TYPE_SELL_LIMIT: price > bid,
        ORDER_TYPE_BUY_STOP: price > ask,
        ORDER_TYPE_SELL_STOP: price < bid,
        # Stop-limit: `price` is the trigger, `stoplimit` the limit order's price placed when it is reached.
        ORDER_TYPE_BUY_STOP_LIMIT: price > ask and 0 < stoplimit <= price,
        ORDER_TYPE_SELL_STOP_LIMIT: price < bid and stoplimit >= price,
    }[otype]
    if not ok or price <= 0:
        raise _Refused(TRADE_RETCODE_INVALID_PRICE)


def _entry_of(otype: int, price: float, stoplimit: float) -> float:
    return stoplimit if otype in (ORDER_TYPE_BUY_STOP_LIMIT, ORDER_TYPE_SELL_STOP_LIMIT) else price


def _check_expiration(spec: Dict[str, Any], type_time: int, expiration: int) -> int:
    modes = int(spec.get("expiration_mode", 15))
    if type_time == ORDER_TIME_GTC:
        if not modes & 1:
            raise _Refused(TRADE_RETCODE_INVALID_EXPIRATION)
        return 0
    if type_time == ORDER_TIME_SPECIFIED:
        now, _ = _server_now()
        if not modes & 4 or not expiration or int(expiration) <= now:
            raise _Refused(TRADE_RETCODE_INVALID_EXPIRATION)
        return int(expiration)
    raise _Refused(TRADE_RETCODE_INVALID_EXPIRATION)


def _pending(req: TradeRequest, state: Dict[str, Any]) -> Tuple[int, int, float, float, int]:
    if req.type not in range(ORDER_TYPE_BUY_LIMIT, ORDER_TYPE_SELL_STOP_LIMIT + 1):
        raise _Refused(TRADE_RETCODE_INVALID_ORDER)
    spec = _spec_of(req.symbol)
    volume = _check_volume(spec, float(req.volume))
    _check_filling(spec, req.type_filling, True)
    price, stoplimit = float(req.price or 0), float(req.stoplimit or 0)
    _check_pending_price(spec, req.type, price, stoplimit)
    buy = req.type in (ORDER_TYPE_BUY_LIMIT, ORDER_TYPE_BUY_STOP, ORDER_TYPE_BUY_STOP_LIMIT)
    entry = _entry_of(req.type, price, stoplimit)
    _check_stops(buy, entry, float(req.sl or 0), float(req.tp or 0))
    expiration = _check_expiration(spec, req.type_time, int(req.expiration or 0))
    _, equity, margin = _money(state)
    if _margin(spec, volume, entry) > equity - margin + 1e-9:
        raise _Refused(TRADE_RETCODE_NO_MONEY)
    now, _ = _server_now()
    order = _next(state, "next_order")
    record = _order_record(order, req, spec, req.type, volume, price, now, ORDER_STATE_PLACED, 0)
    record["time_expiration"] = expiration
    state["orders"].append(record)
    return 0, order, volume, price, TRADE_RETCODE_PLACED


def _sltp(req: TradeRequest, state: Dict[str, Any]) -> Tuple[int, int, float, float, int]:
    pos = next((p for p in state["positions"] if p["ticket"] == req.position), None)
    if pos is None:
        raise _Refused(TRADE_RETCODE_POSITION_CLOSED)
    spec = _spec_of(pos["symbol"])
    sl, tp = float(req.sl or 0), float(req.tp or 0)
    buy = pos["type"] == POSITION_TYPE_BUY
    bid, ask = _quote(spec)
    _check_stops(buy, bid if buy else ask, sl, tp)
    if sl == pos["sl"] and tp == pos["tp"]:
        raise _Refused(TRADE_RETCODE_NO_CHANGES)
    pos["sl"], pos["tp"] = sl, tp
    pos["time_update"], _ = _server_now()
    return 0, 0, 0.0, 0.0, TRADE_RETCODE_DONE


def _modify(req: TradeRequest, state: Dict[str, Any]) -> Tuple[int, int, float, float, int]:
    order = next((o for o in state["orders"] if o["ticket"] == req.order), None)
    if order is None:
        raise _Refused(TRADE_RETCODE_INVALID)
    spec = _spec_of(order["symbol"])
    price, stoplimit = float(req.price or 0), float(req.stoplimit or 0)
    if order["type"] not in (ORDER_TYPE_BUY_STOP_LIMIT, ORDER_TYPE_SELL_STOP_LIMIT):
        stoplimit = 0.0
    if price != order["price_open"] or stoplimit != order["price_stoplimit"]:
        _check_pending_price(spec, order["type"], price, stoplimit)
    buy = order["type"] in (ORDER_TYPE_BUY_LIMIT, ORDER_TYPE_BUY_STOP, ORDER_TYPE_BUY_STOP_LIMIT)
    sl, tp = float(req.sl or 0), float(req.tp or 0)
    _check_stops(buy, _entry_of(order["type"], price, stoplimit), sl, tp)
    expiration = _check_expiration(spec, req.type_time, int(req.expiration or 0))
    new = {"price_open": price, "price_stoplimit": stoplimit, "sl": sl, "tp": tp, "time_expiration": expiration,
           "type_time": req.type_time}
    if all(order[k] == v for k, v in new.items()):
        raise _Refused(TRADE_RETCODE_NO_CHANGES)
    order.update(new)
    order["price_current"] = price
    return 0, order["ticket"], 0.0, 0.0, TRADE_RETCODE_DONE


def _remove(req: TradeRequest, state: Dict[str, Any]) -> Tuple[int, int, float, float, int]:
    order = next((o for o in state["orders"] if o["ticket"] == req.order), None)
    if order is None:
        raise _Refused(TRADE_RETCODE_INVALID)
    _spec_of(order["symbol"])
    state["orders"].remove(order)
    now, _ = _server_now()
    order.update(state=ORDER_STATE_CANCELED, time_done=now)
    state["history_orders"].append(order)
    return 0, order["ticket"], 0.0, 0.0, TRADE_RETCODE_DONE


# Last: it reads this module's functions (the trade server's own moves).
from . import _moves  # noqa: E402
