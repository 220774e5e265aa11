from __future__ import annotations

import io
import json
import threading
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, Dict, List

import pytest

from conftest import Double, Recorder, bridge, command
from es_mt5_bridge import __version__
from es_mt5_bridge.bridge import Bridge
from es_mt5_bridge.ingress import Ingress, IngressError, Poll
from es_mt5_bridge.journal import Journal
from es_mt5_bridge.protocol import parse_command


def test_when_a_command_is_delivered_again_then_it_is_answered_from_the_journal_and_not_executed(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    raw = command("buy", symbol="EURUSD", volume=0.1)
    first = b.handle(raw)
    again = b.handle(raw)
    assert first is not None and again == first
    assert len(double.mt5.positions_get()) == 1
    b.journal.close()  # the bridge restarts on the same journal
    b2 = bridge(double, tmp_path)
    assert b2.handle(raw) == first
    assert len(double.mt5.positions_get()) == 1


def test_when_the_bridge_reports_then_the_account_figures_go_with_them_and_a_heartbeat_sends_them_alone(double: Double, tmp_path) -> None:
    recorder = Recorder()
    b = bridge(double, tmp_path, recorder)
    b.send_reports([b.handle(command("buy", symbol="EURUSD", volume=1))])  # type: ignore[list-item]
    figures = recorder.figures[-1]
    assert set(figures) == {"balance", "equity", "margin", "freeMargin", "currency"}
    # 1 lot bought at the ask and valued at the bid: equity is the spread below the balance, the margin is used.
    assert figures["equity"] < figures["balance"] and figures["margin"] > 0 and figures["currency"] == "USD"
    assert b.hello_body()["account"] == b.figures()
    # Nothing to report: no heartbeat before its interval, one after it, with the figures and no report.
    sent = len(recorder.sent)
    b.heartbeat_s = 3600.0
    assert b.heartbeat_if_due() is False
    b.heartbeat_s = 0.0
    assert b.heartbeat_if_due() is True
    assert (len(recorder.sent), recorder.figures[-1]) == (sent, b.figures())


def _report(b: Bridge, guards: Dict[str, Any]) -> Any:
    report = b.handle(command("buy", symbol="EURUSD", volume=1, lossGuards=guards))
    assert report is not None
    return report


def test_when_the_bridge_restarts_on_a_bad_day_then_the_loss_guard_still_measures_from_the_day_opening(double: Double, tmp_path) -> None:
    guards = {"dailyLossAmount": 5, "timezone": "Europe/London"}
    b = bridge(double, tmp_path)
    # The first entry sees the day's opening equity and passes; its spread costs 10 USD at once, past the 5 USD limit.
    assert _report(b, guards).status == "filled"
    assert _report(b, guards).retcode == "risk_daily_loss_limit"
    opening = b.trader.marks.day_open
    b.journal.close()  # the bridge restarts on the same journal, with the day's loss on the account
    b2 = bridge(double, tmp_path)
    assert b2.trader.marks.day_open == opening
    assert _report(b2, guards).retcode == "risk_daily_loss_limit"


def test_when_a_command_is_past_its_expiry_then_it_is_reported_expired_and_nothing_is_sent(double: Double, tmp_path) -> None:
    past = (datetime.now(timezone.utc) - timedelta(seconds=1)).isoformat()
    report = bridge(double, tmp_path).handle(command("buy", symbol="EURUSD", volume=0.1, expiresAt=past))
    assert report is not None and report.status == "expired"
    assert double.mt5.positions_get() == ()


def test_when_the_service_clock_is_ahead_then_expiry_is_judged_by_it(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    b.skew_s = 60.0
    soon = (datetime.now(timezone.utc) + timedelta(seconds=30)).isoformat()
    report = b.handle(command("buy", symbol="EURUSD", volume=0.1, expiresAt=soon))
    assert report is not None and report.status == "expired"


def test_when_a_fill_happened_before_a_crash_and_the_command_is_now_expired_then_the_fill_is_reported(double: Double, tmp_path) -> None:
    b = bridge(double, tmp_path)
    raw = command("buy", symbol="EURUSD", volume=0.1)
    b.journal.record_intent(raw["commandId"])
    filled = b.trader.execute(parse_command(raw), recovering=False)
    raw["expiresAt"] = (datetime.now(timezone.utc) - timedelta(seconds=1)).isoformat()
    report = b.handle(raw)
    assert report is not None and (report.status, report.ticket) == ("filled", filled.ticket)
    assert len(double.mt5.positions_get()) == 1


@pytest.mark.parametrize("raw, code", [
    (command("buy", symbol="EURUSD", volume=0.1, accountId="acc-2"), "bridge_wrong_account"),
    (command("buy", symbol="EURUSD", volume="lots"), "bridge_invalid_command"),
])
def test_when_a_command_is_not_for_this_account_or_unreadable_then_the_bridge_refuses_it(double: Double, tmp_path, raw, code) -> None:
    report = bridge(double, tmp_path).handle(raw)
    assert report is not None and (report.status, report.retcode) == ("rejected", code)


def test_when_a_batch_arrives_out_of_order_then_it_runs_in_seq_order_and_every_report_is_sent(double: Double, tmp_path) -> None:
    recorder = Recorder()
    b = bridge(double, tmp_path, recorder)
    batch = [command("buy", symbol="EURUSD", volume=v, seq=s, commandId=f"c{s}") for s, v in ((3, 0.03), (1, 0.01), (2, 0.02))]
    b._run_batch(batch)
    opened = sorted(double.mt5.positions_get(), key=lambda p: p.ticket)
    assert [p.volume for p in opened] == [0.01, 0.02, 0.03]
    assert [r["commandId"] for r in recorder.sent] == ["c1", "c2", "c3"]


def test_when_the_bridge_says_hello_then_it_sends_platform_version_and_the_symbols_volume_rules(double: Double, tmp_path) -> None:
    body = bridge(double, tmp_path).hello_body()
    assert (body["platform"], body["bridgeVersion"]) == ("mt5", __version__)
    us30 = next(s for s in body["symbols"] if s["name"] == "US30")
    assert us30 == {"name": "US30", "digits": 1, "pipSize": 0.1, "volumeStep": 0.1, "volumeMin": 0.1, "volumeMax": 50.0}
    assert body["account"] == {"balance": 100000.0, "equity": 100000.0, "margin": 0.0, "freeMargin": 100000.0, "currency": "USD"}


class Handler(BaseHTTPRequestHandler):
    seen: List[Dict[str, Any]] = []
    status = 200
    superseded = False

    def _answer(self, body: Dict[str, Any]) -> None:
        raw = json.dumps(body).encode()
        self.send_response(Handler.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        if Handler.status == 429:
            self.send_header("Retry-After", "7")
        self.end_headers()
        self.wfile.write(raw)

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers["Content-Length"])
        Handler.seen.append({"path": self.path, "auth": self.headers["Authorization"], "body": json.loads(self.rfile.read(length))})
        self._answer({"accountId": "acc-1", "protocolVersion": 1, "serverTime": "2026-11-23T12:00:00.000Z"}
                     if self.path.endswith("hello") else {"results": [], "error": "Missing or invalid bridge token"})

    def do_GET(self) -> None:  # noqa: N802
        Handler.seen.append({"path": self.path, "auth": self.headers["Authorization"]})
        self._answer({"commands": [], "serverTime": "2026-11-23T12:00:00.000Z", **({"superseded": True} if Handler.superseded else {})})

    def log_message(self, *args: Any) -> None:
        pass


def test_when_the_bridge_calls_the_ingress_then_it_sends_its_token_and_4xx_is_not_retried_but_5xx_is() -> None:
    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        ingress = Ingress(f"http://127.0.0.1:{server.server_port}/", "brg_secret")
        assert ingress.hello({"platform": "mt5"})["accountId"] == "acc-1"
        assert ingress.commands(100) == ([], "2026-11-23T12:00:00.000Z", False, None)
        Handler.superseded = True
        assert ingress.commands(100)[2] is True
        Handler.superseded = False
        assert [s["path"] for s in Handler.seen] == ["/bridge/v1/hello"] + ["/bridge/v1/commands?waitMs=100"] * 2
        assert {s["auth"] for s in Handler.seen} == {"Bearer brg_secret"}
        assert "brg_secret" not in repr(ingress)
        Handler.status = 401
        with pytest.raises(IngressError) as refused:
            ingress.reports([{"commandId": "c"}])
        assert (refused.value.status, refused.value.retryable) == (401, False)
        Handler.status = 503
        with pytest.raises(IngressError) as busy:
            ingress.reports([{"commandId": "c"}])
        assert busy.value.retryable
        Handler.status = 429
        with pytest.raises(IngressError) as limited:
            ingress.commands(100)
        assert (limited.value.retryable, limited.value.retry_after) == (True, 7.0)
    finally:
        Handler.status = 200
        server.shutdown()
        server.server_close()
    with pytest.raises(IngressError) as down:
        Ingress(f"http://127.0.0.1:{server.server_port}", "t").commands(100)
    assert (down.value.status, down.value.retryable) == (None, True)


class FlakyTerminalIngress(Recorder):
    """Hands out one buy; the first time, the terminal goes away while the bridge is about to trade it."""

    def __init__(self, double: Double, stop: Any) -> None:
        super().__init__()
        self.double = double
        self.stop = stop
        self.hellos = 0
        self.polls = 0
        self.raw = command("buy", symbol="EURUSD", volume=0.1)

    def hello(self, body: Dict[str, Any]) -> Dict[str, Any]:
        self.hellos += 1
        return {"accountId": "acc-1", "protocolVersion": 1, "serverTime": None}

    def commands(self, wait_ms: int) -> Any:
        self.polls += 1
        if self.polls == 1:
            self.double.mt5.shutdown()  # the terminal closes
        if self.sent:
            self.stop()
            return Poll([], None, False, None)
        return Poll([self.raw], None, False, None)


def test_when_the_terminal_goes_away_mid_command_then_the_bridge_reconnects_says_hello_again_and_trades_once(double: Double, tmp_path) -> None:
    holder: Dict[str, Bridge] = {}
    ingress = FlakyTerminalIngress(double, lambda: setattr(holder["b"], "running", False))
    b = Bridge(double.mt5, ingress, lambda login: Journal(str(tmp_path / f"journal-{login}.jsonl"), lambda: "t"),
               server_utc_offset=7200, out=io.StringIO(), diag=io.StringIO(), backoff_max_s=0.01)
    holder["b"] = b
    b.run()
    assert ingress.hellos == 2
    assert [(r["commandId"], r["status"]) for r in ingress.sent] == [(ingress.raw["commandId"], "filled")]
    assert len(double.mt5.positions_get()) == 1
    assert "terminal_unavailable" in b._diag.getvalue()  # type: ignore[attr-defined]
