"""The trade events' outbox and their sending: kept on disk until the service answers for each, resent in order,
never doubled by a restart, bounded; the book after hello, after each batch and at least every minute."""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

import pytest

from conftest import Double, Recorder, bridge, command
from es_mt5_bridge import trade_outbox
from es_mt5_bridge.bridge import Bridge
from es_mt5_bridge.ingress import IngressError
from es_mt5_bridge.trade_sender import BOOK_EVERY_S, UNSUPPORTED_RETRY_S, TradeSender, fit


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Desk(Recorder):
    """The service's trades call, answering from a script: an exception to raise, or a result per eventId."""

    def __init__(self) -> None:
        super().__init__()
        self.script: List[Any] = []

    def trades(self, events: List[Dict[str, Any]], book: Any = None, account: Any = None) -> Dict[str, Any]:
        self.trade_calls.append(json.loads(json.dumps({"events": events, "book": book})))
        step = self.script.pop(0) if self.script else "recorded"
        if isinstance(step, Exception):
            raise step
        if callable(step):
            return step(events)
        return {"events": [{"eventId": e["eventId"], "result": step} for e in events], "book": "recorded"}


def sender_for(b: Bridge, desk: Desk, clock: Clock) -> TradeSender:
    sender = TradeSender(desk, b.figures, lambda **f: None, clock)  # type: ignore[arg-type]
    b.watch.trade_sender = sender
    return sender


def trade(b: Bridge, n: int) -> None:
    for i in range(n):
        report = b.handle(command("buy", symbol="EURUSD", volume=1, commandId=f"c-{i}"))
        assert report is not None and report.status == "filled"
    b.watch.poll_trades()


def sent_ids(desk: Desk) -> List[str]:
    return [e["eventId"] for call in desk.trade_calls for e in call["events"]]


def pending(b: Bridge) -> List[str]:
    assert b.watch.trades is not None
    return [e["eventId"] for e in b.watch.trades.outbox.unacknowledged()]


def test_events_stay_on_disk_until_answered_and_go_in_order(double: Double, tmp_path) -> None:
    desk, clock = Desk(), Clock()
    b = bridge(double, tmp_path, desk)
    sender = sender_for(b, desk, clock)
    trade(b, 3)
    ids = pending(b)
    assert len(ids) == 3
    desk.script = [IngressError("POST /bridge/v1/trades", 503, "unavailable"),
                   lambda events: {"events": [{"eventId": events[0]["eventId"], "result": "recorded"},
                                              {"eventId": events[1]["eventId"], "result": "refused", "reason": "future"}]},
                   "duplicate"]
    b.watch.send_trades()
    assert pending(b) == ids  # 503: everything kept
    b.watch.send_trades()
    assert pending(b) == ids  # not yet due: the pause after a failure
    clock.now += 1.0
    b.watch.send_trades()
    assert pending(b) == ids[2:]  # recorded and refused are done with; the one not answered is kept
    clock.now += 1.0
    b.watch.send_trades()
    assert pending(b) == []
    assert sent_ids(desk) == ids + ids + ids[2:]
    # The book follows the batch.
    b.watch.send_trades()
    assert desk.trade_calls[-1]["book"] is not None and desk.trade_calls[-1]["events"] == []
    assert sender.book_due == clock.now + BOOK_EVERY_S
    # The file says the same as memory: nothing left to send.
    saved = json.loads(open(b.watch.trades.outbox.path).read())  # type: ignore[union-attr]
    assert saved["unacknowledged"] == []


def test_a_restart_resends_what_was_not_answered_and_doubles_nothing(double: Double, tmp_path) -> None:
    desk = Desk()
    b = bridge(double, tmp_path, desk)
    trade(b, 2)
    before = pending(b)
    b.journal.close()  # type: ignore[union-attr]
    again = bridge(double, tmp_path, desk)
    again.watch.poll_trades()
    assert pending(again) == before  # the same events, once each, from the file
    ticket = str(double.mt5.positions_get()[0].ticket)
    report = again.handle(command("close", positionId=ticket, commandId="c-close"))
    assert report is not None and report.status == "done"
    again.watch.poll_trades()
    assert pending(again)[:2] == before and len(pending(again)) == 3
    again.watch.send_trades()
    assert pending(again) == []
    again.journal.close()  # type: ignore[union-attr]
    third = bridge(double, tmp_path, desk)
    third.watch.poll_trades()
    third.watch.send_trades()
    assert pending(third) == []
    ids = sent_ids(desk)
    assert len(ids) == 3 and len(set(ids)) == 3 and ids[:2] == before


def test_a_batch_the_service_cannot_read_is_split_and_only_the_bad_event_dropped(double: Double, tmp_path) -> None:
    desk, clock = Desk(), Clock()
    b = bridge(double, tmp_path, desk)
    sender_for(b, desk, clock)
    trade(b, 3)
    ids = pending(b)
    bad = IngressError("POST /bridge/v1/trades", 400, "events.1.price: expected a number")
    desk.script = [bad, "recorded", bad, "recorded"]
    for _ in range(4):
        b.watch.send_trades()
    assert [c["events"][0]["eventId"] for c in desk.trade_calls] == [ids[0], ids[0], ids[1], ids[2]]
    assert [len(c["events"]) for c in desk.trade_calls] == [3, 1, 1, 1]
    assert pending(b) == []


def test_a_service_older_than_1_5_leaves_the_events_waiting(double: Double, tmp_path) -> None:
    desk, clock = Desk(), Clock()
    b = bridge(double, tmp_path, desk)
    sender_for(b, desk, clock)
    trade(b, 1)
    desk.script = [IngressError("POST /bridge/v1/trades", 404, "not found")]
    b.watch.send_trades()
    clock.now += UNSUPPORTED_RETRY_S - 1
    b.watch.send_trades()
    assert len(desk.trade_calls) == 1 and len(pending(b)) == 1
    clock.now += 1
    b.watch.send_trades()
    assert pending(b) == []


def test_the_book_goes_after_hello_and_at_least_every_minute(double: Double, tmp_path) -> None:
    desk, clock = Desk(), Clock()
    b = bridge(double, tmp_path, desk)
    sender = sender_for(b, desk, clock)
    b.watch.send_trades()
    assert len(desk.trade_calls) == 1 and desk.trade_calls[0]["book"]["positions"] == []
    b.watch.send_trades()
    clock.now += BOOK_EVERY_S - 1
    b.watch.send_trades()
    assert len(desk.trade_calls) == 1
    clock.now += 1
    b.watch.send_trades()
    assert len(desk.trade_calls) == 2
    sender.book_now()  # what hello does
    b.watch.send_trades()
    assert len(desk.trade_calls) == 3 and BOOK_EVERY_S < 60


def test_a_book_too_big_for_one_call_is_cut_and_says_truncated() -> None:
    position = {"ticket": "1", "symbol": "EURUSD", "side": "buy", "volume": 0.1, "openPrice": 1.1, "sl": None, "tp": None,
                "openedAt": "2026-01-01T00:00:00.000Z", "profit": 0.0, "swap": 0.0, "commission": 0.0}
    book = {"takenAt": "2026-01-01T00:00:00.000Z", "truncated": False, "positions": [position] * 1000,
            "orders": [dict(position, orderType="limit")] * 1000}
    cut = fit(book)
    assert cut["truncated"] is True and len(json.dumps(cut)) <= 240 * 1024 and len(cut["positions"]) >= 250
    small = dict(book, positions=[position], orders=[])
    assert fit(small) == small


def test_the_outbox_is_bounded_and_keeps_the_newest(double: Double, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trade_outbox, "MAX_EVENTS", 2)
    b = bridge(double, tmp_path)
    trade(b, 3)
    assert pending(b) == ["deal:70000002", "deal:70000003"]
    assert "trade_events_dropped" in b._diag.getvalue()  # type: ignore[attr-defined]


def test_an_unreadable_outbox_stops_the_bridge_rather_than_start_afresh(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    path = b.watch.trades.outbox.path  # type: ignore[union-attr]
    b.journal.close()  # type: ignore[union-attr]
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"state": {"startedAt"')
    with pytest.raises(ValueError):
        bridge(double, tmp_path)


def test_figures_ride_along(double: Double, tmp_path) -> None:
    desk = Desk()
    b = bridge(double, tmp_path, desk)
    seen: List[Optional[Dict[str, Any]]] = []
    original = desk.trades

    def spy(events: Any, book: Any = None, account: Any = None) -> Dict[str, Any]:
        seen.append(account)
        return original(events, book, account)

    desk.trades = spy  # type: ignore[method-assign]
    b.watch.send_trades()
    assert seen and seen[0] is not None and seen[0]["currency"] == "USD"


def test_a_book_never_goes_ahead_of_the_close_it_no_longer_lists(double: Double, tmp_path) -> None:
    desk, clock = Desk(), Clock()
    b = bridge(double, tmp_path, desk)
    sender_for(b, desk, clock)
    report = b.handle(command("buy", symbol="EURUSD", volume=1, sl=1.08, commandId="c-1"))
    assert report is not None and report.status == "filled"
    b.watch.poll_trades()
    b.watch.send_trades()  # the opening, then the book listing the position
    b.watch.send_trades()
    assert [len(c["book"]["positions"]) if c["book"] else None for c in desk.trade_calls] == [None, 1]
    double.set_quote("EURUSD", 1.0795, 1.0796)  # through the SL, between two looks
    b.watch.trade_sender.book_now()
    before = len(desk.trade_calls)
    for _ in range(3):
        b.watch.send_trades()
    after = desk.trade_calls[before:]
    assert [([e["type"] for e in c["events"]], c["book"] and c["book"]["positions"]) for c in after] == [
        (["position_closed"], None), ([], [])]
