from __future__ import annotations

import time as _time
from datetime import datetime, timezone

import pytest

from conftest import SERVER_UTC_OFFSET, Double, command
from es_mt5_bridge.protocol import parse_command
from es_mt5_bridge.terminal import Outcome, TerminalUnavailable, pip_size, tag_of
from es_mt5_bridge.trading import Trader


def trader(double: Double) -> Trader:
    return Trader(double.mt5, lambda: SERVER_UTC_OFFSET)


def run(double: Double, action: str, **fields) -> Outcome:
    return trader(double).execute(parse_command(command(action, **fields)), recovering=False)


def test_when_a_buy_has_pips_then_the_deal_opens_a_position_at_the_ask_with_stops_from_the_fill(double: Double) -> None:
    out = run(double, "buy", symbol="EURUSD", volume=0.1, slPips=100, tpPips=150)
    assert (out.status, out.price, out.volume, out.retcode) == ("filled", 1.0851, 0.1, 10009)
    [pos] = double.mt5.positions_get()
    assert (str(pos.ticket), pos.type, pos.price_open, pos.sl, pos.tp) == (out.ticket, double.mt5.POSITION_TYPE_BUY, 1.0851, 1.0751, 1.1001)
    assert pos.comment.startswith("es:") and pos.magic > 0


def test_when_a_jpy_pair_is_sold_then_a_pip_is_0_01_and_the_stops_mirror(double: Double) -> None:
    out = run(double, "sell", symbol="USDJPY", volume=0.2, slPips=100, tpPips=150)
    [pos] = double.mt5.positions_get(ticket=int(out.ticket))
    assert (pos.price_open, pos.sl, pos.tp) == (150.0, 151.0, 148.5)


def test_when_a_stop_limit_arrives_then_mt5_gets_the_trigger_as_price_and_the_limit_as_stoplimit(double: Double) -> None:
    out = run(double, "buy_stop_limit", symbol="EURUSD", volume=0.1, price=1.0901, stopLimitPrice=1.0911, slPips=25)
    [order] = double.mt5.orders_get(ticket=int(out.ticket))
    assert (order.type, order.price_open, order.price_stoplimit, order.sl) == (double.mt5.ORDER_TYPE_BUY_STOP_LIMIT, 1.0911, 1.0901, 1.0876)
    assert (out.status, out.price, out.retcode) == ("filled", 1.0901, 10008)


def test_when_a_pending_order_has_an_expiry_then_it_is_sent_in_trade_server_time(double: Double) -> None:
    out = run(double, "sell_limit", symbol="EURUSD", volume=0.1, price=1.09, expiry="2030-01-01T10:00:00Z")
    [order] = double.mt5.orders_get(ticket=int(out.ticket))
    utc = int(datetime(2030, 1, 1, 10, tzinfo=timezone.utc).timestamp())
    assert (order.type_time, order.time_expiration) == (double.mt5.ORDER_TIME_SPECIFIED, utc + SERVER_UTC_OFFSET)


@pytest.mark.parametrize("action, fields, retcode", [
    ("buy", {"symbol": "FOOBAR", "volume": 0.1}, 10013),
    ("buy", {"symbol": "XAUUSD", "volume": 60}, 10014),
    ("buy", {"symbol": "XAUUSD", "volume": 50}, 10019),
    ("buy_limit", {"symbol": "EURUSD", "volume": 0.1, "price": 1.09}, 10015),
    ("sell", {"symbol": "EURUSD", "volume": 0.1, "tp": 1.09}, 10016),
    ("close", {"positionId": "99999999"}, 10036),
    ("modify_sl", {"positionId": "abc", "sl": 1.0}, 10036),
    ("cancel_pending", {"orderId": "99999999"}, 4754),
    ("modify_pending", {"orderId": "99999999", "price": 1.0}, 4754),
])
def test_when_the_broker_or_the_terminal_refuses_then_the_outcome_carries_mt5s_code(double: Double, action, fields, retcode) -> None:
    out = run(double, action, **fields)
    assert (out.status, out.retcode) == ("rejected", retcode)
    assert out.message


def test_when_the_market_is_closed_then_it_is_10018(double: Double) -> None:
    double.close_market("US30")
    assert run(double, "buy", symbol="US30", volume=0.1).retcode == 10018


def test_when_algo_trading_is_off_then_the_broker_refusal_10027_is_passed_on(double: Double) -> None:
    double.market["algo_trading"] = False
    double.write()
    out = run(double, "buy", symbol="EURUSD", volume=0.1)
    assert (out.status, out.retcode) == ("rejected", 10027)


def test_when_an_sl_is_set_to_its_current_level_then_it_is_done_with_no_changes(double: Double) -> None:
    ticket = run(double, "buy", symbol="EURUSD", volume=0.1, sl=1.08).ticket
    out = run(double, "modify_sl", positionId=ticket, sl=1.08)
    assert (out.status, out.retcode) == ("done", 10025)
    assert run(double, "modify_tp", positionId=ticket, tp=1.1).status == "done"
    [pos] = double.mt5.positions_get(ticket=int(ticket))
    assert (pos.sl, pos.tp) == (1.08, 1.1)


def test_when_breakeven_runs_then_the_sl_goes_to_the_entry_only_once_in_profit(double: Double) -> None:
    ticket = run(double, "buy", symbol="EURUSD", volume=0.1).ticket
    assert run(double, "breakeven", positionId=ticket).retcode == 10016
    double.set_quote("EURUSD", 1.086, 1.0861)
    assert run(double, "breakeven", positionId=ticket).status == "done"
    assert double.mt5.positions_get(ticket=int(ticket))[0].sl == 1.0851


def test_when_partial_close_takes_all_then_the_position_is_closed_in_full(double: Double) -> None:
    ticket = run(double, "buy", symbol="EURUSD", volume=0.1).ticket
    part = run(double, "partial_close", positionId=ticket, partialVolume=0.04)
    assert (part.status, part.volume) == ("done", 0.04)
    assert double.mt5.positions_get(ticket=int(ticket))[0].volume == 0.06
    rest = run(double, "partial_close", positionId=ticket, partialVolume=0.5)
    assert (rest.status, rest.message) == ("done", "closed in full")
    assert double.mt5.positions_get() == ()


def test_when_close_all_runs_then_positions_close_and_orders_are_removed_and_the_message_counts_them(double: Double) -> None:
    run(double, "buy", symbol="EURUSD", volume=0.1)
    run(double, "sell", symbol="GBPUSD", volume=0.1)
    order = run(double, "buy_limit", symbol="EURUSD", volume=0.1, price=1.08).ticket
    out = run(double, "close_all")
    assert out.status == "done" and out.message.startswith("closed 2 position(s)") and f"cancelled 1 order(s) {order}" in out.message
    assert (double.mt5.positions_get(), double.mt5.orders_get()) == ((), ())
    canceled = double.mt5.history_orders_get(ticket=int(order))[0]
    assert canceled.state == double.mt5.ORDER_STATE_CANCELED


def test_when_the_account_holds_max_open_positions_then_an_entry_is_refused_by_the_bridge(double: Double) -> None:
    run(double, "buy", symbol="EURUSD", volume=0.1)
    out = run(double, "sell", symbol="EURUSD", volume=0.1, maxOpenPositions=1)
    assert (out.status, out.retcode) == ("rejected", "risk_max_open_positions")
    assert len(double.mt5.positions_get()) == 1


def test_when_the_symbol_holds_its_max_open_positions_then_an_entry_in_it_is_refused_and_one_in_another_symbol_runs(double: Double) -> None:
    run(double, "buy", symbol="EURUSD", volume=0.1)
    out = run(double, "buy", symbol="EURUSD", volume=0.1, maxOpenPositionsPerSymbol=1)
    assert (out.status, out.retcode) == ("rejected", "risk_max_open_positions")
    assert "in EURUSD" in out.message
    other = run(double, "buy_limit", symbol="GBPUSD", volume=0.1, price=1.2, maxOpenPositionsPerSymbol=1)
    assert other.status == "filled"
    assert len(double.mt5.positions_get()) == 1


def test_when_a_command_ran_before_a_crash_then_recovery_finds_its_fill_by_tag_and_sends_nothing(double: Double) -> None:
    raw = command("buy", symbol="EURUSD", volume=0.1)
    first = trader(double).execute(parse_command(raw), recovering=False)
    again = trader(double).execute(parse_command(raw), recovering=True)
    assert (again.status, again.ticket, again.price, again.volume) == ("filled", first.ticket, first.price, first.volume)
    assert len(double.mt5.positions_get()) == 1
    other = trader(double).execute(parse_command(command("sell", symbol="GBPUSD", volume=0.1)), recovering=True)
    assert other.status == "filled" and len(double.mt5.positions_get()) == 2


def test_when_the_terminal_is_gone_then_nothing_is_decided(double: Double) -> None:
    double.mt5.shutdown()
    with pytest.raises(TerminalUnavailable):
        run(double, "buy", symbol="EURUSD", volume=0.1)


def test_pip_size_and_tag_follow_the_protocol_and_mt5s_comment_limit() -> None:
    assert pip_size(5, 0.00001, "EURUSD") == 0.0001
    assert pip_size(3, 0.001, "USDJPY") == 0.01
    assert pip_size(2, 0.01, "XAUUSD") == 0.1
    assert pip_size(1, 0.1, "US30") == 0.1
    assert len(tag_of("signal/sig_x/account/acc-1")) <= 31
    assert tag_of("a") == tag_of("a") != tag_of("b")


def test_when_the_terminal_fails_to_list_positions_then_no_refusal_is_concluded(double: Double, monkeypatch) -> None:
    ticket = run(double, "buy", symbol="EURUSD", volume=0.1).ticket

    def failing(**_: object) -> None:
        double.mt5._fail(double.mt5.RES_E_FAIL, "Terminal: Call failed")
        return None

    monkeypatch.setattr(double.mt5, "positions_get", failing)
    with pytest.raises(TerminalUnavailable):
        run(double, "close", positionId=ticket)


def test_when_an_entry_is_sized_by_risk_then_the_lots_come_from_the_terminals_tick_value_and_the_live_equity(double: Double) -> None:
    t = trader(double)
    # 1 % of equity 100,000 = 1,000 USD; 20 pips of EURUSD = 200 ticks of 1 USD a lot = 200 USD a lot: 5 lots.
    out = t.execute(parse_command(command("buy", symbol="EURUSD", slPips=20, riskSizing={"basis": "equity_percent", "value": 1})), recovering=False)
    assert (out.status, out.volume) == ("filled", 5.0)
    assert out.message is not None and out.message.startswith("sized 5.0 lots by risk: 1% of equity = 1000.00 USD")
    # A fixed 300 USD on USDJPY (150.00): a 30-pip stop is 300 ticks of 100 JPY = 0.6667 USD: 200 USD a lot: 1.5 lots.
    out = t.execute(parse_command(command("sell", symbol="USDJPY", slPips=30, riskSizing={"basis": "fixed_amount", "value": 300})), recovering=False)
    assert (out.status, out.volume) == ("filled", 1.5)


def test_when_the_risk_is_below_one_minimum_lot_then_the_entry_is_refused_and_nothing_is_sent(double: Double) -> None:
    out = run(double, "buy", symbol="EURUSD", slPips=20, riskSizing={"basis": "fixed_amount", "value": 1})
    assert (out.status, out.retcode) == ("rejected", "risk_volume_below_minimum")
    assert double.mt5.positions_get() == ()


def test_when_the_equity_is_down_past_the_daily_loss_limit_then_the_next_entry_is_refused_and_an_exit_runs(double: Double) -> None:
    t = trader(double)
    guards = {"dailyLossAmount": 5, "timezone": "Europe/London"}
    # The first entry sees the day's opening equity (100,000) and passes; its spread costs 10 USD at once.
    first = t.execute(parse_command(command("buy", symbol="EURUSD", volume=1, lossGuards=guards)), recovering=False)
    assert first.status == "filled"
    second = t.execute(parse_command(command("buy", symbol="EURUSD", volume=1, lossGuards=guards)), recovering=False)
    assert (second.status, second.retcode) == ("rejected", "risk_daily_loss_limit")
    assert t.execute(parse_command(command("close_all")), recovering=False).status == "done"


def test_when_a_command_carries_a_malformed_risk_sizing_then_it_is_invalid(double: Double) -> None:
    with pytest.raises(ValueError):
        parse_command(command("buy", symbol="EURUSD", slPips=20, riskSizing={"basis": "half", "value": 1}))


def test_when_the_owner_resets_the_drawdown_guard_then_the_peak_starts_again_from_the_equity_now(double: Double) -> None:
    t = trader(double)
    guards = {"maxDrawdownPercent": 2, "timezone": "UTC"}
    assert t.execute(parse_command(command("buy", symbol="EURUSD", volume=10, lossGuards=guards)), recovering=False).status == "filled"
    double.set_quote("EURUSD", 1.0550, 1.0551)  # 10 lots, 300 pips down: -30,000 on 100,000
    refused = t.execute(parse_command(command("buy", symbol="EURUSD", volume=1, lossGuards=guards)), recovering=False)
    assert (refused.status, refused.retcode) == ("rejected", "risk_max_drawdown")
    reset = {**guards, "drawdownResetAt": "2026-11-24T11:00:00Z"}
    assert t.execute(parse_command(command("buy", symbol="EURUSD", volume=1, lossGuards=reset)), recovering=False).status == "filled"


def test_when_the_entrys_last_tick_is_older_than_the_bound_then_it_is_refused_stale_and_a_fresh_tick_sizes_it(double: Double) -> None:
    t = trader(double)
    sized = {"symbol": "EURUSD", "slPips": 20, "riskSizing": {"basis": "equity_percent", "value": 1}, "figuresMaxAgeMs": 60_000}
    double.set_quote("EURUSD", 1.085, 1.0851, at=_time.time() - 75)
    out = t.execute(parse_command(command("buy", **sized)), recovering=False)
    assert (out.status, out.retcode) == ("rejected", "risk_figures_stale")
    assert out.message is not None and out.message.startswith("the last EURUSD quote is 75.")
    assert double.mt5.positions_get() == ()
    double.set_quote("EURUSD", 1.085, 1.0851, at=_time.time() - 5)
    out = t.execute(parse_command(command("buy", **sized)), recovering=False)
    assert (out.status, out.volume) == ("filled", 5.0)


def test_when_an_open_positions_tick_is_stale_then_a_guarded_entry_is_refused_but_one_sized_on_the_balance_is_not(double: Double) -> None:
    t = trader(double)
    assert run(double, "buy", symbol="USDJPY", volume=0.1).status == "filled"
    double.set_quote("USDJPY", 150.0, 150.02, at=_time.time() - 120)
    guarded = {"symbol": "EURUSD", "volume": 0.1, "lossGuards": {"dailyLossAmount": 500, "timezone": "UTC"}, "figuresMaxAgeMs": 60_000}
    out = t.execute(parse_command(command("buy", **guarded)), recovering=False)
    assert (out.status, out.retcode) == ("rejected", "risk_figures_stale")
    assert out.message is not None and "USDJPY" in out.message
    on_balance = {"symbol": "EURUSD", "slPips": 20, "riskSizing": {"basis": "balance_percent", "value": 1}, "figuresMaxAgeMs": 60_000}
    assert t.execute(parse_command(command("buy", **on_balance)), recovering=False).status == "filled"
    # Without a bound (an older service) nothing is refused for age; exits never are.
    assert t.execute(parse_command(command("buy", **{**guarded, "figuresMaxAgeMs": None})), recovering=False).status == "filled"
    assert t.execute(parse_command(command("close_all", figuresMaxAgeMs=60_000)), recovering=False).status == "done"


def test_when_figures_max_age_is_not_a_positive_integer_then_the_command_is_invalid(double: Double) -> None:
    for bad in (0, -1, 1.5, "60000"):
        with pytest.raises(ValueError):
            parse_command(command("buy", symbol="EURUSD", volume=0.1, figuresMaxAgeMs=bad))


def test_when_the_terminal_reports_equity_nan_then_a_guarded_or_sized_entry_is_refused_and_nothing_is_sent(
    double: Double, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every comparison with NaN is false: a guard on it would pass the entry, and floor(nan) would raise. Fail closed.
    real_info = double.mt5.account_info
    monkeypatch.setattr(double.mt5, "account_info", lambda: real_info()._replace(equity=float("nan")))
    guarded = run(double, "buy", symbol="EURUSD", volume=1, lossGuards={"maxDrawdownPercent": 5, "timezone": "UTC"})
    assert (guarded.status, guarded.retcode) == ("rejected", "risk_figures_unavailable")
    sized = run(double, "buy", symbol="EURUSD", slPips=20, riskSizing={"basis": "equity_percent", "value": 1})
    assert (sized.status, sized.retcode) == ("rejected", "risk_figures_unavailable")
    assert double.mt5.positions_get() == ()
    # A fixed amount needs neither figure: it is sized as before.
    fixed = run(double, "buy", symbol="EURUSD", slPips=20, riskSizing={"basis": "fixed_amount", "value": 200})
    assert (fixed.status, fixed.volume) == ("filled", 1.0)
