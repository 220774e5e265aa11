from __future__ import annotations

import pytest

from conftest import command
from es_mt5_bridge.protocol import InvalidCommand, Report, parse_command


def test_when_a_full_command_arrives_then_every_field_is_read_and_unknown_fields_are_ignored() -> None:
    raw = command("buy_stop_limit", symbol="EURUSD.m", volume=0.1, price=1.09, stopLimitPrice=1.091, slPips=20,
                  tp=1.1, maxOpenPositions=3, expiry="2030-01-01T10:00:00Z", futureField={"x": 1})
    cmd = parse_command(raw)
    assert (cmd.action, cmd.symbol, cmd.volume, cmd.price, cmd.stop_limit_price) == ("buy_stop_limit", "EURUSD.m", 0.1, 1.09, 1.091)
    assert (cmd.sl_pips, cmd.tp, cmd.max_open_positions) == (20.0, 1.1, 3)
    assert cmd.expiry is not None and cmd.expiry.isoformat() == "2030-01-01T10:00:00+00:00"
    assert cmd.expires_at.tzinfo is not None


@pytest.mark.parametrize("change, message", [
    ({"action": "buy_everything"}, "action"),
    ({"seq": "1"}, "seq"),
    ({"expiresAt": "tomorrow"}, "expiresAt"),
    ({"expiresAt": "2030-01-01T10:00:00"}, "offset"),
    ({"volume": "0.1"}, "volume"),
    ({"side": "long"}, "side"),
    ({"maxOpenPositions": -1}, "maxOpenPositions"),
    ({"maxOpenPositionsPerSymbol": 1.5}, "maxOpenPositionsPerSymbol"),
])
def test_when_a_command_is_malformed_then_it_is_refused_with_the_field_named(change: dict, message: str) -> None:
    with pytest.raises(InvalidCommand, match=message):
        parse_command({**command("buy", symbol="EURUSD", volume=0.1), **change})


def test_when_a_report_has_a_long_message_then_it_is_cut_to_the_protocols_512_characters() -> None:
    body = Report(commandId="c", status="rejected", retcode=10016, message="x" * 600).to_json()
    assert len(body["message"]) == 512
    assert Report.from_json(body).retcode == 10016
