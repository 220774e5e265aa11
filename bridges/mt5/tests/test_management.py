"""Trade management (protocol 1.6, docs/mt5-bridge.md "Trade management") in the bridge, on the MetaTrader5 double:
each feature as a command asks it, what the double's trade server did (its positions and the requests it accepted),
the trade events and their causes, and a bridge that starts again on the same files."""
from __future__ import annotations

import itertools
import json
import os
from typing import Any, Dict, List

import pytest

from conftest import Double, bridge, command
from es_mt5_bridge.bridge import Bridge
from es_mt5_bridge.protocol import CAPABILITIES

FEATURES = ["trailing_stop", "breakeven_trigger", "take_profit_levels", "close_opposite", "max_spread"]
SLTP = 6
DEAL = 1


def eurusd(double: Double, bid: float, spread: float = 0.0001) -> None:
    double.set_quote("EURUSD", bid, round(bid + spread, 5))


_ids = itertools.count(1)


def entry(b: Bridge, action: str = "buy", **fields: Any) -> Any:
    fields.setdefault("symbol", "EURUSD")
    fields.setdefault("volume", 0.1)
    fields.setdefault("commandId", f"signal/s{next(_ids)}/account/acc-1")
    return b.handle(command(action, **fields))


def position(double: Double, ticket: str) -> Dict[str, Any]:
    [pos] = [p for p in double.server()["positions"] if str(p["ticket"]) == ticket]
    return pos


def requests(double: Double, action: int) -> List[Dict[str, Any]]:
    return [r for r in double.server().get("requests", []) if r["action"] == action]


def events(b: Bridge) -> List[Dict[str, Any]]:
    b.watch.poll_trades()
    assert b.watch.trades is not None
    return b.watch.trades.outbox.unacknowledged()


def state(b: Bridge) -> Dict[str, Any]:
    assert b.journal is not None
    with open(b.journal.path + ".managed.json", encoding="utf-8") as f:
        saved: Dict[str, Any] = json.load(f)
    return saved


def test_the_hello_announces_the_five_management_features(double: Double, tmp_path) -> None:
    body = bridge(double, tmp_path).hello_body()
    assert set(FEATURES) <= set(body["capabilities"]) and body["capabilities"] == CAPABILITIES
    assert body["bridgeVersion"] == "3.6.0"


def test_a_trail_moves_the_stop_in_steps_keeping_the_tp_and_never_back(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    report = entry(b, sl=1.0831, tp=1.095, trailDistancePips=10, trailTriggerPips=5, trailStepPips=2)
    assert report.status == "filled"
    ticket = str(report.ticket)
    # Written down before the report left: a restart right after the fill still manages it.
    assert [p["ticket"] for p in state(b)["positions"]] == [ticket]
    seen = []
    for bid in (1.0854, 1.0856, 1.0857, 1.0858, 1.0855, 1.085, 1.0861):
        eurusd(double, bid)
        b.manager.look()
        seen.append(position(double, ticket)["sl"])
    assert seen == [1.0831, 1.0846, 1.0846, 1.0848, 1.0848, 1.0848, 1.0851]
    moves = requests(double, SLTP)
    assert [(r["sl"], r["tp"], r["comment"]) for r in moves] == [(1.0846, 1.095, "es:trailing_stop"), (1.0848, 1.095, "es:trailing_stop"),
                                                               (1.0851, 1.095, "es:trailing_stop")]
    # One event per move, even with no look at the history between two of them.
    modified = [e for e in events(b) if e["type"] == "position_modified"]
    assert [(e["sl"], e["tp"], e["cause"], e["trailActiveAt"]) for e in modified] == [
        (1.0846, 1.095, "trailing_stop", 1.0856), (1.0848, 1.095, "trailing_stop", 1.0856), (1.0851, 1.095, "trailing_stop", 1.0856)]
    assert len({e["eventId"] for e in modified}) == 3 and not [e for e in events(b) if e["type"] == "position_modified"][3:]
    assert state(b)["positions"][0]["stopMoves"] == 3


def test_breakeven_moves_a_sells_stop_once_at_the_trigger(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    ticket = str(entry(b, "sell", sl=1.087, tp=1.08, breakevenTriggerPips=10, breakevenOffsetPips=2).ticket)
    for bid in (1.0844, 1.0839, 1.0829, 1.0844, 1.0819):
        eurusd(double, bid)
        b.manager.look()
    assert position(double, ticket)["sl"] == 1.0848  # the entry 1.085 less 2 pips
    assert [(r["sl"], r["comment"]) for r in requests(double, SLTP)] == [(1.0848, "es:breakeven_trigger")]
    [modified] = [e for e in events(b) if e["type"] == "position_modified"]
    assert modified["cause"] == "breakeven_trigger" and "trailActiveAt" not in modified


def test_take_profit_levels_close_their_shares_once_each_with_their_cause(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    eurusd(double, 1.0849)  # the entry fills at the ask, 1.0850
    ticket = str(entry(b, volume=0.3, sl=1.083, tp=1.09, takeProfits=[{"tpPips": 20, "closePercent": 50},
                                                                      {"tpPips": 10, "closePercent": 30}]).ticket)
    for bid in (1.0859, 1.086, 1.0862, 1.086, 1.087, 1.088):
        eurusd(double, bid)
        b.manager.look()
    closes = requests(double, DEAL)[1:]
    assert [(r["position"], r["volume"], r["comment"]) for r in closes] == [(int(ticket), 0.09, "es:take_profit_level"),
                                                                           (int(ticket), 0.15, "es:take_profit_level")]
    assert position(double, ticket)["volume"] == 0.06 and position(double, ticket)["tp"] == 1.09
    closed = [e for e in events(b) if e["type"] == "position_closed"]
    assert [(e["cause"], e["volume"], e["remainingVolume"]) for e in closed] == [("take_profit_level", 0.09, 0.21),
                                                                                ("take_profit_level", 0.15, 0.06)]


def test_close_opposite_closes_the_other_side_first_then_enters(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    sells = [str(entry(b, "sell", volume=v).ticket) for v in (0.1, 0.2)]
    other = str(entry(b, "sell", symbol="GBPUSD").ticket)
    same_side = str(entry(b, "buy").ticket)
    report = entry(b, "buy", volume=0.3, closeOpposite=True, commandId="signal/rev/account/acc-1")
    assert report.status == "filled"
    held = sorted(str(p["ticket"]) for p in double.server()["positions"])
    assert held == sorted([other, same_side, str(report.ticket)])
    deals = [r for r in requests(double, DEAL)][-3:]
    assert [str(r["position"]) for r in deals[:2]] == sells and deals[2]["position"] == 0  # the closes, then the entry
    closed = [e for e in events(b) if e["type"] == "position_closed"]
    assert [(e["ticket"], e["cause"], e["commandId"]) for e in closed] == [(t, "close_opposite", "signal/rev/account/acc-1") for t in sells]


def test_a_close_opposite_that_fails_refuses_the_entry_and_opens_nothing(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    sell = str(entry(b, "sell").ticket)
    double.market["algo_trading"] = False
    double.write()
    report = entry(b, "buy", closeOpposite=True)
    assert (report.status, report.retcode) == ("rejected", "close_opposite_failed")
    assert f"closing position {sell} failed: 10027" in report.message and "closed none" in report.message
    assert [str(p["ticket"]) for p in double.server()["positions"]] == [sell]


@pytest.mark.parametrize("action, extra", [("buy", {}), ("sell_limit", {"price": 1.09})])
def test_a_spread_wider_than_the_max_refuses_the_entry_before_anything_is_closed_or_placed(double: Double, tmp_path, action, extra) -> None:
    b = bridge(double, tmp_path)
    sell = str(entry(b, "sell").ticket)
    eurusd(double, 1.085, spread=0.00023)
    report = entry(b, action, maxSpreadPips=1.5, closeOpposite=True if action == "buy" else None, **extra)
    assert (report.status, report.retcode, report.message) == ("rejected", "spread_too_wide", "spread 2.3 pips > max 1.5")
    assert [str(p["ticket"]) for p in double.server()["positions"]] == [sell] and double.server()["orders"] == []
    assert entry(b, action, maxSpreadPips=2.3, **extra).status == "filled"


def test_a_level_price_on_the_losing_side_or_past_the_final_tp_is_refused(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    below = entry(b, takeProfits=[{"tp": 1.0851, "closePercent": 50}])
    assert (below.status, below.retcode) == ("rejected", "take_profit_level_invalid")
    past = entry(b, tp=1.087, takeProfits=[{"tp": 1.0875, "closePercent": 50}])
    assert (past.status, past.retcode) == ("rejected", "take_profit_level_invalid")
    # A pending entry's levels are judged from its own entry price.
    limit = entry(b, "buy_limit", price=1.08, takeProfits=[{"tp": 1.0825, "closePercent": 50}])
    assert limit.status == "filled"
    assert double.server()["positions"] == []


@pytest.mark.parametrize("fields, named", [
    ({"trailDistancePips": 0}, "trailDistancePips"),
    ({"trailDistancePips": "10"}, "trailDistancePips"),
    ({"trailTriggerPips": 5}, "trailTriggerPips"),
    ({"breakevenTriggerPips": 2e6}, "breakevenTriggerPips"),
    ({"takeProfits": []}, "takeProfits"),
    ({"takeProfits": [{"tpPips": 10, "tp": 1.09, "closePercent": 50}]}, "takeProfits.0"),
    ({"takeProfits": [{"tpPips": 10, "closePercent": 0}]}, "takeProfits.0.closePercent"),
    ({"takeProfits": [{"tpPips": 10, "closePercent": 60}, {"tpPips": 20, "closePercent": 60}]}, "takeProfits"),
    ({"takeProfits": [{"tpPips": 10, "closePercent": 50, "extra": 1}]}, "takeProfits.0"),
    ({"closeOpposite": "yes"}, "closeOpposite"),
    ({"maxSpreadPips": -1}, "maxSpreadPips"),
])
def test_a_malformed_management_field_is_an_invalid_command_naming_it(double: Double, tmp_path, fields, named) -> None:
    report = entry(bridge(double, tmp_path), **fields)
    assert (report.status, report.retcode) == ("rejected", "bridge_invalid_command")
    assert f"{named}:" in report.message
    assert double.server()["positions"] == []


def test_close_opposite_on_a_pending_entry_is_not_used_by_it(double: Double, tmp_path) -> None:
    report = entry(bridge(double, tmp_path), "buy_limit", price=1.08, closeOpposite=True)
    assert (report.retcode, report.message) == ("bridge_invalid_command", "invalid command: closeOpposite: not used by buy_limit")


def test_a_pending_entry_is_managed_from_the_moment_it_fills(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    order = str(entry(b, "buy_limit", price=1.084, sl=1.082, breakevenTriggerPips=10).ticket)
    assert state(b)["awaiting"] == {order: {"symbol": "EURUSD", "asked": {"breakevenTriggerPips": 10.0}}}
    eurusd(double, 1.0838)  # the ask 1.0839 reaches the limit: the position opens with the order's ticket
    b.manager.look()
    assert [p["ticket"] for p in state(b)["positions"]] == [order] and state(b)["awaiting"] == {}
    eurusd(double, 1.085)
    b.manager.look()
    assert position(double, order)["sl"] == 1.0839  # breakeven at the fill price


def test_a_position_closed_by_its_stop_ends_its_management(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    entry(b, sl=1.084, trailDistancePips=20, trailTriggerPips=30)
    eurusd(double, 1.0839)
    b.manager.look()
    assert double.server()["positions"] == [] and state(b)["positions"] == []


def test_a_stop_moved_by_a_command_is_what_management_goes_on_from(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    ticket = str(entry(b, sl=1.083, breakevenTriggerPips=10).ticket)
    eurusd(double, 1.0861)
    assert b.handle(command("modify_sl", positionId=ticket, sl=1.0852, commandId="signal/m/account/acc-1")).status == "done"
    b.manager.look()
    # Breakeven (1.0851) is no better than the stop the command set: done without a move.
    assert [r["comment"][:3] for r in requests(double, SLTP)] == ["es:"] and len(requests(double, SLTP)[0]["comment"]) == 27
    assert b.manager.trades is not None
    assert position(double, ticket)["sl"] == 1.0852 and b.manager.trades.positions[ticket]["breakeven"]["done"] is True


def test_a_bridge_started_again_resumes_the_trail_from_its_file_and_the_broker(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    ticket = str(entry(b, sl=1.083, trailDistancePips=10, trailTriggerPips=0, trailStepPips=1).ticket)
    eurusd(double, 1.086)
    b.manager.look()
    moved = position(double, ticket)["sl"]
    # A crash while the next move was in flight: the state file says so, the broker did take it.
    saved = state(b)
    saved["positions"][0]["pending"] = {"kind": "modify", "sl": 1.0855, "tp": None, "cause": "trailing_stop", "trailActiveAt": 1.086}
    assert b.journal is not None
    b.journal.close()
    with open(b.journal.path + ".managed.json", "w", encoding="utf-8") as f:
        json.dump(saved, f)
    double.mt5.order_send({"action": SLTP, "symbol": "EURUSD", "position": int(ticket), "sl": 1.0855, "tp": 0.0})
    eurusd(double, 1.0866)  # the price moved while the bridge was down
    again = bridge(double, tmp_path)
    again.manager.look()
    after = state(again)["positions"][0]
    assert (moved, after["stopMoves"], after["trail"]["best"]) == (1.085, 3, 1.0866)
    assert position(double, ticket)["sl"] == 1.0856
    assert [r["sl"] for r in requests(double, SLTP)] == [1.085, 1.0855, 1.0856]


def test_an_unreadable_state_file_stops_the_bridge_rather_than_manage_on_a_guess(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    assert b.journal is not None
    path = b.journal.path + ".managed.json"
    b.journal.close()
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps({"version": 2, "positions": []}))
    with pytest.raises(ValueError, match="unreadable management state"):
        bridge(double, tmp_path)
    os.remove(path)
