"""Puts the bridge (src) and the MetaTrader5 test double (tests/double) on sys.path, and gives each test a fresh
double: its own trade-server directory with the market of test/conformance/driver.ts (CONFORMANCE_SYMBOLS)."""
from __future__ import annotations

import importlib
import io
import json
import os
import sys
import threading
from http.server import ThreadingHTTPServer
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, List, Optional

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "src"), os.path.join(HERE, "double")]

SYMBOLS = [
    # name, digits, step, min, max, bid, spread, contract, base, profit, calc mode
    ("EURUSD", 5, 0.01, 0.01, 100, 1.085, 0.0001, 100000, "EUR", "USD", 0),
    ("GBPUSD", 5, 0.01, 0.01, 100, 1.27, 0.00015, 100000, "GBP", "USD", 0),
    ("USDJPY", 3, 0.01, 0.01, 100, 150.0, 0.012, 100000, "USD", "JPY", 0),
    ("XAUUSD", 2, 0.01, 0.01, 50, 2350.0, 0.3, 100, "XAU", "USD", 4),
    ("US30", 1, 0.1, 0.1, 50, 39000.0, 2.0, 1, "USD", "USD", 4),
]
SERVER_UTC_OFFSET = 7200


def market() -> Dict[str, Any]:
    return {
        "symbols": [dict(name=n, digits=d, volume_step=s, volume_min=lo, volume_max=hi, bid=b, spread=sp,
                         contract_size=c, currency_base=base, currency_profit=prof, calc_mode=cm, filling_mode=3,
                         expiration_mode=15)
                    for n, d, s, lo, hi, b, sp, c, base, prof, cm in SYMBOLS],
        "quotes": {}, "closed": [], "server_utc_offset": SERVER_UTC_OFFSET, "balance": 100000, "leverage": 100,
        "login": 5012345, "algo_trading": True,
    }


class Double:
    """The MetaTrader5 double plus the test's hand on its market."""

    def __init__(self, module: Any, directory: str) -> None:
        self.mt5 = module
        self.dir = directory
        self.market = market()
        self.write()

    def write(self) -> None:
        with open(os.path.join(self.dir, "market.json"), "w", encoding="utf-8") as f:
            json.dump(self.market, f)

    def set_quote(self, symbol: str, bid: float, ask: float, at: Optional[float] = None) -> None:
        """`at`: the UTC time (seconds) of the quote's last tick; without it the symbol ticks whenever it is read."""
        self.market["quotes"][symbol] = {"bid": bid, "ask": ask, **({"time": at} if at is not None else {})}
        self.write()

    def close_market(self, symbol: str) -> None:
        self.market["closed"].append(symbol)
        self.write()

    def server(self) -> Dict[str, Any]:
        path = os.path.join(self.dir, "server.json")
        if not os.path.exists(path):
            return {"positions": [], "orders": [], "history_orders": [], "deals": []}
        with open(path, encoding="utf-8") as f:
            return json.load(f)


@pytest.fixture()
def double(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Double:
    monkeypatch.setenv("MT5_DOUBLE_DIR", str(tmp_path))
    monkeypatch.delenv("MT5_DOUBLE_CRASH", raising=False)
    import MetaTrader5

    module = importlib.reload(MetaTrader5)
    d = Double(module, str(tmp_path))
    assert module.initialize()
    return d


def command(action: str, **fields: Any) -> Dict[str, Any]:
    """A command as the ingress delivers it (docs/bridge-protocol.md)."""
    now = datetime.now(timezone.utc)
    base: Dict[str, Any] = {
        "commandId": f"signal/sig_{action}_{now.timestamp()}/account/acc-1", "seq": 1, "signalId": "sig_1",
        "accountId": "acc-1", "action": action, "acceptedAt": now.isoformat().replace("+00:00", "Z"),
        "expiresAt": (now + timedelta(seconds=30)).isoformat().replace("+00:00", "Z"),
    }
    base.update(fields)
    return base


class Recorder:
    """The ingress as far as the bridge loop sees it, recording what was sent (reports, figures, events)."""

    def __init__(self) -> None:
        self.sent: List[Dict[str, Any]] = []
        self.figures: List[Dict[str, Any]] = []
        self.sent_events: List[List[Dict[str, Any]]] = []
        self.trade_calls: List[Dict[str, Any]] = []

    def trades(self, events: List[Dict[str, Any]], book: Any = None, account: Any = None) -> Dict[str, Any]:
        self.trade_calls.append(json.loads(json.dumps({"events": events, "book": book, "account": account})))
        return {"events": [{"eventId": e["eventId"], "result": "recorded"} for e in events],
                "book": "recorded" if book is not None else "absent"}

    def reports(self, reports: List[Dict[str, Any]], account: Any = None) -> List[Dict[str, Any]]:
        self.sent.extend(reports)
        if account is not None:
            self.figures.append(account)
        return [{"commandId": r["commandId"], "result": "recorded"} for r in reports]

    def events(self, events: List[Dict[str, Any]], account: Any = None) -> List[Dict[str, Any]]:
        self.sent_events.append(json.loads(json.dumps(events)))
        return [{"eventId": e["eventId"], "result": "recorded"} for e in events]


def bridge(double: Double, tmp_path: Any, ingress: Any = None) -> Any:
    """A bridge connected to the double, with its journal (and the files beside it) in tmp_path."""
    from es_mt5_bridge.bridge import Bridge
    from es_mt5_bridge.journal import Journal

    b = Bridge(double.mt5, ingress or Recorder(), lambda login: Journal(str(tmp_path / f"journal-{login}.jsonl"), lambda: "t"),
               server_utc_offset=SERVER_UTC_OFFSET, out=io.StringIO(), diag=io.StringIO())
    b.connect_terminal()
    b.account_id = "acc-1"
    return b


class StandIn:
    """A stand-in for the service on a free loopback port (an http.server request handler class of the test's)."""

    def serve(self, handler: Any) -> None:
        self.release = threading.Event()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def answer_json(handler: Any, body: Dict[str, Any]) -> None:
    """A 200 with a JSON body, from a stand-in for the service (an http.server request handler)."""
    raw = json.dumps(body).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(raw)))
    handler.end_headers()
    handler.wfile.write(raw)
