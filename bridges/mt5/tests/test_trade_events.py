"""Trade events (protocol 1.5) from the MetaTrader5 double's history: each deal reason and order state to its event
and cause, as the bridge reads them through the documented API."""
from __future__ import annotations

import itertools
from typing import Any, Dict, List

from conftest import Double, bridge, command
from es_mt5_bridge.bridge import Bridge
from es_mt5_bridge.terminal import tag_of

_ops = itertools.count(1)


def events(b: Bridge) -> List[Dict[str, Any]]:
    """One look at the terminal, and every event not yet acknowledged (in order)."""
    b.watch.poll_trades()
    assert b.watch.trades is not None
    return b.watch.trades.outbox.unacknowledged()


def of_type(found: List[Dict[str, Any]], kind: str) -> List[Dict[str, Any]]:
    return [e for e in found if e["type"] == kind]


def eurusd(double: Double, bid: float) -> None:
    double.set_quote("EURUSD", bid, round(bid + 0.0001, 5))


def terminal_op(double: Double, **op: Any) -> None:
    """What the trader (or the broker) does in the terminal, as the double applies it."""
    double.market.setdefault("terminal_ops", []).append({"id": f"op-{next(_ops)}", **op})
    double.write()


def buy(b: Bridge, command_id: str, volume: float = 1, **fields: Any) -> str:
    report = b.handle(command("buy", symbol="EURUSD", volume=volume, commandId=command_id, **fields))
    assert report is not None and report.status == "filled", report
    return str(report.ticket)


def test_an_entry_and_its_close_by_command_are_opened_and_closed_by_command_with_the_commands_ids(double: Double, tmp_path) -> None:
    double.market["symbols"][0]["commission_per_lot"] = 3.5
    double.write()
    b = bridge(double, tmp_path)
    ticket = buy(b, "signal/s1/account/acc-1", sl=1.08, tp=1.09)
    eurusd(double, 1.0861)
    b.handle(command("close", positionId=ticket, commandId="signal/s2/account/acc-1"))
    found = events(b)
    assert [e["type"] for e in found] == ["position_opened", "position_closed"]
    opened, closed = found
    assert opened["commandId"] == "signal/s1/account/acc-1" and opened["ticket"] == ticket
    assert (opened["side"], opened["volume"], opened["price"], opened["sl"], opened["tp"]) == ("buy", 1.0, 1.0851, 1.08, 1.09)
    assert opened["at"].endswith("Z") and opened["eventId"].startswith("deal:")
    assert (closed["cause"], closed["commandId"], closed["remainingVolume"]) == ("command", "signal/s2/account/acc-1", 0.0)
    # 1 lot, 1.0851 to 1.0861: 10 pips of 10 USD; commission 3.50 on the way in and 3.50 on the way out.
    assert (closed["volume"], closed["price"], closed["profit"], closed["commission"], closed["swap"]) == (1.0, 1.0861, 100.0, -7.0, 0.0)


def test_a_quote_through_the_sl_closes_by_stop_loss_and_through_the_tp_by_take_profit(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    first = buy(b, "c-sl", sl=1.08, tp=1.09)
    second = buy(b, "c-tp", sl=1.08, tp=1.09)
    b.watch.trades.outbox.acknowledge([e["eventId"] for e in events(b)])  # type: ignore[union-attr]
    eurusd(double, 1.0795)  # through the SL: both close there
    sl_closes = of_type(events(b), "position_closed")
    assert sorted(e["ticket"] for e in sl_closes) == sorted([first, second])
    assert {e["cause"] for e in sl_closes} == {"stop_loss"} and all("commandId" not in e for e in sl_closes)
    assert sl_closes[0]["price"] == 1.0795 and sl_closes[0]["profit"] == -560.0

    third = buy(b, "c-tp2", tp=1.0805)
    eurusd(double, 1.081)
    [tp_close] = [e for e in of_type(events(b), "position_closed") if e["ticket"] == third]
    assert (tp_close["cause"], tp_close["price"]) == ("take_profit", 1.081)


def test_a_close_by_hand_is_manual_and_the_brokers_stop_out_a_margin_call(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    tickets = [buy(b, f"c-{i}") for i in range(4)]
    terminal_op(double, op="close", ticket=int(tickets[0]))
    terminal_op(double, op="close", ticket=int(tickets[1]), reason="mobile")
    terminal_op(double, op="close", ticket=int(tickets[2]), reason="web", volume=0.4)
    terminal_op(double, op="close", ticket=int(tickets[3]), reason="so")
    closes = {e["ticket"]: e for e in of_type(events(b), "position_closed")}
    assert [closes[t]["cause"] for t in tickets] == ["manual", "manual", "manual", "margin_call"]
    # A partial close: what closed now and what is left open.
    assert (closes[tickets[2]]["volume"], closes[tickets[2]]["remainingVolume"]) == (0.4, 0.6)


def test_an_expert_close_that_is_not_the_bridges_is_other(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    ticket = buy(b, "c-1")
    mt5 = double.mt5
    result = mt5.order_send({"action": mt5.TRADE_ACTION_DEAL, "symbol": "EURUSD", "volume": 1.0, "position": int(ticket),
                             "type": mt5.ORDER_TYPE_SELL, "price": 1.085, "type_filling": mt5.ORDER_FILLING_FOK,
                             "comment": "another EA"})
    assert result.retcode == mt5.TRADE_RETCODE_DONE
    [closed] = of_type(events(b), "position_closed")
    assert closed["cause"] == "other"


def test_the_bridges_own_stop_out_closes_by_stop_out_and_cancels_by_stop_out(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    b.watch.arm({"maxDrawdownPercent": 10, "drawdownResetAt": None, "figuresMaxAgeMs": 60_000})
    assert b.trader.marks.observe_peak(float(double.mt5.account_info().equity), None) == 100_000
    buy(b, "c-big", volume=10)
    placed = b.handle(command("buy_limit", symbol="EURUSD", volume=1, price=1.06, commandId="c-limit"))
    assert placed is not None and placed.status == "filled"
    eurusd(double, 1.0741)
    b.watch.check()
    found = events(b)
    [closed] = of_type(found, "position_closed")
    [cancelled] = of_type(found, "order_cancelled")
    assert (closed["cause"], cancelled["cause"], cancelled["ticket"]) == ("stop_out", "stop_out", placed.ticket)


def test_pending_orders_are_placed_then_triggered_expired_or_cancelled(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    limit = b.handle(command("buy_limit", symbol="EURUSD", volume=1, price=1.08, sl=1.07, tp=1.1, commandId="c-limit"))
    by_cmd = b.handle(command("sell_limit", symbol="EURUSD", volume=1, price=1.1, commandId="c-sell-limit"))
    by_hand = b.handle(command("sell_stop", symbol="EURUSD", volume=1, price=1.07, commandId="c-sell-stop"))
    assert limit and by_cmd and by_hand
    placed = of_type(events(b), "order_placed")
    assert [(e["ticket"], e["commandId"], e["orderType"], e["side"]) for e in placed] == [
        (limit.ticket, "c-limit", "limit", "buy"), (by_cmd.ticket, "c-sell-limit", "limit", "sell"),
        (by_hand.ticket, "c-sell-stop", "stop", "sell")]
    assert (placed[0]["price"], placed[0]["sl"], placed[0]["tp"], placed[0]["volume"]) == (1.08, 1.07, 1.1, 1.0)

    eurusd(double, 1.0799)  # the buy limit's ask, 1.08, reached
    found = events(b)
    [triggered] = of_type(found, "order_triggered")
    [opened] = of_type(found, "position_opened")
    assert (triggered["ticket"], triggered["positionTicket"], triggered["price"]) == (limit.ticket, opened["ticket"], 1.08)
    assert (opened["fromOrder"], opened["sl"], opened["tp"], opened["commandId"]) == (limit.ticket, 1.07, 1.1, "c-limit")
    assert found.index(triggered) < found.index(opened)

    b.handle(command("cancel_pending", orderId=by_cmd.ticket, commandId="c-cancel"))
    terminal_op(double, op="cancel", ticket=int(by_hand.ticket))
    cancelled = {e["ticket"]: e for e in of_type(events(b), "order_cancelled")}
    assert (cancelled[by_cmd.ticket]["cause"], cancelled[by_cmd.ticket]["commandId"]) == ("command", "c-cancel")
    assert cancelled[by_hand.ticket]["cause"] == "manual"


def test_a_pending_order_past_its_expiry_expires(double: Double, tmp_path, monkeypatch) -> None:
    b = bridge(double, tmp_path)
    from datetime import datetime, timedelta, timezone

    expiry = (datetime.now(timezone.utc) + timedelta(seconds=2)).isoformat().replace("+00:00", "Z")
    placed = b.handle(command("buy_limit", symbol="EURUSD", volume=1, price=1.08, expiry=expiry, commandId="c-exp"))
    assert placed is not None and placed.status == "filled"
    [event] = of_type(events(b), "order_placed")
    assert event["expiresAt"][:19] == expiry[:19]
    import MetaTrader5

    real = MetaTrader5._server_now
    monkeypatch.setattr(MetaTrader5, "_server_now", lambda: (real()[0] + 5, real()[1] + 5000))
    [expired] = of_type(events(b), "order_expired")
    assert (expired["ticket"], expired["eventId"]) == (placed.ticket, f"order:{placed.ticket}:expired")


def test_a_new_expiry_is_in_order_modified_with_the_order_as_it_is_now(double: Double, tmp_path) -> None:
    from datetime import datetime, timedelta, timezone

    b = bridge(double, tmp_path)
    order = b.handle(command("buy_stop_limit", symbol="EURUSD", volume=0.5, price=1.09, stopLimitPrice=1.091,
                             commandId="c-order"))
    assert order is not None and order.status == "filled"
    [placed] = of_type(events(b), "order_placed")
    assert "expiresAt" not in placed
    expiry = (datetime.now(timezone.utc) + timedelta(hours=2)).replace(microsecond=0)
    done = b.handle(command("modify_pending_expiry", orderId=order.ticket, commandId="c-expiry",
                            expiry=expiry.isoformat().replace("+00:00", "Z")))
    assert done is not None and done.status == "done", done
    [modified] = of_type(events(b), "order_modified")
    # The service's words: price is the limit price, stopLimitPrice the trigger; the expiry in UTC.
    assert {k: modified[k] for k in ("cause", "commandId", "orderType", "price", "stopLimitPrice", "sl", "tp")} == {
        "cause": "command", "commandId": "c-expiry", "orderType": "stop_limit", "price": 1.09, "stopLimitPrice": 1.091,
        "sl": None, "tp": None}
    assert datetime.fromisoformat(modified["expiresAt"].replace("Z", "+00:00")) == expiry


def test_an_sl_moved_by_command_is_modified_by_command_and_by_someone_else_by_the_broker(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    ticket = buy(b, "c-1", sl=1.08)
    events(b)
    b.handle(command("modify_sl", positionId=ticket, sl=1.081, commandId="c-move"))
    [moved] = of_type(events(b), "position_modified")
    assert (moved["cause"], moved["commandId"], moved["sl"], moved["tp"]) == ("command", "c-move", 1.081, None)
    mt5 = double.mt5
    import MetaTrader5

    real = MetaTrader5._server_now
    # A second later (MT5 stamps the change to the second): the broker's own move.
    MetaTrader5._server_now = lambda: (real()[0] + 1, real()[1] + 1000)
    try:
        mt5.order_send({"action": mt5.TRADE_ACTION_SLTP, "symbol": "EURUSD", "position": int(ticket), "sl": 1.082, "tp": 0.0})
        by_broker = [e for e in of_type(events(b), "position_modified") if e["sl"] == 1.082]
    finally:
        MetaTrader5._server_now = real
    assert [e["cause"] for e in by_broker] == ["broker"]


def test_the_book_lists_open_positions_and_pending_orders_oldest_first(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    ticket = buy(b, "c-1", sl=1.08)
    order = b.handle(command("buy_stop_limit", symbol="EURUSD", volume=0.5, price=1.09, stopLimitPrice=1.091,
                             commandId="c-2"))
    assert order is not None and order.status == "filled"
    book = b.watch.trades.book()  # type: ignore[union-attr]
    assert book["truncated"] is False and book["takenAt"].endswith("Z")
    [pos] = book["positions"]
    assert (pos["ticket"], pos["side"], pos["volume"], pos["openPrice"], pos["sl"], pos["tp"]) == (ticket, "buy", 1.0, 1.0851, 1.08, None)
    [pending] = book["orders"]
    # The service's price is the limit price, stopLimitPrice the trigger (MT5 keeps them the other way round).
    assert (pending["orderType"], pending["price"], pending["stopLimitPrice"], pending["volume"]) == ("stop_limit", 1.09, 1.091, 0.5)


def test_the_history_before_the_bridge_first_ran_is_not_reported(double: Double, tmp_path) -> None:
    import MetaTrader5

    mt5 = double.mt5
    real = MetaTrader5._server_now
    MetaTrader5._server_now = lambda: (real()[0] - 2, real()[1] - 2000)  # a deal two seconds before the bridge ran
    try:
        mt5.order_send({"action": mt5.TRADE_ACTION_DEAL, "symbol": "EURUSD", "volume": 1.0, "type": mt5.ORDER_TYPE_BUY,
                        "price": 1.0851, "type_filling": mt5.ORDER_FILLING_FOK})
    finally:
        MetaTrader5._server_now = real
    b = bridge(double, tmp_path)
    assert events(b) == []
    assert len(b.watch.trades.book()["positions"]) == 1  # type: ignore[union-attr]


def test_the_tag_of_a_command_names_it(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    buy(b, "signal/x/account/acc-1")
    assert b.cause_of_tag(tag_of("signal/x/account/acc-1")) == ("command", "signal/x/account/acc-1")
    assert b.cause_of_tag("[sl 1.08000]") is None
