"""The copy-trading stop-out (protocol 1.4) on the MetaTrader5 double: when it trips, what it closes, once, durably,
never during a command, and its event until the service acknowledges it."""
from __future__ import annotations

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, Dict, List, Optional

import pytest

from conftest import Double, Recorder, answer_json, bridge, command
from es_mt5_bridge import __version__, stop_out
from es_mt5_bridge.bridge import Bridge
from es_mt5_bridge.ingress import Ingress, IngressError, Poll
from es_mt5_bridge.journal import Journal
from es_mt5_bridge.terminal import tag_of

ARMED = {"maxDrawdownPercent": 10, "drawdownResetAt": None, "figuresMaxAgeMs": 60_000}
RESET = "2026-11-25T10:00:00.000Z"


def mark_of(b: Bridge) -> Optional[Dict[str, Any]]:
    """The stop-out's file as a restarted bridge would read it."""
    with open(b.journal.path + ".stop-out.json", encoding="utf-8") as f:  # type: ignore[union-attr]
        return json.load(f)


def stop_out_file_exists(b: Bridge) -> bool:
    return os.path.exists(b.journal.path + ".stop-out.json")  # type: ignore[union-attr]


def open_book(double: Double, b: Bridge) -> Dict[str, str]:
    """At the peak (100 000 USD, as the drawdown guard saw it), then 10 lots of EURUSD bought at 1.0851 and a buy
    limit: every 0.0001 EURUSD falls costs 100 USD."""
    assert b.trader.marks.observe_peak(float(double.mt5.account_info().equity), None) == 100_000
    buy = b.handle(command("buy", symbol="EURUSD", volume=10, commandId="c-buy"))
    limit = b.handle(command("buy_limit", symbol="EURUSD", volume=1, price=1.07, commandId="c-limit"))
    assert buy is not None and limit is not None and (buy.status, limit.status) == ("filled", "filled")
    return {"position": str(buy.ticket), "order": str(limit.ticket)}


def eurusd(double: Double, bid: float, at: Optional[float] = None) -> None:
    double.set_quote("EURUSD", bid, round(bid + 0.0001, 5), at)


def closing_deals(double: Double, event_id: str) -> List[Dict[str, Any]]:
    return [d for d in double.server()["deals"] if d["comment"] == tag_of(event_id)]


def restart(b: Bridge, double: Double, tmp_path: Any, ingress: Any = None) -> Bridge:
    b.journal.close()  # type: ignore[union-attr]
    return bridge(double, tmp_path, ingress)


def test_when_the_bridge_says_hello_then_it_announces_stop_out_as_3_3_0_or_later(double: Double, tmp_path) -> None:
    body = bridge(double, tmp_path).hello_body()
    # The stop-out came with 3.3.0 (the service refuses entries to an older bridge while it is on).
    assert body["bridgeVersion"] == __version__
    assert tuple(int(n) for n in __version__.split(".")) >= (3, 3, 0)
    assert "stop_out" in body["capabilities"]


def test_when_equity_reaches_the_limit_then_it_trips_and_not_a_cent_before(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    b.watch.arm(ARMED)
    book = open_book(double, b)
    eurusd(double, 1.07511)  # 9 990 below the peak: 9.99 %
    b.watch.check()
    assert [str(p.ticket) for p in double.mt5.positions_get()] == [book["position"]]
    assert not stop_out_file_exists(b)
    eurusd(double, 1.0751)  # 10 000 below the peak: 10 %
    b.watch.check()
    assert double.mt5.positions_get() == () and double.mt5.orders_get() == ()
    saved = mark_of(b)
    assert saved is not None
    mark = saved["mark"]
    assert (mark["state"], mark["resetAt"], mark["equity"], mark["peak"], mark["currency"]) == ("done", None, 90_000, 100_000, "USD")
    assert (mark["positions"], mark["orders"]) == ([book["position"]], [book["order"]])
    assert [(r["ticket"], r["result"]) for r in mark["closed"]] == [(book["position"], "closed")]
    assert [(r["ticket"], r["result"]) for r in mark["cancelled"]] == [(book["order"], "cancelled")]
    # The whole volume, at market, by a deal opposite to the position on its ticket.
    [deal] = closing_deals(double, "stop-out/initial")
    assert (deal["position_id"], deal["type"], deal["volume"], deal["price"]) == (int(book["position"]), double.mt5.ORDER_TYPE_SELL, 10, 1.0751)


def test_when_a_positions_quote_is_stale_then_it_neither_trips_nor_moves_the_peak_and_says_so_once(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    b.watch.arm(ARMED)
    open_book(double, b)
    eurusd(double, 1.0701, at=time.time() - 120)  # 15 % down, on a quote two minutes old (the bound is 60 s)
    b.watch.check()
    b.watch.check()
    assert len(double.mt5.positions_get()) == 1 and not stop_out_file_exists(b)
    assert b._diag.getvalue().count("stop_out_figures_stale") == 1  # type: ignore[attr-defined]
    eurusd(double, 1.0701)  # the feed is back: the same fall, on a fresh quote
    b.watch.check()
    assert double.mt5.positions_get() == ()


def test_when_it_tripped_then_it_closed_each_ticket_once_and_never_trips_again_for_the_same_reset(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    b.watch.arm(ARMED)
    open_book(double, b)
    eurusd(double, 1.0751)
    b.watch.check()
    b.watch.check()
    # The trader opens a position by hand after the stop-out, and the market falls further: it is left alone, also
    # by a bridge that restarts.
    mine = b.handle(command("buy", symbol="EURUSD", volume=1, commandId="c-mine"))
    assert mine is not None and mine.status == "filled"
    eurusd(double, 1.0601)
    b.watch.check()
    b2 = restart(b, double, tmp_path)
    b2.watch.arm(ARMED)
    b2.watch.check()
    assert [str(p.ticket) for p in double.mt5.positions_get()] == [mine.ticket]
    assert len(closing_deals(double, "stop-out/initial")) == 1
    cancelled = [o for o in double.server()["history_orders"] if o["state"] == double.mt5.ORDER_STATE_CANCELED]
    assert len(cancelled) == 1
    saved = mark_of(b2)
    assert saved is not None and len(saved["mark"]["closed"]) == 1 and len(saved["unacknowledged"]) == 1


def test_when_the_owner_resets_the_drawdown_then_the_stop_out_is_armed_again_from_the_equity_then(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    b.watch.arm(ARMED)
    open_book(double, b)
    eurusd(double, 1.0751)
    b.watch.check()  # tripped: balance 90 000
    again = b.handle(command("buy", symbol="EURUSD", volume=10, commandId="c-again"))  # at 1.0752: equity 89 900
    assert again is not None and again.status == "filled"
    b.watch.arm({**ARMED, "drawdownResetAt": RESET})
    b.watch.check()
    assert b.trader.marks.peak == 89_900 and len(double.mt5.positions_get()) == 1
    eurusd(double, 1.0661)  # 9 000 below the new peak: 10.01 %
    b.watch.check()
    assert double.mt5.positions_get() == ()
    assert len(closing_deals(double, f"stop-out/{RESET}")) == 1
    saved = mark_of(b)
    assert saved is not None
    assert (saved["mark"]["eventId"], saved["mark"]["resetAt"]) == (f"stop-out/{RESET}", RESET)
    assert [e["eventId"] for e in saved["unacknowledged"]] == ["stop-out/initial", f"stop-out/{RESET}"]


class ScriptedIngress(Recorder):
    """Hello and long-poll answers as the service gives them: `stopOut` in the hello, another in the first poll, none in
    the second; it records the bridge's settings at each poll and stops the bridge at the third."""

    def __init__(self, stop: Any) -> None:
        super().__init__()
        self.stop = stop
        self.bridge: Optional[Bridge] = None
        self.seen: List[Any] = []

    def hello(self, body: Dict[str, Any]) -> Dict[str, Any]:
        return {"accountId": "acc-1", "protocolVersion": "1.4", "serverTime": None, "stopOut": ARMED}

    def commands(self, wait_ms: int) -> Poll:
        assert self.bridge is not None
        self.seen.append(self.bridge.watch.settings)
        if len(self.seen) == 1:
            return Poll([], None, False, {**ARMED, "maxDrawdownPercent": 20})
        if len(self.seen) == 2:
            return Poll([], None, False, None)
        self.stop()
        return Poll([], None, False, None)


def test_when_the_answers_carry_stop_out_then_the_bridge_arms_and_when_one_lacks_it_then_it_disarms(double: Double, tmp_path) -> None:
    holder: Dict[str, Bridge] = {}
    ingress = ScriptedIngress(lambda: setattr(holder["b"], "running", False))
    b = Bridge(double.mt5, ingress, lambda login: Journal(str(tmp_path / f"journal-{login}.jsonl"), lambda: "t"),
               server_utc_offset=7200)
    holder["b"] = ingress.bridge = b  # type: ignore[assignment]
    b.run()
    assert [s and s.max_drawdown_percent for s in ingress.seen] == [10, 20, None]
    # Disarmed: a fall far past the limit closes nothing.
    open_book(double, b)
    eurusd(double, 1.0601)
    b.watch.check()
    # The buy limit at 1.07 filled on the way down, as on a trade server; nothing was closed.
    assert len(double.mt5.positions_get()) == 2 and not stop_out_file_exists(b)


def test_when_a_malformed_stop_out_arrives_then_the_bridge_keeps_what_it_had(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    b.watch.arm(ARMED)
    for bad in ({**ARMED, "maxDrawdownPercent": 0}, {**ARMED, "maxDrawdownPercent": 101}, {**ARMED, "figuresMaxAgeMs": 0},
                {**ARMED, "drawdownResetAt": "yesterday"}, "on"):
        b.watch.arm(bad)
        assert b.watch.settings is not None and b.watch.settings.max_drawdown_percent == 10
    assert b._diag.getvalue().count("stop_out_invalid") == 5  # type: ignore[attr-defined]


class Crash(Exception):
    """The bridge dies here (the mark is on disk, the closes are not all sent)."""


def test_when_the_bridge_dies_between_the_mark_and_the_closes_then_a_restart_finishes_the_listed_tickets_only(
        double: Double, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    b = bridge(double, tmp_path)
    b.watch.arm(ARMED)
    book = open_book(double, b)
    other = b.handle(command("sell", symbol="GBPUSD", volume=1, commandId="c-other"))
    assert other is not None and other.status == "filled"
    eurusd(double, 1.0741)
    real_send = double.mt5.order_send
    calls: List[Dict[str, Any]] = []

    def dies_at_the_second_close(request: Dict[str, Any]) -> Any:
        calls.append(request)
        if len(calls) == 3:  # the order was cancelled, one position closed, then the bridge dies
            raise Crash()
        return real_send(request)

    monkeypatch.setattr(double.mt5, "order_send", dies_at_the_second_close)
    assert b.watch.stop_out is not None
    with pytest.raises(Crash):
        b.watch.stop_out.check(b.watch.settings)
    monkeypatch.setattr(double.mt5, "order_send", real_send)
    saved = mark_of(b)
    assert saved is not None and saved["mark"]["state"] == "closing" and saved["unacknowledged"] == []
    assert sorted(saved["mark"]["positions"]) == sorted([book["position"], str(other.ticket)])
    [still_open] = double.mt5.positions_get()
    # While the bridge is down the trader opens a position by hand; the restarted bridge has no stopOut yet.
    mine = b.handle(command("buy", symbol="USDJPY", volume=1, commandId="c-mine"))
    assert mine is not None and mine.status == "filled"
    b2 = restart(b, double, tmp_path)
    b2.watch.check()
    assert [str(p.ticket) for p in double.mt5.positions_get()] == [mine.ticket]
    assert [d["position_id"] for d in closing_deals(double, "stop-out/initial")] == [int(saved["mark"]["positions"][0]), still_open.ticket]
    done = mark_of(b2)
    assert done is not None and done["mark"]["state"] == "done"
    assert sorted((r["ticket"], r["result"]) for r in done["mark"]["closed"]) == sorted(
        [(book["position"], "closed"), (str(other.ticket), "closed")])
    assert [(r["ticket"], r["result"]) for r in done["mark"]["cancelled"]] == [(book["order"], "cancelled")]
    [event] = done["unacknowledged"]
    assert len(event["closed"]) == 2 and len(event["cancelled"]) == 1


class SpyLock:
    """The bridge's lock, telling when the watch's thread found it held by another thread (it then waits its turn)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self.watch_blocked = threading.Event()

    def __enter__(self) -> None:
        if not self._lock.acquire(blocking=False):
            if threading.current_thread().name == "stop-out-watch":
                self.watch_blocked.set()
            self._lock.acquire()

    def __exit__(self, *exc: Any) -> None:
        self._lock.release()


def test_when_a_command_is_executing_then_the_watch_waits_for_it_and_trips_after(double: Double, tmp_path, monkeypatch) -> None:
    b = bridge(double, tmp_path)
    spy = SpyLock()
    b.lock = b.watch.lock = spy  # type: ignore[assignment]
    b.watch.arm(ARMED)
    book = open_book(double, b)
    real_execute = b.trader.execute
    during: Dict[str, Any] = {}

    def slow_command(cmd: Any, recovering: bool) -> Any:
        # The market falls past the limit while this command holds the executor.
        eurusd(double, 1.0741)
        # The flag was cleared before the watch started: the watch may already be waiting (it tries the lock
        # more often since it also looks for trade events), and clearing it here would lose that.
        during["blocked"] = spy.watch_blocked.wait(10)
        during["positions"] = len(double.mt5.positions_get())
        during["marked"] = stop_out_file_exists(b)
        return real_execute(cmd, recovering)

    monkeypatch.setattr(b.trader, "execute", slow_command)
    spy.watch_blocked.clear()
    b.watch.start()
    try:
        b._run_batch([command("sell", symbol="GBPUSD", volume=1, commandId="c-during")])
        deadline = time.monotonic() + 10
        while not (stop_out_file_exists(b) and (mark_of(b) or {}).get("mark", {}).get("state") == "done"):
            assert time.monotonic() < deadline, "the stop-out did not happen after the command"
            time.sleep(0.01)
    finally:
        b.watch.stop()
    assert during == {"blocked": True, "positions": 1, "marked": False}
    saved = mark_of(b)
    assert saved is not None
    during_ticket = next(d["position_id"] for d in double.server()["deals"] if d["comment"] == tag_of("c-during"))
    # The command's own position was open when the stop-out listed the account, after the command.
    assert sorted(saved["mark"]["positions"]) == sorted([book["position"], str(during_ticket)])
    assert double.mt5.positions_get() == ()


class FlakyDesk(Recorder):
    """The service's reports call for events: down, then answering without acknowledging them, then recording them."""

    def __init__(self, answer: str) -> None:
        super().__init__()
        self.answer = answer

    def events(self, events: List[Dict[str, Any]], account: Any = None) -> List[Dict[str, Any]]:
        self.sent_events.append(json.loads(json.dumps(events)))
        if self.answer == "down":
            raise IngressError("POST /bridge/v1/reports", 503, "unavailable")
        if self.answer == "silent":
            return []
        return [{"eventId": e["eventId"], "result": self.answer} for e in events]


def test_when_the_service_does_not_acknowledge_the_event_then_it_is_kept_on_disk_and_resent_with_the_same_id(double: Double, tmp_path) -> None:
    down = FlakyDesk("down")
    b = bridge(double, tmp_path, down)
    b.watch.arm(ARMED)
    book = open_book(double, b)
    eurusd(double, 1.0751)
    b.watch.check()
    b.watch.send_events()
    b.watch.send_events()  # not due yet: the bridge waits before it resends
    assert len(down.sent_events) == 1
    silent = FlakyDesk("silent")
    b2 = restart(b, double, tmp_path, silent)
    b2.watch.send_events()
    duplicate = FlakyDesk("duplicate")
    b3 = restart(b2, double, tmp_path, duplicate)
    b3.watch.send_events()
    b3.watch.send_events()
    sent = down.sent_events + silent.sent_events + duplicate.sent_events
    assert len(sent) == 3 and all(batch == sent[0] for batch in sent)
    [event] = sent[0]
    assert {k: event[k] for k in ("type", "eventId", "equity", "peak", "drawdownPercent", "maxDrawdownPercent", "currency")} == {
        "type": "stop_out", "eventId": "stop-out/initial", "equity": 90_000, "peak": 100_000, "drawdownPercent": 10.0,
        "maxDrawdownPercent": 10, "currency": "USD"}
    assert [(c["ticket"], c["result"]) for c in event["closed"]] == [(book["position"], "closed")]
    assert [(c["ticket"], c["result"]) for c in event["cancelled"]] == [(book["order"], "cancelled")]
    saved = mark_of(b3)
    assert saved is not None and saved["unacknowledged"] == [] and saved["mark"]["state"] == "done"
    b4 = restart(b3, double, tmp_path, Recorder())
    b4.watch.send_events()
    assert b4.ingress.sent_events == []  # type: ignore[attr-defined]


class Service(BaseHTTPRequestHandler):
    """The service's side of protocol 1.4 as far as the wire goes: stopOut on the long-poll, events on reports."""

    seen: List[Dict[str, Any]] = []

    def do_GET(self) -> None:  # noqa: N802
        answer_json(self, {"commands": [], "serverTime": "2026-11-25T12:00:00.000Z", "stopOut": ARMED})

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Service.seen.append({"path": self.path, "body": body})
        answer_json(self, {"results": [], "events": [{"eventId": e["eventId"], "result": "recorded"} for e in body["events"]]})

    def log_message(self, *args: Any) -> None:
        pass


def test_when_the_bridge_talks_to_the_service_then_stop_out_and_events_travel_as_protocol_1_4_says() -> None:
    server = HTTPServer(("127.0.0.1", 0), Service)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        ingress = Ingress(f"http://127.0.0.1:{server.server_port}", "brg_secret")
        assert ingress.commands(100).stop_out == ARMED
        event = {"type": "stop_out", "eventId": "stop-out/initial", "closed": [], "cancelled": []}
        figures = {"balance": 1.0, "equity": 1.0, "margin": 0.0, "freeMargin": 1.0, "currency": "USD"}
        assert ingress.events([event], figures) == [{"eventId": "stop-out/initial", "result": "recorded"}]
        assert Service.seen == [{"path": "/bridge/v1/reports", "body": {"reports": [], "events": [event], "account": figures}}]
    finally:
        server.shutdown()
        server.server_close()


def refusing(double: Double, monkeypatch: pytest.MonkeyPatch, retcodes: List[int]) -> List[Dict[str, Any]]:
    """The trade server answers the next closes of a position (deals on a position ticket) with these retcodes, as
    order_send does (an OrderSendResult with nothing executed), then executes them; every close request is listed."""
    real_send = double.mt5.order_send
    closes: List[Dict[str, Any]] = []

    def send(request: Dict[str, Any]) -> Any:
        if request.get("action") == double.mt5.TRADE_ACTION_DEAL and request.get("position"):
            closes.append(request)
            if retcodes:
                code = retcodes.pop(0)
                return double.mt5.OrderSendResult(code, 0, 0, 0.0, 0.0, 0.0, 0.0, f"refused {code}", 0, 0, None)
        return real_send(request)

    monkeypatch.setattr(double.mt5, "order_send", send)
    return closes


def tripped_with(double: Double, tmp_path: Any, monkeypatch: pytest.MonkeyPatch, retcodes: List[int]) -> Any:
    b = bridge(double, tmp_path)
    b.watch.arm(ARMED)
    open_book(double, b)
    closes = refusing(double, monkeypatch, retcodes)
    pauses: List[float] = []
    assert b.watch.stop_out is not None
    monkeypatch.setattr(b.watch.stop_out, "_sleep", pauses.append)
    eurusd(double, 1.0751)
    b.watch.check()
    saved = mark_of(b)
    assert saved is not None and saved["mark"]["state"] == "done"
    return closes, pauses, saved["mark"]["closed"], b


@pytest.mark.parametrize("retcode", [10004, 10020, 10021, 10012, 10031])
def test_when_a_close_is_refused_for_a_transient_reason_then_it_is_sent_again_after_a_pause_and_closes(
        double: Double, tmp_path, monkeypatch: pytest.MonkeyPatch, retcode: int) -> None:
    closes, pauses, closed, _ = tripped_with(double, tmp_path, monkeypatch, [retcode])
    assert len(closes) == 2 and pauses == [stop_out.BACKOFF_S]
    assert double.mt5.positions_get() == ()
    assert [r["result"] for r in closed] == ["closed"]


def test_when_every_attempt_is_refused_transiently_then_it_stops_after_the_bound_and_reports_failed(
        double: Double, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    closes, pauses, closed, b = tripped_with(double, tmp_path, monkeypatch, [10004] * 10)
    assert len(closes) == stop_out.ATTEMPTS and pauses == [stop_out.BACKOFF_S, 2 * stop_out.BACKOFF_S]
    [result] = closed
    assert result["result"] == "failed" and result["message"] == f"10004 refused 10004 (after {stop_out.ATTEMPTS} attempts)"
    assert len(double.mt5.positions_get()) == 1
    assert b._diag.getvalue().count("stop_out_retry") == 2  # type: ignore[attr-defined]


def test_when_a_close_is_refused_for_a_reason_of_substance_then_it_is_sent_once(
        double: Double, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    closes, pauses, closed, _ = tripped_with(double, tmp_path, monkeypatch, [10018])
    assert len(closes) == 1 and pauses == []
    assert [(r["result"], r["message"]) for r in closed] == [("failed", "10018 refused 10018")]


def test_when_the_terminal_reports_equity_nan_then_it_neither_trips_nor_touches_the_peak(
        double: Double, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    b = bridge(double, tmp_path)
    b.watch.arm(ARMED)
    open_book(double, b)
    real_info = double.mt5.account_info
    monkeypatch.setattr(double.mt5, "account_info", lambda: real_info()._replace(equity=float("nan")))
    b.watch.check()
    b.watch.check()
    assert len(double.mt5.positions_get()) == 1 and not stop_out_file_exists(b)
    assert b.trader.marks.peak == 100_000
    # Nor does it restart the peak for an owner's reset: that waits for a real reading.
    assert b.trader.marks.observe_peak(float("nan"), RESET) == 100_000 and b.trader.marks.reset_applied is None
    assert b._diag.getvalue().count("equity is unreadable") == 1  # type: ignore[attr-defined]
    monkeypatch.setattr(double.mt5, "account_info", real_info)
    eurusd(double, 1.0751)  # 10 % below the peak, on a real reading
    b.watch.check()
    assert double.mt5.positions_get() == ()
